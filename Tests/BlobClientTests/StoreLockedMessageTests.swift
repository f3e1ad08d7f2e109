import BlobStore
import Foundation
import Testing

@testable import BlobClient

/// `503 store_locked` from blobd (another process holds a store it serves) reads as one sentence.
@Suite struct StoreLockedMessageTests {
    @Test func theDaemonsStoreLockedBecomesOneSentenceNamingThePid() {
        let daemonSays = BlobStoreError.storeLocked(path: "/srv/blobs/images/.lock", holder: "pid 4242").description
        #expect(daemonSays == "/srv/blobs/images/.lock is in use by another process (pid 4242); wait for it to finish, or stop it")
        let body = Array(#"{"error":{"code":"store_locked","message":"\#(daemonSays)"}}"#.utf8)
        let error = ErrorMapping.error(status: 503, headers: nil, body: body, context: .init(store: "images"))
        #expect(error as? BlobStoreError == .storeLocked(path: "store 'images' (served by blobd)", holder: "pid 4242"))
        #expect(
            "\(error)" == "store 'images' (served by blobd) is in use by another process (pid 4242); wait for it to finish, or stop it")
    }

    @Test func aStoreHeldByBlobdSaysToGoThroughIt() {
        #expect(
            BlobStoreError.storeLocked(path: "/srv/blobs/images/.lock", holder: "blobd, pid 7").description
                == "/srv/blobs/images/.lock is held by blobd, pid 7; go through blobd, or stop it")
    }
}
