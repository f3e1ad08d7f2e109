import BlobServer

#if canImport(Glibc)
import Glibc
#endif

// Thin on purpose: top-level code is @MainActor-isolated, so the threads, signal handling and
// callbacks all live in BlobServer, and this file only parses arguments and blocks in Daemon.run.
switch DaemonCommandLine.parse(Array(CommandLine.arguments.dropFirst())) {
case .help:
    print(DaemonCommandLine.usage)
    exit(0)
case .version:
    print("blobd \(DaemonCommandLine.version)")
    exit(0)
case .usageError(let message):
    Log.write("blobd: \(message) (try blobd --help)")
    exit(64)
case .run(let configuration):
    exit(Daemon.run(configuration))
}
