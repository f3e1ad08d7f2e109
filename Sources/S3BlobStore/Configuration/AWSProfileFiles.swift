internal import HTTP1
/// One AWS INI file, parsed the way the AWS CLI's parser reads it: `[section]` headers, `key = value`
/// (or `key: value`) lines with keys lowercased, full-line `#` and `;` comments, and indented lines
/// under a key with an empty value as nested settings (`s3 =` then `  addressing_style = path`,
/// stored as `s3.addressing_style`). Later duplicates win.
package struct AWSINIFile: Sendable, Hashable {
    /// The file's path, for messages.
    package var path: String
    /// Settings by section name (the text between the brackets, trimmed) then key.
    package var sections: [String: [String: String]]

    /// Parses `text` read from `path`.
    package init(parsing text: String, path: String) throws(AWSConfigurationError) {
        self.path = path
        var sections: [String: [String: String]] = [:]
        var section: String?
        var parentKey: String?
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            let trimmed = line.trimmingSpaces()
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
            let indented = line.first == " " || line.first == "\t"
            if !indented, trimmed.hasPrefix("[") {
                guard trimmed.hasSuffix("]") else {
                    throw .malformedFile(path: path, line: lineNumber, reason: "a section header without its closing ']'")
                }
                let name = trimmed.dropFirst().dropLast().trimmingSpaces()
                section = String(name)
                parentKey = nil
                if sections[String(name)] == nil { sections[String(name)] = [:] }
                continue
            }
            guard let current = section else {
                throw .malformedFile(path: path, line: lineNumber, reason: "a setting before any [section] header")
            }
            guard let separator = trimmed.firstIndex(where: { $0 == "=" || $0 == ":" }) else {
                throw .malformedFile(path: path, line: lineNumber, reason: "expected 'name = value'")
            }
            let key = trimmed[..<separator].trimmingSpaces().lowercased()
            let value = String(trimmed[trimmed.index(after: separator)...].trimmingSpaces())
            guard !key.isEmpty else {
                throw .malformedFile(path: path, line: lineNumber, reason: "a setting without a name")
            }
            if indented, let parent = parentKey {
                sections[current, default: [:]][parent + "." + key] = value
                continue
            }
            sections[current, default: [:]][key] = value
            parentKey = value.isEmpty ? key : nil
        }
        self.sections = sections
    }
}

/// The two files the AWS tools read, for one environment: the shared credentials file (sections
/// `[NAME]`) and the config file (sections `[profile NAME]`, `[default]`, `[services NAME]`).
package struct AWSProfileFiles: Sendable {
    /// `AWS_SHARED_CREDENTIALS_FILE`, or `~/.aws/credentials`; `nil` without a home folder.
    package var credentialsPath: String?
    /// `AWS_CONFIG_FILE`, or `~/.aws/config`; `nil` without a home folder.
    package var configPath: String?
    /// The credentials file, `nil` when absent.
    package var credentials: AWSINIFile?
    /// The config file, `nil` when absent.
    package var config: AWSINIFile?

    /// Finds and reads both files.
    package static func load(from environment: AWSEnvironment) throws(AWSConfigurationError) -> AWSProfileFiles {
        let home = environment.value("HOME")
        func resolve(_ override: String, _ defaultName: String) -> String? {
            if let path = environment.value(override) { return expandingHome(path, home: home) }
            guard let home else { return nil }
            return (home.hasSuffix("/") ? home : home + "/") + ".aws/" + defaultName
        }
        var files = AWSProfileFiles()
        files.credentialsPath = resolve("AWS_SHARED_CREDENTIALS_FILE", "credentials")
        files.configPath = resolve("AWS_CONFIG_FILE", "config")
        files.credentials = try read(files.credentialsPath, environment)
        files.config = try read(files.configPath, environment)
        return files
    }

    /// The credentials file's `[profile]` section.
    package func credentialsSection(_ profile: String) -> [String: String]? {
        credentials?.sections[profile]
    }

    /// The config file's section for `profile`: `[profile NAME]`, or for `default` also `[default]`
    /// (which the AWS CLI reads when both exist, `[profile default]` winning per key).
    package func configSection(_ profile: String) -> [String: String]? {
        guard let config else { return nil }
        let prefixed = config.sections.first { key, _ in
            let words = key.split(whereSeparator: { $0 == " " || $0 == "\t" })
            return words.count == 2 && words[0] == "profile" && words[1] == profile
        }?.value
        if profile == "default", let plain = config.sections["default"] {
            return plain.merging(prefixed ?? [:]) { _, prefixedValue in prefixedValue }
        }
        return prefixed
    }

    /// The config file's `[services NAME]` section.
    package func servicesSection(_ name: String) -> [String: String]? {
        config?.sections.first { key, _ in
            let words = key.split(whereSeparator: { $0 == " " || $0 == "\t" })
            return words.count == 2 && words[0] == "services" && words[1] == name
        }?.value
    }

    /// `path` with a leading `~/` replaced by the home folder, as the AWS tools expand it.
    static func expandingHome(_ path: String, home: String?) -> String {
        guard let home, path == "~" || path.hasPrefix("~/") else { return path }
        return home + path.dropFirst()
    }

    private static func read(_ path: String?, _ environment: AWSEnvironment) throws(AWSConfigurationError) -> AWSINIFile? {
        guard let path else { return nil }
        let text: String?
        do {
            text = try environment.readFile(path)
        } catch {
            throw .unreadableFile(path: path, reason: String(describing: error))
        }
        guard let text else { return nil }
        return try AWSINIFile(parsing: text, path: path)
    }
}
