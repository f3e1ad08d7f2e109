/// Whether an acknowledged change is already on stable storage.
public enum Durability: String, Sendable, Hashable, Codable, CaseIterable {
    /// Acknowledged means on disk: temp file synced, renamed, directory synced. The default.
    case durable
    /// No syncs: a crash may lose recent changes (never tear a blob). For caches.
    case relaxed
}
