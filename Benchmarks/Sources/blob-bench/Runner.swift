import Foundation
import Glibc

/// The command: parses arguments, runs the chosen scenarios one after another in fresh temp roots,
/// prints the table and writes the JSON.
enum Runner {
    /// Runs the command line `arguments` (program name first); returns the exit status.
    static func run(_ arguments: [String]) async -> Int32 {
        let options: Arguments
        do {
            options = try Arguments.parse(Array(arguments.dropFirst()))
        } catch {
            Console.progress("blob-bench: \(error)\n\n\(Arguments.usage)")
            return 2
        }
        if options.helpOnly {
            print(Arguments.usage)
            return 0
        }
        if options.listOnly {
            let width = Catalogue.all.map(\.name.count).max() ?? 0
            for scenario in Catalogue.all {
                print(scenario.name + String(repeating: " ", count: width - scenario.name.count) + "  " + scenario.summary)
            }
            return 0
        }
        var scenarios: [any Scenario] = []
        for name in options.selected {
            guard let scenario = Catalogue.all.first(where: { $0.name == name }) else {
                Console.progress("blob-bench: no scenario '\(name)' (see --list)")
                return 2
            }
            if !scenarios.contains(where: { $0.name == name }) { scenarios.append(scenario) }
        }
        if scenarios.isEmpty { scenarios = Catalogue.all }

        // One temp root per run, one fresh folder per scenario inside it; emptied as the run goes, deleted at its end.
        let runRoot = options.directory + "/blob-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var cases: [CaseResult] = []
        var createRate = 0.0
        let started = ContinuousClock.now
        do {
            try Files.makeDirectories(runRoot)
            InodeSpreading.mark(runRoot)
            createRate = CreateProbe.createsPerSecond(in: runRoot)
            if createRate < CreateProbe.slowThreshold {
                Console.progress(
                    "warning: creating files is slow right now (\(Report.compact(createRate))/s; usually 25–55k/s here), probably because "
                        + "many files were deleted in the last 5 minutes; create-heavy ratios will be pulled toward 1. Wait and rerun.")
            }
            for scenario in scenarios {
                let root = runRoot + "/" + scenario.name
                try Files.makeDirectories(root)
                InodeSpreading.mark(root)
                let context = ScenarioContext(quick: options.quick, repetitions: options.repetitions, root: root)
                Console.progress("== \(scenario.name)")
                cases += try await scenario.run(context)
                Cleanup.release(root)
            }
        } catch {
            try? Cleanup.removeAll(runRoot)
            Console.progress("blob-bench: \(error)")
            return 1
        }
        Console.progress("total time \(started.duration(to: .now).formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1))))")

        let report = Report(environment: environment(options, arguments: arguments, createRate: createRate), cases: cases)
        print(report.table(), terminator: "")
        var status: Int32 = 0
        if let path = options.jsonPath {
            do {
                try report.json().write(to: URL(fileURLWithPath: path))
            } catch {
                Console.progress("blob-bench: cannot write \(path): \(error)")
                status = 1
            }
        }
        do {
            try Cleanup.removeAll(runRoot)
        } catch {
            Console.progress("blob-bench: cannot remove \(runRoot): \(error)")
            status = 1
        }
        return status
    }

    private static func environment(_ options: Arguments, arguments: [String], createRate: Double) -> Report.Environment {
        let info = ProcessInfo.processInfo
        return Report.Environment(
            date: ISO8601DateFormatter().string(from: Date()), host: info.hostName, processors: info.activeProcessorCount,
            memoryBytes: info.physicalMemory, directory: options.directory, quick: options.quick, repetitions: options.repetitions,
            command: arguments.joined(separator: " "), createsPerSecond: createRate)
    }
}
