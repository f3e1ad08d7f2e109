import Foundation

/// The completion-handler API of the article this store grew from ("Creating persistent data store
/// on iOS"), with the same names, meaning and call order; see ``ArticleDataStoring``.
///
/// Every ``PersistentDataStore`` on the same folder shares one ``articleCallOrder`` (they share one
/// engine), so article calls made through any of them are ordered together.
extension PersistentDataStore: ArticleDataStoring {
    /// The article's name for identifiers.
    public typealias Identifier = String

    /// The outcome of `storeData` and `storeImage`, under the article's name.
    public typealias Result = StoreDataResult

    /// Opens (creating if needed) the store `name` under the default root, as in the article.
    public convenience init(name: String) throws {
        try self.init(name: name, root: StoreRoot.defaultURL)
    }

    /// The order of the article calls made through any store on this folder.
    public var articleCallOrder: ArticleCallOrder { core.articleCallOrder }
}
