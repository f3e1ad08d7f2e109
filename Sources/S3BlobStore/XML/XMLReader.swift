/// Why a document could not be read, and where.
package struct XMLReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The byte offset where reading stopped.
    package var offset: Int
    /// What was wrong there.
    package var reason: String

    /// `reason at byte N`.
    package var description: String { "malformed XML at byte \(offset): \(reason)" }
}

/// A small, tolerant XML reader for S3's answers: elements, attributes, text, CDATA, the five
/// predefined entities and character references. Declarations, comments, processing instructions
/// and a DOCTYPE are skipped; no other entity is expanded (so no external or recursive entities).
///
/// Written here rather than using FoundationXML, which needs libxml2 at run time. It never traps
/// on any input: it reads bytes through bounds-checked indices, keeps its own stack instead of
/// recursing, and refuses nesting deeper than ``maximumDepth``.
package enum XMLReader {
    /// The deepest nesting accepted; S3's answers nest three or four levels.
    package static let maximumDepth = 256

    /// Reads a document and returns its root element.
    package static func read(_ bytes: some Collection<UInt8>) throws(XMLReadError) -> XMLElement {
        let input = Array(bytes)
        var parser = Parser(input: input)
        return try parser.document()
    }

    /// Reads the UTF-8 of `text`.
    package static func read(_ text: String) throws(XMLReadError) -> XMLElement {
        try read(Array(text.utf8))
    }

    private struct Parser {
        let input: [UInt8]
        var position = 0

        init(input: [UInt8]) {
            self.input = input
            // A UTF-8 byte-order mark is not content.
            if input.count >= 3, input[0] == 0xef, input[1] == 0xbb, input[2] == 0xbf { position = 3 }
        }

        func fail(_ reason: String) -> XMLReadError {
            XMLReadError(offset: position, reason: reason)
        }

        func hasPrefix(_ prefix: String) -> Bool {
            var index = position
            for byte in prefix.utf8 {
                guard index < input.count, input[index] == byte else { return false }
                index += 1
            }
            return true
        }

        /// Moves past the next `terminator`, or fails naming what was left open.
        mutating func skip(past terminator: String, what: String) throws(XMLReadError) {
            while position < input.count {
                if hasPrefix(terminator) {
                    position += terminator.utf8.count
                    return
                }
                position += 1
            }
            throw fail("unterminated \(what)")
        }

        static func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d
        }

        static func isNameByte(_ byte: UInt8) -> Bool {
            !isSpace(byte) && byte != UInt8(ascii: "/") && byte != UInt8(ascii: ">") && byte != UInt8(ascii: "=")
                && byte != UInt8(ascii: "<") && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "'")
        }

        mutating func skipSpaces() {
            while position < input.count, Self.isSpace(input[position]) { position += 1 }
        }

        mutating func name() throws(XMLReadError) -> String {
            let start = position
            while position < input.count, Self.isNameByte(input[position]) { position += 1 }
            guard position > start else { throw fail("expected a name") }
            let qualified = input[start..<position]
            // Drop a namespace prefix: S3's documents use one default namespace.
            let local = qualified.lastIndex(of: UInt8(ascii: ":")).map { qualified[($0 + 1)...] } ?? qualified
            guard !local.isEmpty else { throw fail("a name with an empty local part") }
            return String(decoding: local, as: UTF8.self)
        }

        /// Skips the prolog and anything that is not an element, then reads the root element.
        mutating func document() throws(XMLReadError) -> XMLElement {
            while true {
                skipSpaces()
                guard position < input.count else { throw fail("no root element") }
                if hasPrefix("<?") {
                    try skip(past: "?>", what: "processing instruction")
                } else if hasPrefix("<!--") {
                    try skip(past: "-->", what: "comment")
                } else if hasPrefix("<!DOCTYPE") || hasPrefix("<!doctype") {
                    try skipDoctype()
                } else if hasPrefix("<") {
                    return try element()
                } else {
                    throw fail("text before the root element")
                }
            }
        }

        mutating func skipDoctype() throws(XMLReadError) {
            var inSubset = false
            while position < input.count {
                let byte = input[position]
                position += 1
                if byte == UInt8(ascii: "[") { inSubset = true }
                if byte == UInt8(ascii: "]") { inSubset = false }
                if byte == UInt8(ascii: ">"), !inSubset { return }
            }
            throw fail("unterminated DOCTYPE")
        }

        /// Reads one element and everything in it, keeping open elements on an explicit stack.
        mutating func element() throws(XMLReadError) -> XMLElement {
            var stack: [(element: XMLElement, text: [UInt8])] = []
            guard let root = try startTag() else { throw fail("expected an element") }
            if root.selfClosing { return root.element }
            stack.append((root.element, []))
            while let last = stack.indices.last {
                guard position < input.count else { throw fail("unclosed element <\(stack[last].element.name)>") }
                let byte = input[position]
                if byte != UInt8(ascii: "<") {
                    try characterData(into: &stack[last].text)
                    continue
                }
                if hasPrefix("<!--") {
                    try skip(past: "-->", what: "comment")
                } else if hasPrefix("<![CDATA[") {
                    position += 9
                    let start = position
                    try skip(past: "]]>", what: "CDATA section")
                    stack[last].text += input[start..<(position - 3)]
                } else if hasPrefix("<?") {
                    try skip(past: "?>", what: "processing instruction")
                } else if hasPrefix("</") {
                    position += 2
                    let closing = try name()
                    skipSpaces()
                    guard position < input.count, input[position] == UInt8(ascii: ">") else { throw fail("expected '>' to end </\(closing)>") }
                    position += 1
                    var finished = stack.removeLast()
                    guard closing == finished.element.name else {
                        throw fail("</\(closing)> closes <\(finished.element.name)>")
                    }
                    finished.element.text = String(decoding: finished.text, as: UTF8.self)
                    guard let parent = stack.indices.last else { return finished.element }
                    stack[parent].element.children.append(finished.element)
                } else {
                    guard let child = try startTag() else { throw fail("expected an element") }
                    if child.selfClosing {
                        stack[last].element.children.append(child.element)
                    } else {
                        guard stack.count < XMLReader.maximumDepth else { throw fail("nesting deeper than \(XMLReader.maximumDepth)") }
                        stack.append((child.element, []))
                    }
                }
            }
            throw fail("unclosed element")
        }

        /// `<name attr="value" ...>` or `.../>`, with `position` at its `<`.
        mutating func startTag() throws(XMLReadError) -> (element: XMLElement, selfClosing: Bool)? {
            guard position < input.count, input[position] == UInt8(ascii: "<") else { return nil }
            position += 1
            var element = XMLElement(name: try name())
            while true {
                skipSpaces()
                guard position < input.count else { throw fail("unterminated tag <\(element.name)>") }
                if input[position] == UInt8(ascii: ">") {
                    position += 1
                    return (element, false)
                }
                if hasPrefix("/>") {
                    position += 2
                    return (element, true)
                }
                let attribute = try name()
                skipSpaces()
                guard position < input.count, input[position] == UInt8(ascii: "=") else { throw fail("attribute \(attribute) without '='") }
                position += 1
                skipSpaces()
                guard position < input.count, input[position] == UInt8(ascii: "\"") || input[position] == UInt8(ascii: "'") else {
                    throw fail("attribute \(attribute) without a quoted value")
                }
                let quote = input[position]
                position += 1
                var value: [UInt8] = []
                while true {
                    guard position < input.count else { throw fail("unterminated value of attribute \(attribute)") }
                    let byte = input[position]
                    if byte == quote {
                        position += 1
                        break
                    }
                    if byte == UInt8(ascii: "&") {
                        try entity(into: &value)
                    } else {
                        value.append(byte)
                        position += 1
                    }
                }
                element.attributes[attribute] = String(decoding: value, as: UTF8.self)
            }
        }

        /// Text up to the next `<`, entities decoded.
        mutating func characterData(into text: inout [UInt8]) throws(XMLReadError) {
            while position < input.count, input[position] != UInt8(ascii: "<") {
                if input[position] == UInt8(ascii: "&") {
                    try entity(into: &text)
                } else {
                    text.append(input[position])
                    position += 1
                }
            }
        }

        /// `&name;` or `&#N;` / `&#xH;`, with `position` at the `&`.
        mutating func entity(into output: inout [UInt8]) throws(XMLReadError) {
            let start = position
            position += 1
            while position < input.count, input[position] != UInt8(ascii: ";"), position - start <= 12 {
                position += 1
            }
            guard position < input.count, input[position] == UInt8(ascii: ";") else {
                position = start
                throw fail("an '&' that starts no entity")
            }
            let body = input[(start + 1)..<position]
            position += 1
            switch String(decoding: body, as: UTF8.self) {
            case "lt": output.append(UInt8(ascii: "<"))
            case "gt": output.append(UInt8(ascii: ">"))
            case "amp": output.append(UInt8(ascii: "&"))
            case "quot": output.append(UInt8(ascii: "\""))
            case "apos": output.append(UInt8(ascii: "'"))
            case let reference where reference.hasPrefix("#"):
                let digits = reference.dropFirst()
                let value = digits.hasPrefix("x") || digits.hasPrefix("X")
                    ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
                guard let value, value != 0, let scalar = Unicode.Scalar(value) else {
                    position = start
                    throw fail("character reference &\(reference); is not a character")
                }
                output += Array(String(Character(scalar)).utf8)
            case let other:
                position = start
                throw fail("unknown entity &\(other);")
            }
        }
    }
}
