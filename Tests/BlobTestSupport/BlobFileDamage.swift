import BlobSystem
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Damage done to a stored blob's file behind the store's back, as a disk or another program might:
/// no read may hand out such a blob as complete.
package enum BlobFileDamage: CaseIterable, Sendable {
    /// The first content byte flipped (the content is the file's last `contentSize` bytes).
    case flippedFirstByte
    /// The file's last byte flipped.
    case flippedLastByte
    /// The file cut short by half the content (at least one byte).
    case cutShort
    /// One zero byte appended.
    case lengthened

    /// Damages the blob file at `path`, whose content is its last `contentSize` bytes.
    package func apply(to path: String, contentSize: Int) throws {
        let fileSize = Int64(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int)
        let fd = try FileDescriptor.open(path, [.readWrite])
        defer { try? fd.close() }
        switch self {
        case .flippedFirstByte, .flippedLastByte:
            let offset = self == .flippedFirstByte ? fileSize - Int64(contentSize) : fileSize - 1
            var byte: UInt8 = 0
            _ = try withUnsafeMutableBytes(of: &byte) { try fd.read(fromAbsoluteOffset: offset, into: $0) }
            byte ^= 0x01
            try withUnsafeBytes(of: &byte) { try fd.writeAll(toAbsoluteOffset: offset, $0) }
        case .cutShort:
            guard ftruncate(fd.rawValue, off_t(fileSize - Int64(max(1, contentSize / 2)))) == 0 else {
                throw HarnessError("ftruncate \(path): errno \(errno)")
            }
        case .lengthened:
            try [UInt8(0)].withUnsafeBytes { try fd.writeAll(toAbsoluteOffset: fileSize, $0) }
        }
    }
}
