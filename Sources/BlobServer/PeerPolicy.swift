import BlobSystem

#if canImport(Glibc)
import Glibc
#endif

/// Who may talk to the daemon: its own user, root, and members (by effective gid) of one allowed group.
struct PeerPolicy: Sendable {
    let ownUserID: UInt32
    let allowedGroup: UInt32?

    func allows(_ peer: PeerCredentials) -> Bool { allows(userID: peer.userID, groupID: peer.groupID) }

    /// The rule itself, on plain ids (`PeerCredentials` has no public initializer to test with).
    func allows(userID: UInt32, groupID: UInt32) -> Bool {
        userID == ownUserID || userID == 0 || (allowedGroup != nil && groupID == allowedGroup)
    }
}
