/// A reason the daemon cannot start, phrased for the person who started it.
public struct StartupError: Error, CustomStringConvertible, Sendable {
    /// The sentence to print.
    public let description: String
    init(_ description: String) { self.description = description }
}
