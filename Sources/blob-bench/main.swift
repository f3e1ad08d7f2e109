import BlobServer
import Glibc

// Everything lives in `Runner`, outside top-level code: closures written here would be inferred
// @MainActor and trap when a queue or thread calls them.
//
// `blob-bench __blobd ARGS` is the daemon the daemon scenarios start as a child process: the same
// `Daemon.run` and command line as `blobd`, so measuring it needs no separately built `blobd` binary.
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == BenchDaemon.childCommand {
    switch DaemonCommandLine.parse(Array(CommandLine.arguments.dropFirst(2))) {
    case .run(let configuration): exit(Daemon.run(configuration))
    case .help, .version: exit(0)
    case .usageError(let message):
        Console.progress("blob-bench \(BenchDaemon.childCommand): \(message)")
        exit(64)
    }
}
// `blob-bench __floor-http FOLDER SOCKET`: the daemon-get scenario's least-work server (FloorServer).
if let status = FloorServer.runIfChild(CommandLine.arguments) { exit(status) }
// `blob-bench __scale-open …` / `__scale-list …`: the scale scenario's fresh-process measurements.
if let status = await ScaleChild.runIfChild(CommandLine.arguments) { exit(status) }
exit(await Runner.run(CommandLine.arguments))
