/// The parsed command line of `blob-bench`.
///
/// Parsed by hand because the package has no dependencies (no swift-argument-parser).
struct Arguments: Sendable {
    /// Short counts and fewer repetitions, for CI (the whole run stays under a minute).
    var quick = false
    /// Repetitions per case; `nil` means the mode's default (5, or 3 with `--quick`).
    var repeatCount: Int?
    /// Where to write the JSON report, if anywhere.
    var jsonPath: String?
    /// Parent folder of the temp roots (default `/tmp`).
    var directory = "/tmp"
    /// Scenario names to run, in the order given; empty means all.
    var selected: [String] = []
    /// Print the scenarios and exit.
    var listOnly = false
    /// Print usage and exit.
    var helpOnly = false
    /// Blobs in the `scale` scenario's big store; `nil` means its default (1M, or 30k with `--quick`).
    var scaleCount: Int?

    /// Repetitions to run once the mode is known.
    var repetitions: Int { repeatCount ?? (quick ? 3 : 5) }

    static let usage = """
        usage: blob-bench [options] [SCENARIO ...]

        Measures the embedded PersistentDataStore against a raw POSIX loop and the
        article's DispatchQueue + FileManager store, side by side in one run.

        options:
          --quick            short counts and 3 repetitions (CI; under a minute)
          --repeat N         repetitions per case (default 5; 3 with --quick)
          --only A,B         run only these scenarios (same as naming them)
          --json FILE        also write the results as JSON to FILE
          --dir PATH         parent folder for the temp roots (default /tmp)
          --scale-count N    blobs in the scale scenario's big store (default 1000000; 30000 with --quick)
          --list             list the scenarios and exit
          -h, --help         show this help and exit
        """

    /// A command-line mistake, reported with the usage text and exit status 2.
    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    /// Parses `arguments` (without the program name). Scenario names are checked later against the catalogue.
    static func parse(_ arguments: [String]) throws(UsageError) -> Arguments {
        var result = Arguments()
        var index = 0
        /// The value of an option given as `--name VALUE` or `--name=VALUE`.
        func value(_ option: String, inline: String?) throws(UsageError) -> String {
            if let inline { return inline }
            index += 1
            guard index < arguments.count else { throw UsageError(description: "\(option) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            var option = argument
            var inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                option = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            switch option {
            case "--quick":
                result.quick = true
            case "--repeat":
                let text = try value(option, inline: inline)
                guard let count = Int(text), count >= 1, count <= 1000 else {
                    throw UsageError(description: "--repeat wants a whole number from 1 to 1000, not '\(text)'")
                }
                result.repeatCount = count
            case "--only":
                let names = try value(option, inline: inline).split(separator: ",").map { String($0) }
                guard !names.isEmpty else { throw UsageError(description: "--only wants scenario names separated by commas") }
                result.selected += names
            case "--json":
                result.jsonPath = try value(option, inline: inline)
            case "--dir":
                let path = try value(option, inline: inline)
                guard !path.isEmpty else { throw UsageError(description: "--dir wants a folder") }
                result.directory = path
            case "--scale-count":
                let text = try value(option, inline: inline)
                guard let count = Int(text), count >= 20_000, count <= 100_000_000 else {
                    throw UsageError(description: "--scale-count wants a whole number from 20000 to 100000000, not '\(text)'")
                }
                result.scaleCount = count
            case "--list":
                result.listOnly = true
            case "-h", "--help":
                result.helpOnly = true
            default:
                if argument.hasPrefix("-") { throw UsageError(description: "unknown option '\(argument)'") }
                result.selected.append(argument)
            }
            index += 1
        }
        return result
    }
}
