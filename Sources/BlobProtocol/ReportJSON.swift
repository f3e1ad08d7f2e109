import BlobStore
import Foundation

/// The small documents besides metadata: `GET /v1/health` and the verify report.
package enum ReportJSON {
    /// `{"status":"ok"}`, blobd's answer to `GET /v1/health`.
    package static let healthy: [UInt8] = Array(#"{"status":"ok"}"#.utf8)

    private struct Health: Decodable { var status: String }

    /// Whether a health answer says `ok`.
    package static func isHealthy(_ bytes: [UInt8]) -> Bool {
        (try? JSONDecoder().decode(Health.self, from: Data(bytes)).status) == "ok"
    }

    /// `GET`/`POST /v1/stores/{store}/verify`: the report's members with sorted keys, paths unescaped.
    package static func encode(_ report: VerificationReport) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(report))
    }

    /// The report in a verify answer.
    package static func decodeReport(_ bytes: [UInt8]) throws -> VerificationReport {
        try JSONDecoder().decode(VerificationReport.self, from: Data(bytes))
    }
}
