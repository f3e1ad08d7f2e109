/// Finds where a head ends in buffered bytes, remembering its progress between feeds.
///
/// Parsing happens in two passes. This first pass only looks for line feeds, eight bytes at a time,
/// so it can run on every feed cheaply; it also checks that lines end in CR LF and enforces the size
/// limits, so an over-long head is rejected as soon as the offending byte arrives rather than when
/// the head ends.
/// The second pass (``FieldLineParser`` and the start-line parsers) then runs once over a head known
/// to be complete, so it needs no state.
///
/// Because the scanner resumes where it stopped, feeding a head one byte at a time is linear.
struct HeadScanner: Sendable {
    /// Where a complete head lies in the fed buffer.
    struct Head {
        /// First byte of the start line (after any empty lines that were skipped).
        var start: Int
        /// Index of the LF that ends the start line.
        var startLineEnd: Int
        /// One past the LF of the empty line that ends the head.
        var end: Int
    }

    /// How far the buffer has been examined.
    private var scanned = 0
    /// Start of the line being examined.
    private var lineStart = 0
    /// Start of the start line.
    private var headStart = 0
    /// LF of the start line, or -1 until it is seen.
    private var startLineEnd = -1
    /// Field lines seen so far.
    private var fieldLines = 0

    /// Examines `buffer`, which must begin with the same bytes as on the previous call.
    ///
    /// - Returns: the head's bounds, `nil` if more bytes are needed, or throws when a limit or a
    ///   line-ending rule is broken. After a head or an error the scanner is ready for a new head.
    mutating func scan(_ buffer: UnsafeRawBufferPointer, limits: HTTPHeadLimits) throws(HTTPParseError) -> Head? {
        if scanned > buffer.count { self = HeadScanner() }  // The caller started over with fewer bytes.
        do {
            let head = try scanLines(buffer, limits: limits)
            if head != nil { self = HeadScanner() }
            return head
        } catch {
            self = HeadScanner()
            throw error
        }
    }

    private mutating func scanLines(_ buffer: UnsafeRawBufferPointer, limits: HTTPHeadLimits) throws(HTTPParseError) -> Head? {
        // Nothing past the head limit can belong to an acceptable head, so never look further.
        let end = min(buffer.count, limits.maxHeadSize)
        guard let bytes = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var index = scanned
        while let lineFeed = Self.nextLineFeed(bytes, from: index, to: end) {
            // The start line's length is judged before its ending and by the same rule as at the end
            // of the buffer below, so an over-long line ending in a bare LF is 414 however the bytes
            // arrive (judged the other way round it was 400 in one read, 414 in two).
            if startLineEnd < 0 && Self.contentLength(bytes, from: lineStart, to: lineFeed) > limits.maxStartLineLength {
                throw .requestLineTooLong
            }
            // Only CR LF ends a line. A CR elsewhere in a line is caught by the second pass, except
            // at a line's start, where `CR CR LF` would otherwise look like a field line and the
            // head would never end.
            guard lineFeed > lineStart, bytes[lineFeed &- 1] == ASCII.carriageReturn else { throw .invalidLineEnding }
            let lineLength = lineFeed &- 1 &- lineStart
            if lineLength > 0 && bytes[lineStart] == ASCII.carriageReturn { throw .invalidLineEnding }
            if startLineEnd < 0 {
                if lineLength == 0 {
                    // RFC 9112 §2.2: ignore empty lines before a request line (stray CRLF
                    // after a previous body). They still count towards the head size limit.
                    headStart = lineFeed &+ 1
                } else {
                    startLineEnd = lineFeed
                }
            } else if lineLength == 0 {
                return Head(start: headStart, startLineEnd: startLineEnd, end: lineFeed &+ 1)
            } else {
                fieldLines &+= 1
                if fieldLines > limits.maxHeaderCount { throw .tooManyHeaders }
            }
            lineStart = lineFeed &+ 1
            index = lineFeed &+ 1
        }
        scanned = end
        // A start line already longer than allowed, whatever ends it.
        if startLineEnd < 0 && Self.contentLength(bytes, from: lineStart, to: end) > limits.maxStartLineLength { throw .requestLineTooLong }
        if end >= limits.maxHeadSize { throw .headTooLarge }
        return nil
    }

    /// The length of a line's content in `bytes[start..<end]` (`end` at its LF, or where the bytes
    /// stop): a CR just before `end` may be the line's ending, so it does not count.
    @inline(__always)
    private static func contentLength(_ bytes: UnsafePointer<UInt8>, from start: Int, to end: Int) -> Int {
        end > start && bytes[end &- 1] == ASCII.carriageReturn ? end &- start &- 1 : end &- start
    }

    /// The index of the first LF in `bytes[start..<end]`, looking at eight bytes per step.
    @inline(__always)
    private static func nextLineFeed(_ bytes: UnsafePointer<UInt8>, from start: Int, to end: Int) -> Int? {
        var index = start
        while index &+ 8 <= end {
            let found = SWAR.matches(SWAR.load(bytes, index), ASCII.lineFeed)
            if found != 0 { return index &+ SWAR.firstByte(found) }
            index &+= 8
        }
        while index < end {
            if bytes[index] == ASCII.lineFeed { return index }
            index &+= 1
        }
        return nil
    }
}
