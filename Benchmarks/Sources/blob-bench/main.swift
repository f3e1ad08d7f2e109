import Glibc

// Everything lives in `Runner`, outside top-level code: closures written here would be inferred
// @MainActor and trap when a queue or thread calls them.
//
// `blob-bench __floor-http FOLDER SOCKET`: the daemon-get scenario's least-work server (FloorServer).
if let status = FloorServer.runIfChild(CommandLine.arguments) { exit(status) }
// `blob-bench __scale-open …` / `__scale-list …`: the scale scenario's fresh-process measurements.
if let status = await ScaleChild.runIfChild(CommandLine.arguments) { exit(status) }
exit(await Runner.run(CommandLine.arguments))
