import BlobCLI

#if canImport(Glibc)
import Glibc
#endif

exit(await BlobCLI.run(CommandLine.arguments))
