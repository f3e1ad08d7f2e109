/// Size limits a head parser enforces before it has seen the whole head.
///
/// They bound the memory one connection can make the daemon buffer. Each limit is inclusive:
/// a value exactly at the limit is accepted, one byte (or field) more is an error naming the limit.
package struct HTTPHeadLimits: Sendable, Hashable {
    /// Longest request or status line, in bytes, not counting its CR LF. Default 8 KiB.
    ///
    /// Exceeding it is ``HTTPParseError/requestLineTooLong`` (414).
    package var maxStartLineLength: Int
    /// Longest head, in bytes, from the first byte through the CR LF of the empty line. Default 64 KiB.
    ///
    /// Exceeding it is ``HTTPParseError/headTooLarge`` (431).
    package var maxHeadSize: Int
    /// Most field lines in one head. Default 100.
    ///
    /// Exceeding it is ``HTTPParseError/tooManyHeaders`` (431).
    package var maxHeaderCount: Int

    /// Creates limits; the defaults suit a server facing untrusted clients.
    ///
    /// `maxHeadSize` is capped at `Int32.max` because field positions are stored in 32 bits.
    package init(maxStartLineLength: Int = 8 * 1024, maxHeadSize: Int = 64 * 1024, maxHeaderCount: Int = 100) {
        precondition(maxStartLineLength > 0 && maxHeadSize > 0 && maxHeaderCount >= 0, "limits must be positive")
        self.maxStartLineLength = maxStartLineLength
        self.maxHeadSize = min(maxHeadSize, Int(Int32.max))
        self.maxHeaderCount = maxHeaderCount
    }
}
