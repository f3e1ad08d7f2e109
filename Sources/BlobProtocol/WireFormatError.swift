/// A document or header from the other side that does not have the protocol's shape; the client
/// reports it as a protocol error.
package struct WireFormatError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, naming the field and the value.
    package var description: String

    package init(_ description: String) { self.description = description }
}
