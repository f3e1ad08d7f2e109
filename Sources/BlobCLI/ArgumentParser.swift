/// A small command-line parser in the style of swift-argument-parser: long options (`--name value`,
/// `--name=value`), short options (`-o value`, `-oVALUE`), flags, repeatable options, positionals,
/// `--` to end the options, and `-` as an ordinary positional (standard input or output).
///
/// The parser knows nothing about blobs: commands describe themselves with a ``CommandSpec`` and
/// read the ``ParsedArguments`` it produces. Global options (``GlobalOptions``) are accepted anywhere
/// before `--`, before or after the command name.

/// What an option takes.
package enum OptionKind: Sendable, Hashable {
    /// A flag: present or absent.
    case flag
    /// One value (`--type MIME`); giving it twice is a usage error.
    case value(metavar: String)
    /// A value that may be given many times (`--meta key=value`).
    case repeatable(metavar: String)
}

/// One option a command accepts.
package struct OptionSpec: Sendable, Hashable {
    /// The long name without dashes (`type` for `--type`).
    package var long: String
    /// The short name without the dash (`o` for `-o`), if any.
    package var short: Character?
    /// Flag or value.
    package var kind: OptionKind
    /// One line of help.
    package var help: String

    package init(_ long: String, short: Character? = nil, _ kind: OptionKind = .flag, help: String) {
        self.long = long
        self.short = short
        self.kind = kind
        self.help = help
    }

    /// `-o, --output FILE` as shown in help and usage.
    var synopsis: String {
        var text = short.map { "-\($0), " } ?? ""
        text += "--" + long
        switch kind {
        case .flag: break
        case .value(let metavar): text += " " + metavar
        case .repeatable(let metavar): text += " " + metavar
        }
        return text
    }

    /// How the option appears in a usage line.
    var usageFragment: String {
        switch kind {
        case .flag: return "[--\(long)]"
        case .value(let metavar): return "[--\(long) \(metavar)]"
        case .repeatable(let metavar): return "[--\(long) \(metavar) ...]"
        }
    }

    var takesValue: Bool { kind != .flag }
}

/// One positional argument a command accepts, in order.
package struct ArgumentSpec: Sendable, Hashable {
    /// How the argument is named in usage lines and errors (`STORE/ID`).
    package var metavar: String
    /// One line of help.
    package var help: String
    /// Whether it may be left out.
    package var optional: Bool
    /// Whether it takes every remaining positional (the last argument only).
    package var variadic: Bool

    package init(_ metavar: String, help: String, optional: Bool = false, variadic: Bool = false) {
        self.metavar = metavar
        self.help = help
        self.optional = optional
        self.variadic = variadic
    }

    var usageFragment: String {
        let base = variadic ? "\(metavar) ..." : metavar
        return optional ? "[\(base)]" : base
    }
}

/// A command's name, help, positionals and options: everything the parser and the help text need.
package struct CommandSpec: Sendable {
    package var name: String
    /// One-line summary (OVERVIEW and the command list).
    package var abstract: String
    /// Further paragraphs shown under the overview.
    package var discussion: String
    package var arguments: [ArgumentSpec]
    package var options: [OptionSpec]
    /// Examples shown at the end of the command's help.
    package var examples: [String]

    package init(
        name: String, abstract: String, discussion: String = "", arguments: [ArgumentSpec] = [],
        options: [OptionSpec] = [], examples: [String] = []
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
        self.examples = examples
    }

    /// `blob put STORE/ID [FILE|-] [--type MIME] ...`
    package var usage: String {
        (["blob", name] + arguments.map(\.usageFragment) + options.map(\.usageFragment)).joined(separator: " ")
    }

    func option(long: String) -> OptionSpec? { options.first { $0.long == long } }
    func option(short: Character) -> OptionSpec? { options.first { $0.short == short } }
}

/// A problem with the command line: printed as one line with a hint, exit code 64.
package struct UsageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, without the hint (`missing STORE/ID`).
    package var message: String
    /// The command whose help the hint points at; `nil` for the top-level help.
    package var command: String?

    package init(_ message: String, command: String?) {
        self.message = message
        self.command = command
    }

    /// `Error: missing STORE/ID. See 'blob help put'.`
    package var description: String {
        let help = command.map { "blob help \($0)" } ?? "blob help"
        let end = message.hasSuffix(".") || message.hasSuffix("?") ? "" : "."
        return "Error: \(message)\(end) See '\(help)'."
    }
}

