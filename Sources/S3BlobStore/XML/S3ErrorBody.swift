/// An answer's body that is not what the operation returns: the reason, for messages.
package struct S3ResponseParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    package var reason: String

    /// A parse error.
    package init(reason: String) { self.reason = reason }

    /// `unexpected S3 answer: reason`.
    package var description: String { "unexpected S3 answer: \(reason)" }

    /// The root element, which must be named `name`.
    static func root(of xml: some Collection<UInt8>, expecting name: String) throws(S3ResponseParseError) -> XMLElement {
        let root: XMLElement
        do { root = try XMLReader.read(xml) } catch { throw S3ResponseParseError(reason: error.description) }
        guard root.name == name else { throw S3ResponseParseError(reason: "expected <\(name)>, found <\(root.name)>") }
        return root
    }
}

/// S3's error document: `<Error><Code>NoSuchKey</Code><Message>...</Message>...</Error>`.
package struct S3ErrorBody: Sendable, Hashable {
    /// The machine-readable code (`NoSuchKey`, `PreconditionFailed`, `RequestTimeTooSkewed`, ...).
    package var code: String
    /// The human-readable message.
    package var message: String?
    /// The resource the error is about.
    package var resource: String?
    /// The request ID, for the operator's logs.
    package var requestID: String?

    init(_ root: XMLElement) {
        code = root.text(of: "Code") ?? ""
        message = root.text(of: "Message")
        resource = root.text(of: "Resource")
        requestID = root.text(of: "RequestId")
    }

    /// Parses an error body; `nil` when the body is empty or not an `<Error>` document (a `404`
    /// to HEAD and the gateway's header-size `400` have no body).
    package init?(xml: some Collection<UInt8>) {
        guard !xml.isEmpty, let root = try? XMLReader.read(xml), root.name == "Error", root.child("Code") != nil else { return nil }
        self.init(root)
    }
}
