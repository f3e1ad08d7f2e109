/// A reason the daemon cannot start, phrased for the person who started it.
package struct StartupError: Error, CustomStringConvertible, Sendable {
    /// The sentence to print.
    package let description: String
    init(_ description: String) { self.description = description }
}