/// The options and positionals given to one command.
package struct ParsedArguments: Sendable, Hashable {
    /// Values by option long name, in the order given (flags have one empty string per occurrence).
    package var options: [String: [String]] = [:]
    /// Positionals in order.
    package var positionals: [String] = []

    package init(options: [String: [String]] = [:], positionals: [String] = []) {
        self.options = options
        self.positionals = positionals
    }

    package func flag(_ long: String) -> Bool { options[long] != nil }
    package func value(_ long: String) -> String? { options[long]?.last }
    package func values(_ long: String) -> [String] { options[long] ?? [] }
}

/// The options every command accepts.
package struct GlobalOptions: Sendable, Hashable {
    /// `--root DIR`: use the embedded store in this folder.
    package var root: String?
    /// `--socket PATH`: the daemon's socket.
    package var socket: String?
    /// `--wait SECONDS`: how long `--root` waits for another process to release a store.
    package var wait: String?
    /// `--backend s3://BUCKET[/PREFIX]`: use the stores in an S3 bucket directly.
    package var backend: String?
    /// `--json`: machine-readable output.
    package var json = false
    /// `-h`/`--help` was given.
    package var help = false
    /// `--version` was given.
    package var version = false

    package init(root: String? = nil, socket: String? = nil, json: Bool = false) {
        self.root = root
        self.socket = socket
        self.json = json
    }

    /// The global options as described in help texts.
    package static let specs: [OptionSpec] = [
        OptionSpec("root", .value(metavar: "DIR"), help: "Use the store root DIR directly (embedded store, no daemon)."),
        OptionSpec("socket", .value(metavar: "PATH"), help: "Talk to the daemon at PATH (default: $BLOB_SOCKET, else the standard socket)."),
        OptionSpec(
            "backend", .value(metavar: "URL"),
            help: "Use the stores at s3://BUCKET[/PREFIX] directly (no daemon; AWS settings from the environment and ~/.aws)."),
        OptionSpec(
            "wait", .value(metavar: "SECONDS"),
            help: "With --root, wait up to SECONDS for another process to release a store (default: $BLOB_WAIT, else 10)."),
        OptionSpec("json", help: "Print machine-readable JSON instead of text."),
        OptionSpec("help", short: "h", help: "Show help information."),
    ]
}

/// The whole command line, split into global options, the command name and its arguments.
package struct CommandLineInvocation: Sendable, Hashable {
    package var globals = GlobalOptions()
    /// The command name, if any was given.
    package var command: String?
    /// Everything after the command name that is not a global option, in order, with `--` kept.
    package var rest: [String] = []
}

