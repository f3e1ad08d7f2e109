/// CRC-32 as PNG (and zlib, gzip, Ethernet) define it: reflected polynomial 0xEDB88320, initial value and
/// final XOR 0xFFFFFFFF. Written here rather than taken from zlib because the store depends on no library
/// beyond the toolchain.
///
/// Updated piecewise, so a chunk split across any number of writes gets the same checksum as one whole.
struct CRC32: Sendable {
    private var state: UInt32 = 0xFFFF_FFFF

    init() {}

    /// The checksum of everything given so far.
    var value: UInt32 { ~state }

    /// One table per byte position of an 8-byte step ("slicing by 8"), so the loop does one table lookup per
    /// byte but no serial dependency between them, which keeps whole-file PNG checks cheap on large images.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            tables[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = tables[(slice - 1) * 256 + byte]
                tables[slice * 256 + byte] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        var crc = state
        Self.tables.withUnsafeBufferPointer { table in
            let t = table.baseAddress!
            var index = 0
            let count = bytes.count
            while count - index >= 8 {
                let low = crc ^ (UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8
                    | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24)
                let a = t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int(low >> 8 & 0xFF)]
                let b = t[5 * 256 + Int(low >> 16 & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                let c = t[3 * 256 + Int(bytes[index + 4])] ^ t[2 * 256 + Int(bytes[index + 5])]
                let d = t[256 + Int(bytes[index + 6])] ^ t[Int(bytes[index + 7])]
                crc = a ^ b ^ c ^ d
                index += 8
            }
            while index < count {
                crc = (crc >> 8) ^ t[Int((crc ^ UInt32(bytes[index])) & 0xFF)]
                index += 1
            }
        }
        state = crc
    }

    mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The checksum of `bytes` alone.
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.value
    }
}
