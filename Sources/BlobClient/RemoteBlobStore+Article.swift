import BlobStore

/// The article's completion-handler API (`storeData`, `loadData`, `removeData`, `removeAll`,
/// `storeImage`, `loadImage`) with the same names, meaning and call order as the embedded stores;
/// see ``ArticleDataStoring``.
///
/// The order covers the calls made through one `RemoteBlobStore` instance (``BlobClient/store(_:)``
/// makes a new one each time): keep the instance to keep the order. Other instances, processes and
/// HTTP clients of the daemon are not ordered with it.
extension RemoteBlobStore: ArticleDataStoring {}
