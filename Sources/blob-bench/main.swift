import Glibc

// Everything lives in `Runner`, outside top-level code: closures written here would be inferred
// @MainActor and trap when a queue or thread calls them.
exit(await Runner.run(CommandLine.arguments))
