/// The version of the BlobStore package, printed by `blob --version` and `blobd --version`
/// (one constant, so the tool and the daemon built from the same tree always agree).
public let BlobStoreVersion = "0.1.0"
