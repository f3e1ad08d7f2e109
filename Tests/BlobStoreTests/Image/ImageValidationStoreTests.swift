import BlobStore
import Foundation
import Testing

/// Chunks of `data` cut at the sizes given (cycled).
private func chunks(_ data: Data, sizes: [Int]) -> [Data] {
    var out: [Data] = []
    var at = 0, turn = 0
    while at < data.count {
        let end = min(data.count, at + max(1, sizes[turn % sizes.count]))
        out.append(Data(data[at..<end]))
        at = end
        turn += 1
    }
    return out
}

private func refusal(_ body: () async throws -> BlobMetadata) async -> String? {
    do {
        _ = try await body()
        return nil
    } catch BlobStoreError.notAnImage(_, _, let reason) {
        return reason
    } catch {
        return "unexpected \(error)"
    }
}

@Suite("Image validation through the stores", .backends, .timeLimit(.minutes(2)))
struct ImageValidationStoreTests {
    // Built on each use, not kept in a `static let`: LeakSanitizer does not see the tagged pointer a
    // global `Data` holds its storage by, and reports the storage as leaked.
    static var largeTIFF: Data { Data(ImageBuilder.tiff(width: 640, height: 600, rowsPerStrip: 64)) }
    /// Over 256 KiB, so `meta` comes after the first bytes a header-only check used to look at.
    static var largeHEIC: Data { Data(ImageBuilder.heic(width: 4032, height: 3024, metaLast: true, mdatBytes: 300_000)) }

    @Test("a TIFF over 320 KB with its IFD at the end is stored as an image, whole or streamed", arguments: StoreKind.allCases)
    func largeTIFF(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let expected = ImageInfo(format: .tiff, width: 640, height: 600)
            #expect(try await store.putImage(Self.largeTIFF, identifier: "whole").image == expected)
            let streamed = try await store.put(
                chunks: chunkStream(chunks(Self.largeTIFF, sizes: [1000, 7, 65536])), identifier: "streamed", options: PutOptions(validation: .image))
            #expect(streamed.image == expected)
            #expect(streamed.contentType == "image/tiff")
            #expect(try await store.get("streamed") == Self.largeTIFF)
            // Without validation the size is recorded all the same.
            #expect(try await store.put(Self.largeTIFF, identifier: "plain").image == expected)
        }
    }

    @Test("a HEIC with meta after mdat gets the same verdict sent slowly or in one write", arguments: StoreKind.allCases)
    func heicMetaLast(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let expected = ImageInfo(format: .heic, width: 4032, height: 3024)
            #expect(try await store.putImage(Self.largeHEIC, identifier: "whole").image == expected)
            for (name, sizes) in [("tiny", [1, 2, 3]), ("kilobytes", [4096]), ("mixed", [100_000, 1, 150_000])] {
                let metadata = try await store.put(
                    chunks: chunkStream(chunks(Self.largeHEIC, sizes: sizes)), identifier: name, options: PutOptions(validation: .image))
                #expect(metadata.image == expected, "\(name)")
            }
        }
    }

    @Test("images that are only a valid header, or broken inside, are refused", arguments: StoreKind.allCases)
    func brokenImagesRefused(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let png = ImageBuilder.png()
            var badCRC = png
            badCRC[png.count - 20] ^= 0x40  // inside the last IDAT
            let cases: [(String, [UInt8])] = [
                ("header only", ImageBuilder.pngSignature + ImageBuilder.ihdr(width: 5, height: 3)),
                ("cut in IDAT", Array(png[..<(png.count - 20)])),
                ("bad CRC", badCRC),
                ("bit depth 7", ImageBuilder.png(depth: 7)),
                ("TIFF cut", Array(ImageBuilder.tiff(width: 640, height: 600, rowsPerStrip: 64).dropLast(300))),
                ("HEIC cut", Array(ImageBuilder.heic(width: 8, height: 8, metaLast: true).dropLast(1))),
            ]
            for (name, bytes) in cases {
                let whole = await refusal { try await store.putImage(Data(bytes), identifier: "x") }
                #expect(whole != nil, "\(name) was stored")
                let streamed = await refusal {
                    try await store.put(chunks: chunkStream(chunks(Data(bytes), sizes: [1, 5])), identifier: "x", options: PutOptions(validation: .image))
                }
                #expect(streamed == whole, "\(name)")
                let stored = try await store.exists("x")
                #expect(!stored, "\(name)")
            }
        }
    }

    @Test("every fixture streamed in random chunks gets the metadata of a whole put", arguments: StoreKind.allCases)
    func fixturesStreamed(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            var rng = SplitMix64(seed: 42)
            for fixture in ImageFixture.whole {
                let data = Data(try fixture.bytes())
                let whole = try await store.putImage(data, identifier: "whole")
                #expect(whole.image == fixture.info, "\(fixture.file)")
                let sizes = (0..<16).map { _ in Int.random(in: 1...300, using: &rng) }
                let streamed = try await store.put(chunks: chunkStream(chunks(data, sizes: sizes)), identifier: "streamed", options: PutOptions(validation: .image))
                #expect(streamed.image == whole.image && streamed.contentType == whole.contentType, "\(fixture.file)")
            }
        }
    }

    @Test("without validation, a large file with an image's signature but broken is stored whole as octet-stream", arguments: StoreKind.allCases)
    func brokenLargeImageWithoutValidation(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            // A PNG of 400 KB of IDAT whose last CRC is wrong: only the end tells it is not an image.
            var bytes = ImageBuilder.png(width: 1000, height: 400, idat: 400_000, idatChunks: 7)
            bytes[bytes.count - 13] ^= 1
            let data = Data(bytes)
            for (name, sizes) in [("whole", [data.count]), ("streamed", [65536, 3])] {
                let metadata = try await store.put(chunks: chunkStream(chunks(data, sizes: sizes)), identifier: name, options: PutOptions())
                #expect(metadata.contentType == "application/octet-stream", "\(name)")
                #expect(metadata.image == nil, "\(name)")
                #expect(metadata.size == Int64(data.count))
                #expect(try await store.get(name) == data, "\(name)")
                #expect(try await store.head(name) == metadata)
            }
            // The same with a valid CRC is a PNG.
            bytes[bytes.count - 13] ^= 1
            let valid = try await store.put(Data(bytes), identifier: "valid")
            #expect(valid.contentType == "image/png" && valid.image == ImageInfo(format: .png, width: 1000, height: 400))
            #expect(try await store.get("valid") == Data(bytes))
            // A large non-image with a given type keeps it.
            let typed = try await store.put(data, identifier: "typed", contentType: "application/x-broken")
            #expect(typed.contentType == "application/x-broken" && typed.image == nil)
            #expect(try await store.get("typed") == data)
        }
    }

    @Test("a large non-image streamed with image validation is refused, the reason showing its first bytes", arguments: StoreKind.allCases)
    func nonImageRefusedEarly(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let text = Data(repeating: 0x41, count: 600_000)
            let reason = await refusal {
                try await store.put(chunks: chunkStream(chunks(text, sizes: [1000])), identifier: "t", options: PutOptions(validation: .image))
            }
            #expect(reason == "no known image signature (first bytes 41 41 41 41 41 41 41 41)")
        }
    }
}
