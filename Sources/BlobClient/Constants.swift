#if canImport(Glibc)
import Glibc
#endif

/// `EPIPE`, spelled once so files that do not import Glibc can compare errnos.
let EPIPE_: Int32 = EPIPE
/// `ECONNRESET`.
let ECONNRESET_: Int32 = ECONNRESET
