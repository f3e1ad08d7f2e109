// The shared test helpers (Tests/BlobTestSupport), visible in every file of this target.
@_exported import BlobTestSupport
