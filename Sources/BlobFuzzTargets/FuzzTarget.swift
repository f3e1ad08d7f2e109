/// The fuzz targets: each checks properties of one parser or mapping for one input and returns a
/// description of the first violated property, or `nil`. The libFuzzer driver (`blob-fuzz` built by
/// `.ci/fuzz`) traps on a description so libFuzzer keeps the input; the regression tests run the
/// checked-in corpus through the same functions.
package enum FuzzTarget: String, CaseIterable, Sendable {
    /// `HTTPRequestParser`: fed whole or in two pieces, never out of bounds, same answer both ways.
    case httpRequest = "http-request"
    /// `ChunkedDecoder`: piecewise decoding equals one-shot decoding; encode → decode round-trips.
    case chunked
    /// Identifier → file name: never escapes its folder, round-trips, invalid identifiers refused.
    case identifierMapping = "identifier-mapping"
    /// `ImageHeaderParser`: never traps, sane sizes, a prefix never says more than the whole.
    case imageHeader = "image-header"
    /// `JSONValidator` (`Blob-Validate: record`): same verdict however split; a valid document nests and ends.
    case jsonRecord = "json-record"
    /// `ImageValidator`: never traps, sane sizes, agrees with the header parser, and the verdict is the
    /// same whole, one byte at a time, or in chunks of sizes drawn from the input.
    case imageWhole = "image-whole"

    /// Checks `input`; `nil` when every property holds.
    package func check(_ input: UnsafeRawBufferPointer) -> String? {
        switch self {
        case .httpRequest: return HTTPRequestFuzz.check(input)
        case .chunked: return ChunkedFuzz.check(input)
        case .identifierMapping: return IdentifierMappingFuzz.check(input)
        case .imageHeader: return ImageHeaderFuzz.check(input)
        case .jsonRecord: return JSONRecordFuzz.check(input)
        case .imageWhole: return ImageWholeFuzz.check(input)
        }
    }

    /// Checks `input`; `nil` when every property holds.
    package func check(_ input: [UInt8]) -> String? {
        input.withUnsafeBytes { check($0) }
    }
}
