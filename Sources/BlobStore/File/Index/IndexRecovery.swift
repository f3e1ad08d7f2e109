internal import BlobSystem
import Foundation

extension BucketIndex {
    /// Brings the bucket tree back in line with the manifest after a crash, when the store opens for
    /// writing, in a barrier before anything else uses the store: finishes a pending split, removes a
    /// bucket folder the manifest does not name, and writes a manifest where there is none yet.
    func recoverAtOpen() throws {
        if map.pendingSplit != nil { try finishSplit() }
        // A power cut after a split created its folder but before the manifest named it leaves that
        // folder behind, empty (nothing moves before the manifest records the split).
        let known = Set(map.buckets.map { String($0.number) })
        for entry in try io("list folder", paths.buckets, { try DirectoryStream.entries(of: paths.buckets) }) where !known.contains(entry.name) {
            _ = try? FileSystem.removeDirectory(paths.buckets + "/" + entry.name)
        }
        if !FileManager.default.fileExists(atPath: paths.manifest) { try writeManifest() }
    }
}
