/// One element of a parsed XML document: its local name, attributes, text and child elements.
///
/// Only what S3's answers need: no mixed-content order, no namespaces beyond dropping a prefix.
package struct XMLElement: Sendable, Hashable {
    /// The local name (`Key` for `<Key>` and `<s3:Key>`).
    package var name: String
    /// The attributes by local name, values decoded.
    package var attributes: [String: String]
    /// The element's own text (its text and CDATA, concatenated, entities decoded; not its children's).
    package var text: String
    /// The child elements, in document order.
    package var children: [XMLElement]

    /// An element.
    package init(name: String, attributes: [String: String] = [:], text: String = "", children: [XMLElement] = []) {
        self.name = name
        self.attributes = attributes
        self.text = text
        self.children = children
    }

    /// The first child named `name`.
    package func child(_ name: String) -> XMLElement? {
        children.first { $0.name == name }
    }

    /// Every child named `name`.
    package func children(_ name: String) -> [XMLElement] {
        children.filter { $0.name == name }
    }

    /// The text of the first child named `name`.
    package func text(of name: String) -> String? {
        child(name)?.text
    }
}