package enum ArgumentParser {
    /// Splits `arguments` (without the program name) into global options, command name and the rest.
    package static func split(_ arguments: [String]) throws(UsageError) -> CommandLineInvocation {
        var result = CommandLineInvocation()
        var index = 0
        var endOfOptions = false
        func takeValue(_ name: String, inline: String?) throws(UsageError) -> String {
            if let inline { return inline }
            index += 1
            guard index < arguments.count else {
                throw UsageError("missing value for '--\(name)'", command: result.command)
            }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            defer { index += 1 }
            if endOfOptions {
                result.rest.append(argument)
                continue
            }
            if argument == "--" {
                endOfOptions = true
                if result.command != nil { result.rest.append(argument) }
                continue
            }
            let (name, inline) = splitLong(argument)
            switch name {
            case "root"?:
                if result.globals.root != nil { throw UsageError("'--root' given twice", command: result.command) }
                let value = try takeValue("root", inline: inline)
                guard !value.isEmpty else { throw UsageError("'--root' needs a folder", command: result.command) }
                result.globals.root = value
                continue
            case "socket"?:
                if result.globals.socket != nil { throw UsageError("'--socket' given twice", command: result.command) }
                let value = try takeValue("socket", inline: inline)
                guard !value.isEmpty else { throw UsageError("'--socket' needs a path", command: result.command) }
                result.globals.socket = value
                continue
            case "backend"?:
                if result.globals.backend != nil { throw UsageError("'--backend' given twice", command: result.command) }
                let value = try takeValue("backend", inline: inline)
                guard value.hasPrefix("s3://") else { throw UsageError("'--backend' takes s3://BUCKET[/PREFIX] (got '\(value)')", command: result.command) }
                result.globals.backend = value
                continue
            case "wait"?:
                if result.globals.wait != nil { throw UsageError("'--wait' given twice", command: result.command) }
                result.globals.wait = try takeValue("wait", inline: inline)
                continue
            case "json"?:
                if inline != nil { throw UsageError("'--json' takes no value", command: result.command) }
                result.globals.json = true
                continue
            case "help"?:
                result.globals.help = true
                continue
            case "version"? where result.command == nil:
                result.globals.version = true
                continue
            default:
                break
            }
            if argument == "-h" {
                result.globals.help = true
                continue
            }
            if result.command == nil {
                if argument.hasPrefix("-") && argument != "-" {
                    let hint = name.map { Suggestions.hint(for: $0, among: GlobalOptions.specs.map(\.long) + ["version"], prefix: "--") } ?? ""
                    throw UsageError("unknown option '\(argument)'\(hint)", command: nil)
                }
                result.command = argument
            } else {
                result.rest.append(argument)
            }
        }
        if result.globals.root != nil && result.globals.socket != nil {
            throw UsageError("'--root' and '--socket' cannot be used together", command: result.command)
        }
        if result.globals.backend != nil && (result.globals.root != nil || result.globals.socket != nil) {
            throw UsageError("'--backend' cannot be used with '\(result.globals.root != nil ? "--root" : "--socket")'", command: result.command)
        }
        return result
    }

    /// Parses a command's own arguments (global options already removed) against its spec.
    package static func parse(_ arguments: [String], spec: CommandSpec) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var endOfOptions = false
        func record(_ option: OptionSpec, _ value: String, as written: String) throws(UsageError) {
            if case .repeatable = option.kind {} else if parsed.options[option.long] != nil {
                throw UsageError("'\(written)' given twice", command: spec.name)
            }
            parsed.options[option.long, default: []].append(value)
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if endOfOptions || argument == "-" || !argument.hasPrefix("-") {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                endOfOptions = true
                continue
            }
            if argument.hasPrefix("--") {
                let (nameOrNil, inline) = splitLong(argument)
                let name = nameOrNil ?? ""
                guard let option = spec.option(long: name) else {
                    let known = spec.options.map(\.long) + GlobalOptions.specs.map(\.long)
                    let hint = Suggestions.hint(for: name, among: known, prefix: "--")
                    throw UsageError("unknown option '--\(name)'\(hint)", command: spec.name)
                }
                if option.takesValue {
                    let value: String
                    if let inline {
                        value = inline
                    } else {
                        guard index < arguments.count else {
                            throw UsageError("missing value for '--\(name)'", command: spec.name)
                        }
                        value = arguments[index]
                        index += 1
                    }
                    try record(option, value, as: "--\(name)")
                } else {
                    if inline != nil { throw UsageError("'--\(name)' takes no value", command: spec.name) }
                    try record(option, "", as: "--\(name)")
                }
                continue
            }
            // Short options: `-o FILE`, `-oFILE`, or a cluster of flags.
            var characters = Substring(argument.dropFirst())
            while let first = characters.first {
                characters = characters.dropFirst()
                guard let option = spec.option(short: first) else {
                    // `-type` for `--type`: a long name written with one dash.
                    let word = String(argument.dropFirst())
                    let hint = spec.option(long: word) != nil ? ". Did you mean '--\(word)'?" : ""
                    throw UsageError("unknown option '-\(first)'\(hint)", command: spec.name)
                }
                if option.takesValue {
                    let value: String
                    if !characters.isEmpty {
                        value = String(characters)
                    } else {
                        guard index < arguments.count else {
                            throw UsageError("missing value for '-\(first)'", command: spec.name)
                        }
                        value = arguments[index]
                        index += 1
                    }
                    try record(option, value, as: "-\(first)")
                    break
                }
                try record(option, "", as: "-\(first)")
            }
        }
        try checkPositionals(parsed.positionals, spec: spec)
        return parsed
    }

    private static func checkPositionals(_ positionals: [String], spec: CommandSpec) throws(UsageError) {
        let required = spec.arguments.filter { !$0.optional }
        if positionals.count < required.count {
            throw UsageError("missing \(required[positionals.count].metavar)", command: spec.name)
        }
        let variadic = spec.arguments.last?.variadic ?? false
        if !variadic && positionals.count > spec.arguments.count {
            throw UsageError("unexpected argument '\(positionals[spec.arguments.count])'", command: spec.name)
        }
    }

    /// `--name=value` → ("name", "value"); `--name` → ("name", nil); anything else → (nil, nil).
    static func splitLong(_ argument: String) -> (String?, String?) {
        guard argument.hasPrefix("--"), argument.count > 2 else { return (nil, nil) }
        let body = argument.dropFirst(2)
        if let equals = body.firstIndex(of: "=") {
            return (String(body[..<equals]), String(body[body.index(after: equals)...]))
        }
        return (String(body), nil)
    }
}
