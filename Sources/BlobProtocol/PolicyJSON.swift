import BlobStore
import Foundation

/// A store's cache policy on the wire (docs/PROTOCOL.md, "Store policy"): the policy object
/// `{"maxBytes":…,"maxCount":…,"defaultTTL":…}` (`null` for no limit), the store object of
/// `GET /v1/stores/{store}`, and the update a `PUT /v1/stores/{store}` sends.
package enum PolicyJSON {
    /// The member holding ``StorePolicy/maximumBytes``.
    package static let maxBytes = "maxBytes"
    /// The member holding ``StorePolicy/maximumCount``.
    package static let maxCount = "maxCount"
    /// The member holding ``StorePolicy/defaultTimeToLive``, in seconds.
    package static let defaultTTL = "defaultTTL"
    /// The largest policy document a PUT may send.
    package static let bodyLimit = 64 * 1024
    /// The longest time to live, in seconds (100 years of 365.25 days): far beyond any cache's
    /// need, and small enough that every date it makes is one the protocol can write.
    package static let maximumTimeToLiveSeconds: Int64 = 3_155_760_000

    // MARK: Encoding

    /// Appends the policy object; a time to live is written in seconds, with up to three decimals.
    package static func append(_ policy: StorePolicy, into out: inout [UInt8]) {
        out.append(contentsOf: #"{"maxBytes":"#.utf8)
        out.append(contentsOf: (policy.maximumBytes.map { String($0) } ?? "null").utf8)
        out.append(contentsOf: #","maxCount":"#.utf8)
        out.append(contentsOf: (policy.maximumCount.map { String($0) } ?? "null").utf8)
        out.append(contentsOf: #","defaultTTL":"#.utf8)
        out.append(contentsOf: (policy.defaultTimeToLive.map(seconds) ?? "null").utf8)
        out.append(0x7D)
    }

    /// The policy object on its own: the body a client sends to set every field at once.
    package static func encode(_ policy: StorePolicy) -> [UInt8] {
        var out: [UInt8] = []
        append(policy, into: &out)
        return out
    }

    /// An update as a `PUT /v1/stores/{store}` body: only the members it changes (`null` lifts a limit).
    package static func encode(_ update: Update) -> [UInt8] {
        var members: [String] = []
        if let value = update.maximumBytes { members.append("\"\(maxBytes)\":\(value.map { String($0) } ?? "null")") }
        if let value = update.maximumCount { members.append("\"\(maxCount)\":\(value.map { String($0) } ?? "null")") }
        if let value = update.defaultTimeToLive { members.append("\"\(defaultTTL)\":\(value.map(seconds) ?? "null")") }
        return Array("{\(members.joined(separator: ","))}".utf8)
    }

    /// `duration` as seconds with at most three decimals (millisecond precision), e.g. `604800`, `1.5`.
    package static func seconds(_ duration: Duration) -> String {
        let milliseconds = milliseconds(duration)
        let (whole, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        guard fraction != 0 else { return String(whole) }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(whole).\(digits)"
    }

    /// `duration` in whole milliseconds, rounded up (a time to live is never shortened).
    package static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let perMillisecond: Int64 = 1_000_000_000_000_000
        let (milliseconds, rest) = attoseconds.quotientAndRemainder(dividingBy: perMillisecond)
        return seconds.multipliedReportingOverflow(by: 1000).partialValue + milliseconds + (rest > 0 ? 1 : 0)
    }

    /// The store object: `{"name":…,"count":…,"bytes":…,"policy":{policy object}}`.
    package static func encodeStore(name: String, statistics: StoreStatistics, policy: StorePolicy) -> [UInt8] {
        var out: [UInt8] = Array(#"{"name":"#.utf8)
        JSONText.appendString(name, into: &out)
        out.append(contentsOf: #","count":\#(statistics.count),"bytes":\#(statistics.bytes),"policy":"#.utf8)
        append(policy, into: &out)
        out.append(0x7D)
        return out
    }

    // MARK: Updates

    /// What a `PUT /v1/stores/{store}` changes: each member present replaces its field (`null`
    /// lifts the limit), each absent one keeps it.
    package struct Update: Hashable, Sendable {
        /// The new byte limit (`.some(nil)`: none), or `nil` to keep the current one.
        package var maximumBytes: Int64??
        /// The new count limit (`.some(nil)`: none), or `nil` to keep the current one.
        package var maximumCount: Int??
        /// The new default time to live (`.some(nil)`: none), or `nil` to keep the current one.
        package var defaultTimeToLive: Duration??

        package init(maximumBytes: Int64?? = nil, maximumCount: Int?? = nil, defaultTimeToLive: Duration?? = nil) {
            self.maximumBytes = maximumBytes
            self.maximumCount = maximumCount
            self.defaultTimeToLive = defaultTimeToLive
        }

        /// Whether the update changes nothing (`{}`).
        package var isEmpty: Bool { maximumBytes == nil && maximumCount == nil && defaultTimeToLive == nil }

        /// `policy` with this update's members applied.
        package func applied(to policy: StorePolicy) -> StorePolicy {
            var result = policy
            if let maximumBytes { result.maximumBytes = maximumBytes }
            if let maximumCount { result.maximumCount = maximumCount }
            if let defaultTimeToLive { result.defaultTimeToLive = defaultTimeToLive }
            return result
        }
    }

    /// Why a policy document was refused: a sentence naming the member and its bounds.
    package struct Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        package var description: String
        package init(_ description: String) { self.description = description }
    }

    /// Decodes an update: one JSON object whose members are among `maxBytes` (1 … 2^63−1),
    /// `maxCount` (1 … 2^63−1) and `defaultTTL` (seconds, 0.001 … ``maximumTimeToLiveSeconds``),
    /// each a number or `null`. Anything else is refused, naming the member.
    package static func decodeUpdate(_ bytes: [UInt8]) throws(Refusal) -> Update {
        do {
            return try JSONDecoder().decode(UpdateDocument.self, from: Data(bytes)).update
        } catch let refusal as Refusal {
            throw refusal
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty {
            throw Refusal("the policy must be a JSON object such as {\"maxBytes\":1073741824,\"maxCount\":null,\"defaultTTL\":3600}")
        } catch {
            throw Refusal("the policy is not valid JSON: \(String(decoding: bytes.prefix(100), as: UTF8.self))")
        }
    }

    private struct MemberKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// One JSON value of a member, as the rules need to tell it: `null`, a number or something else.
    private enum Member: Decodable {
        case null
        case integer(Int64)
        case number(Double)
        case other(String)

        init(from decoder: any Decoder) throws {
            let value = try decoder.singleValueContainer()
            if value.decodeNil() {
                self = .null
            } else if let flag = try? value.decode(Bool.self) {
                self = .other(flag ? "true" : "false")
            } else if let integer = try? value.decode(Int64.self) {
                self = .integer(integer)
            } else if let number = try? value.decode(Double.self) {
                self = .number(number)
            } else if let text = try? value.decode(String.self) {
                self = .other("\"\(text.prefix(40))\"")
            } else {
                self = .other("an array or object")
            }
        }

        var text: String {
            switch self {
            case .null: "null"
            case .integer(let value): String(value)
            case .number(let value): String(value)
            case .other(let text): text
            }
        }
    }

    private struct UpdateDocument: Decodable {
        var update = Update()

        init(from decoder: any Decoder) throws {
            let members = try decoder.container(keyedBy: MemberKey.self)
            for key in members.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                let member = try members.decode(Member.self, forKey: key)
                switch key.stringValue {
                case PolicyJSON.maxBytes:
                    update.maximumBytes = .some(try PolicyJSON.limit(member, key: key.stringValue, what: "bytes"))
                case PolicyJSON.maxCount:
                    update.maximumCount = .some(try PolicyJSON.limit(member, key: key.stringValue, what: "blobs").map { Int($0) })
                case PolicyJSON.defaultTTL:
                    update.defaultTimeToLive = .some(try PolicyJSON.timeToLive(member))
                default:
                    throw Refusal(
                        "unknown policy member '\(key.stringValue)'; the members are \(PolicyJSON.maxBytes), \(PolicyJSON.maxCount) and \(PolicyJSON.defaultTTL)")
                }
            }
        }
    }

    /// A whole number from 1 to 2^63−1, or `null` (`nil`).
    private static func limit(_ member: Member, key: String, what: String) throws(Refusal) -> Int64? {
        switch member {
        case .null: return nil
        case .integer(let value) where value >= 1: return value
        default: throw Refusal("\(key) must be a whole number of \(what) from 1 to \(Int64.max), or null for no limit (got \(member.text))")
        }
    }

    /// Seconds from 0.001 to ``maximumTimeToLiveSeconds`` (milliseconds kept), or `null` (`nil`).
    private static func timeToLive(_ member: Member) throws(Refusal) -> Duration? {
        let seconds: Double
        switch member {
        case .null: return nil
        case .integer(let value): seconds = Double(value)
        case .number(let value): seconds = value
        case .other: seconds = .nan
        }
        guard seconds.isFinite, seconds >= 0.001, seconds <= Double(maximumTimeToLiveSeconds) else {
            throw Refusal(
                "\(defaultTTL) must be a number of seconds from 0.001 to \(maximumTimeToLiveSeconds), or null for no expiry (got \(member.text))")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    // MARK: Decoding

    /// The policy object as decoded.
    package struct Wire: Decodable, Sendable {
        var maxBytes: Int64?
        var maxCount: Int?
        var defaultTTL: Double?

        /// The policy it describes.
        package var policy: StorePolicy {
            StorePolicy(
                maximumBytes: maxBytes, maximumCount: maxCount,
                defaultTimeToLive: defaultTTL.map { .milliseconds(Int64(($0 * 1000).rounded())) })
        }
    }

    private struct WireStore: Decodable {
        var name: String
        var count: Int
        var bytes: Int64
        var policy: Wire
    }

    /// Decodes a store object: its name, totals and policy.
    package static func decodeStore(_ bytes: [UInt8]) throws(WireFormatError) -> (name: String, statistics: StoreStatistics, policy: StorePolicy) {
        let store = try MetadataJSON.decode(WireStore.self, bytes)
        return (store.name, StoreStatistics(count: store.count, bytes: store.bytes), store.policy.policy)
    }
}
