import BlobStore
import Foundation
import S3BlobStore

/// The S3 gateway the `.s3` store kind and the S3 store tests use: the one `.ci/ceph up DIR` brought
/// up, when `DIR/env` was sourced into the test's environment (`AWS_ENDPOINT_URL`,
/// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `BLOB_S3_BUCKET`).
package enum S3Gateway {
    /// The configuration and bucket, or `nil` when the environment names no gateway.
    package static let target: (configuration: S3Configuration, bucket: String)? = {
        let environment = ProcessInfo.processInfo.environment
        guard environment["AWS_ENDPOINT_URL"] != nil, let bucket = environment["BLOB_S3_BUCKET"],
            let configuration = try? S3Configuration.resolve()
        else { return nil }
        return (configuration, bucket)
    }()

    /// Why S3 tests did not run.
    package static let skipReason =
        "S3 store tests skipped: no gateway in the environment (run `.ci/ceph up DIR` and source DIR/env: AWS_ENDPOINT_URL, keys, BLOB_S3_BUCKET)"

    /// The store name every fresh store gets (each under a key prefix of its own).
    package static let storeName = "behaviour"

    /// The key prefix of a fresh store: `t/` and 12 random hex digits, so tests never see each other's objects.
    package static func freshPrefix() -> String {
        "t/" + String(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12)).lowercased()
    }

    /// The longest identifier a fresh store holds: 1,024 bytes less `t/XXXXXXXXXXXX/behaviour/`.
    package static var maximumIdentifierByteCount: Int { 1024 - (freshPrefix() + "/" + storeName + "/").utf8.count }

    /// A store under a fresh prefix, or `nil` without a gateway.
    package static func freshStore(name: String = storeName) throws -> S3BlobStore? {
        guard let target else { return nil }
        return try S3BlobStore(name: name, bucket: target.bucket, keyPrefix: freshPrefix(), configuration: target.configuration)
    }
}
