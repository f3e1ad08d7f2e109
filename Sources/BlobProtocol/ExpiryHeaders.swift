import BlobStore
import Foundation

/// A blob's expiry in header fields (docs/PROTOCOL.md, "Expiry"): what a PUT asks for
/// (`Blob-Expires`, `Cache-Control: max-age=N`) and what a response says (`Blob-Expires`, `Expires`).
package enum ExpiryHeaders {
    /// `Blob-Expires: never`: the blob never expires, whatever the store's default time to live.
    package static let never = "never"
    /// The HTTP field a response states the expiry in for HTTP caches, as an IMF-fixdate.
    package static let httpExpires = "Expires"

    /// The expiry a PUT asks for with `blobExpires` (the `Blob-Expires` value) and `cacheControl`
    /// (the `Cache-Control` values, comma-joined); ``BlobExpiry/storeDefault`` when it says nothing.
    /// Both together, a value that is no date or `never`, or a `max-age` that is not 0 …
    /// ``PolicyJSON/maximumTimeToLiveSeconds`` are refused with a sentence that says so.
    package static func expiry(blobExpires: String?, cacheControl: String?) throws(PolicyJSON.Refusal) -> BlobExpiry {
        let maxAge = try cacheControl.flatMap { (value: String) throws(PolicyJSON.Refusal) -> Int64? in try maximumAge(in: value) }
        guard let text = blobExpires?.trimmingCharacters(in: .whitespaces) else {
            return maxAge.map { .after(.seconds($0)) } ?? .storeDefault
        }
        guard maxAge == nil else {
            throw PolicyJSON.Refusal("send either \(HeaderName.expires.rawValue) or Cache-Control: max-age, not both")
        }
        if text.lowercased() == never { return .never }
        guard let date = HTTPDates.parseRFC3339(text) ?? HTTPDates.parseIMFFixdate(text) else {
            throw PolicyJSON.Refusal(
                "\(HeaderName.expires.rawValue) must be 'never', an RFC 3339 date (2026-11-24T10:00:00Z) or an HTTP date (Tue, 24 Nov 2026 10:00:00 GMT); got '\(text.prefix(64))'")
        }
        return .at(date)
    }

    /// The `max-age` directive's seconds in a `Cache-Control` value, `nil` when it has none; other
    /// directives are ignored.
    private static func maximumAge(in value: String) throws(PolicyJSON.Refusal) -> Int64? {
        var found: Int64?
        for directive in value.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.first?.lowercased() == "max-age" else { continue }
            let digits = parts.count == 2 ? parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : ""
            guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let seconds = Int64(digits),
                seconds <= PolicyJSON.maximumTimeToLiveSeconds
            else {
                throw PolicyJSON.Refusal(
                    "Cache-Control: max-age must be a whole number of seconds from 0 to \(PolicyJSON.maximumTimeToLiveSeconds); got '\(directive.trimmingCharacters(in: .whitespaces).prefix(64))'")
            }
            guard found == nil || found == seconds else { throw PolicyJSON.Refusal("Cache-Control has two different max-age directives") }
            found = seconds
        }
        return found
    }

    /// The request fields that ask for `expiry` (none for ``BlobExpiry/storeDefault``). A duration
    /// goes as `max-age`, in whole seconds rounded up (HTTP has no finer unit there).
    package static func requestFields(_ expiry: BlobExpiry) -> [(name: String, value: String)] {
        switch expiry {
        case .storeDefault: return []
        case .never: return [(HeaderName.expires.rawValue, never)]
        case .at(let date): return [(HeaderName.expires.rawValue, HTTPDates.rfc3339(date))]
        case .after(let duration):
            let milliseconds = max(0, PolicyJSON.milliseconds(duration))
            return [("Cache-Control", "max-age=\((milliseconds + 999) / 1000)")]
        }
    }

    /// The response fields stating `expires`: `Blob-Expires` (RFC 3339) and `Expires` (IMF-fixdate).
    package static func responseFields(_ expires: Date) -> [(name: String, value: String)] {
        [(HeaderName.expires.rawValue, HTTPDates.rfc3339(expires)), (httpExpires, HTTPDates.imfFixdate(expires))]
    }
}
