import Foundation
import Testing

/// `Blob-Validate: image` over HTTP checks the whole upload, however it is framed and split: images whose
/// structure sits at their end (a TIFF directory after the pixels, a HEIF `meta` box after `mdat`) pass
/// when sent in many small chunked-encoding pieces, and a valid header alone does not.
@Suite(.enabled(if: BlobdBinary.url != nil, "blobd binary not found in .build/debug; run `swift build` first"))
struct ImageUploadTests {
    private static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
    private static func be32(_ v: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) } }
    private static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    private static func le32(_ v: UInt32) -> [UInt8] { [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: v >> $0) } }

    /// An uncompressed 8-bit greyscale TIFF, one strip, its IFD after the pixels (as libtiff writes).
    static func tiff(width: UInt32, height: UInt32) -> [UInt8] {
        var bytes = Array("II".utf8) + le16(42) + le32(8 + width * height)
        bytes += (0..<Int(width * height)).map { UInt8(truncatingIfNeeded: $0) }
        let entries: [(UInt16, UInt16, UInt32)] = [(256, 4, width), (257, 4, height), (258, 3, 8), (259, 3, 1), (262, 3, 1),
                                                    (273, 4, 8), (277, 3, 1), (278, 4, height), (279, 4, width * height)]
        bytes += le16(UInt16(entries.count))
        for (tag, type, value) in entries {
            bytes += le16(tag) + le16(type) + le32(1) + (type == 3 ? le16(UInt16(value)) + [0, 0] : le32(value))
        }
        return bytes + le32(0)
    }

    /// A HEIC whose `meta` box (one item of `width`×`height`, its data in `mdat`) follows a large `mdat`.
    static func heic(width: UInt32, height: UInt32, dataBytes: Int) -> [UInt8] {
        func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { be32(UInt32(8 + payload.count)) + Array(type.utf8) + payload }
        func fullBox(_ type: String, version: UInt8 = 0, _ payload: [UInt8]) -> [UInt8] { box(type, [version, 0, 0, 0] + payload) }
        let ftyp = box("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8))
        let mdat = box("mdat", (0..<dataBytes).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        let meta = fullBox("meta",
            fullBox("hdlr", [0, 0, 0, 0] + Array("pict".utf8) + [UInt8](repeating: 0, count: 13))
            + fullBox("pitm", be16(1))
            + fullBox("iloc", [0x44, 0] + be16(1) + be16(1) + be16(0) + be16(1) + be32(UInt32(ftyp.count + 8)) + be32(UInt32(dataBytes)))
            + fullBox("iinf", be16(1) + fullBox("infe", version: 2, be16(1) + be16(0) + Array("hvc1".utf8) + [0]))
            + box("iprp", box("ipco", fullBox("ispe", be32(width) + be32(height))) + fullBox("ipma", be32(1) + be16(1) + [1, 0x81])))
        return ftyp + mdat + meta
    }

    /// PUTs `content` with chunked encoding in `piece`-byte chunks, each sent on its own.
    private func putChunked(_ client: RawClient, _ path: String, _ content: [UInt8], piece: Int) throws -> RawResponse {
        try client.send("PUT \(path) HTTP/1.1\r\nHost: x\r\nBlob-Validate: image\r\nTransfer-Encoding: chunked\r\n\r\n")
        for start in stride(from: 0, to: content.count, by: piece) {
            let end = min(start + piece, content.count)
            try client.send(Array(String(end - start, radix: 16).utf8) + [13, 10] + content[start..<end] + [13, 10])
        }
        try client.send("0\r\n\r\n")
        return try client.readResponse(method: "PUT")
    }

    @Test func largeTIFFAndHEICSentInSmallPiecesAreImages() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let tiff = Self.tiff(width: 640, height: 600)
        let put = try putChunked(client, "/v1/stores/img/blobs/scan.tif", tiff, piece: 1000)
        #expect(put.status == 201, "\(put.text)")
        #expect(put.header("Blob-Image-Format") == "tiff" && put.header("Blob-Image-Width") == "640" && put.header("Blob-Image-Height") == "600")

        let heic = Self.heic(width: 4032, height: 3024, dataBytes: 300_000)
        let heicPut = try putChunked(client, "/v1/stores/img/blobs/photo.heic", heic, piece: 777)
        #expect(heicPut.status == 201, "\(heicPut.text)")
        #expect(heicPut.header("Blob-Image-Format") == "heic" && heicPut.header("Blob-Image-Width") == "4032")
        #expect(try client.request("GET", "/v1/stores/img/blobs/photo.heic").body == heic)

        // The same HEIC one byte short: 415, and nothing stored.
        let cut = try putChunked(client, "/v1/stores/img/blobs/cut.heic", Array(heic.dropLast()), piece: 4096)
        #expect(cut.status == 415)
        #expect(cut.text.contains("not_an_image"))
        #expect(try client.request("GET", "/v1/stores/img/blobs/cut.heic").status == 404)
    }

    @Test func aValidHeaderAloneIsNotAnImage() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        var header: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Self.be32(13)
        let ihdr = Array("IHDR".utf8) + Self.be32(64) + Self.be32(64) + [8, 0, 0, 0, 0]
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in ihdr {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (crc & 1 == 1 ? 0xEDB8_8320 : 0) }
        }
        header += ihdr + Self.be32(~crc)
        let put = try client.request("PUT", "/v1/stores/img/blobs/h.png", headers: ["Blob-Validate": "image"], body: header)
        #expect(put.status == 415)
        #expect(put.text.contains("PNG ends after 33 bytes without an IEND chunk"))
    }
}
