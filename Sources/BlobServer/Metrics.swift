import BlobStore
import BlobSystem
import Foundation

/// What a request did, for per-operation metrics.
enum MetricOperation: Int, CaseIterable, Sendable {
    case get, head, put, delete, list, deleteAll, stores, events, health, metrics, verify, other

    /// The Prometheus label value.
    var label: String {
        switch self {
        case .get: return "get"
        case .head: return "head"
        case .put: return "put"
        case .delete: return "delete"
        case .list: return "list"
        case .deleteAll: return "delete_all"
        case .stores: return "stores"
        case .events: return "events"
        case .health: return "health"
        case .metrics: return "metrics"
        case .verify: return "verify"
        case .other: return "other"
        }
    }
}

/// The daemon's counters and latency histograms, exposed at `GET /metrics` in Prometheus text format.
///
/// Each event loop records into its own shard (its own lock, so loops never contend); a scrape
/// sums the shards. Connection counts are shared and change rarely.
final class Metrics: Sendable {
    /// Upper bounds of the latency buckets, in seconds.
    static let bucketBounds: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    struct Shard {
        var requests = [UInt64](repeating: 0, count: MetricOperation.allCases.count)
        var errors = [UInt64](repeating: 0, count: MetricOperation.allCases.count)
        /// Per operation: one count per bucket bound (not cumulative) plus one for +Inf.
        var buckets = [[UInt64]](repeating: [UInt64](repeating: 0, count: Metrics.bucketBounds.count + 1), count: MetricOperation.allCases.count)
        var seconds = [Double](repeating: 0, count: MetricOperation.allCases.count)
        var bytesIn: UInt64 = 0
        var bytesOut: UInt64 = 0
    }

    private let shards: [Locked<Shard>]
    private let connections = Locked((open: 0, accepted: UInt64(0), refused: UInt64(0)))

    init(shards count: Int) {
        shards = (0..<max(1, count)).map { _ in Locked(Shard()) }
    }

    /// Records one finished request on loop `shard`. Errors are responses with status ≥ 400.
    func record(shard: Int, operation: MetricOperation, status: Int, seconds: Double, bytesIn: Int64, bytesOut: Int64) {
        let bucket = Metrics.bucketBounds.firstIndex { seconds <= $0 } ?? Metrics.bucketBounds.count
        shards[shard % shards.count].withLock { shard in
            let op = operation.rawValue
            shard.requests[op] += 1
            if status >= 400 { shard.errors[op] += 1 }
            shard.buckets[op][bucket] += 1
            shard.seconds[op] += seconds
            shard.bytesIn += UInt64(max(0, bytesIn))
            shard.bytesOut += UInt64(max(0, bytesOut))
        }
    }

    /// A connection was accepted (and passed the peer check) or refused.
    func connectionOpened() { connections.withLock { $0.open += 1; $0.accepted += 1 } }
    /// An accepted connection closed.
    func connectionClosed() { connections.withLock { $0.open -= 1 } }
    /// A peer failed the credentials check.
    func connectionRefused() { connections.withLock { $0.refused += 1 } }

    /// The metrics page. `stores` are the per-store totals to include as gauges, with each store's
    /// memory tier figures where it has a tier.
    func render(stores: [(name: String, statistics: StoreStatistics, memoryTier: MemoryTierStatistics?)], eventSubscribers: Int) -> [UInt8] {
        var total = Shard()
        for shard in shards {
            shard.withLock { shard in
                for op in 0..<MetricOperation.allCases.count {
                    total.requests[op] += shard.requests[op]
                    total.errors[op] += shard.errors[op]
                    total.seconds[op] += shard.seconds[op]
                    for b in 0..<total.buckets[op].count { total.buckets[op][b] += shard.buckets[op][b] }
                }
                total.bytesIn += shard.bytesIn
                total.bytesOut += shard.bytesOut
            }
        }
        let connection = connections.withLock { $0 }
        var text = ""
        func family(_ name: String, _ type: String, _ help: String) { text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n" }
        family("blobd_requests_total", "counter", "Requests answered, by operation.")
        for op in MetricOperation.allCases { text += "blobd_requests_total{operation=\"\(op.label)\"} \(total.requests[op.rawValue])\n" }
        family("blobd_request_errors_total", "counter", "Requests answered with a status of 400 or more, by operation.")
        for op in MetricOperation.allCases { text += "blobd_request_errors_total{operation=\"\(op.label)\"} \(total.errors[op.rawValue])\n" }
        family("blobd_request_duration_seconds", "histogram", "Time from a request's head to its response, by operation.")
        for op in MetricOperation.allCases {
            var cumulative: UInt64 = 0
            for (index, bound) in Metrics.bucketBounds.enumerated() {
                cumulative += total.buckets[op.rawValue][index]
                text += "blobd_request_duration_seconds_bucket{operation=\"\(op.label)\",le=\"\(bound)\"} \(cumulative)\n"
            }
            cumulative += total.buckets[op.rawValue][Metrics.bucketBounds.count]
            text += "blobd_request_duration_seconds_bucket{operation=\"\(op.label)\",le=\"+Inf\"} \(cumulative)\n"
            text += "blobd_request_duration_seconds_sum{operation=\"\(op.label)\"} \(total.seconds[op.rawValue])\n"
            text += "blobd_request_duration_seconds_count{operation=\"\(op.label)\"} \(cumulative)\n"
        }
        family("blobd_received_bytes_total", "counter", "Request body bytes received.")
        text += "blobd_received_bytes_total \(total.bytesIn)\n"
        family("blobd_sent_bytes_total", "counter", "Response body bytes sent.")
        text += "blobd_sent_bytes_total \(total.bytesOut)\n"
        family("blobd_open_connections", "gauge", "Connections open now.")
        text += "blobd_open_connections \(connection.open)\n"
        family("blobd_accepted_connections_total", "counter", "Connections accepted.")
        text += "blobd_accepted_connections_total \(connection.accepted)\n"
        family("blobd_refused_connections_total", "counter", "Connections refused by the peer credentials check.")
        text += "blobd_refused_connections_total \(connection.refused)\n"
        family("blobd_event_subscribers", "gauge", "Clients following /v1/events.")
        text += "blobd_event_subscribers \(eventSubscribers)\n"
        family("blobstore_store_blobs", "gauge", "Blobs per store.")
        for store in stores { text += "blobstore_store_blobs{store=\"\(store.name)\"} \(store.statistics.count)\n" }
        family("blobstore_store_bytes", "gauge", "Content bytes per store.")
        for store in stores { text += "blobstore_store_bytes{store=\"\(store.name)\"} \(store.statistics.bytes)\n" }
        MemoryTierMetrics.render(stores.compactMap { store in store.memoryTier.map { (store.name, $0) } }, into: &text)
        return Array(text.utf8)
    }
}
