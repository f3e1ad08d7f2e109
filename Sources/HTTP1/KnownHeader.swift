/// Header names the codec and the daemon look up often.
///
/// Every field is classified once, while it is parsed or appended, so a lookup by known name
/// compares one byte per field instead of the name's bytes.
package enum KnownHeader: UInt8, Sendable, CaseIterable {
    /// `Accept`
    case accept = 1
    /// `Accept-Ranges`
    case acceptRanges
    /// `Allow`
    case allow
    /// `Authorization`
    case authorization
    /// `Cache-Control`
    case cacheControl
    /// `Connection`
    case connection
    /// `Content-Encoding`
    case contentEncoding
    /// `Content-Length`
    case contentLength
    /// `Content-Range`
    case contentRange
    /// `Content-Type`
    case contentType
    /// `Date`
    case date
    /// `ETag`
    case etag
    /// `Expect`
    case expect
    /// `Host`
    case host
    /// `If-Match`
    case ifMatch
    /// `If-Modified-Since`
    case ifModifiedSince
    /// `If-None-Match`
    case ifNoneMatch
    /// `If-Unmodified-Since`
    case ifUnmodifiedSince
    /// `Last-Event-ID`
    case lastEventID
    /// `Last-Modified`
    case lastModified
    /// `Location`
    case location
    /// `Range`
    case range
    /// `Retry-After`
    case retryAfter
    /// `Server`
    case server
    /// `Transfer-Encoding`
    case transferEncoding
    /// `User-Agent`
    case userAgent

    /// The conventional spelling, used when serializing.
    package var name: StaticString {
        switch self {
        case .accept: "Accept"
        case .acceptRanges: "Accept-Ranges"
        case .allow: "Allow"
        case .authorization: "Authorization"
        case .cacheControl: "Cache-Control"
        case .connection: "Connection"
        case .contentEncoding: "Content-Encoding"
        case .contentLength: "Content-Length"
        case .contentRange: "Content-Range"
        case .contentType: "Content-Type"
        case .date: "Date"
        case .etag: "ETag"
        case .expect: "Expect"
        case .host: "Host"
        case .ifMatch: "If-Match"
        case .ifModifiedSince: "If-Modified-Since"
        case .ifNoneMatch: "If-None-Match"
        case .ifUnmodifiedSince: "If-Unmodified-Since"
        case .lastEventID: "Last-Event-ID"
        case .lastModified: "Last-Modified"
        case .location: "Location"
        case .range: "Range"
        case .retryAfter: "Retry-After"
        case .server: "Server"
        case .transferEncoding: "Transfer-Encoding"
        case .userAgent: "User-Agent"
        }
    }

    /// ``name`` as a buffer, for the serializer.
    var nameBytes: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
    }

    /// Classifies a field name that already passed the token check, ignoring case.
    ///
    /// - Returns: the raw value of the known name, or 0.
    @inline(__always)
    static func classify(_ name: UnsafePointer<UInt8>, count: Int) -> UInt8 {
        // Dispatching on length first means most names are compared with one or two constants.
        let known: KnownHeader?
        switch count {
        case 4:
            known = equalsLowercase(name, count, "host") ? .host
                : equalsLowercase(name, count, "date") ? .date
                : equalsLowercase(name, count, "etag") ? .etag : nil
        case 5:
            known = equalsLowercase(name, count, "range") ? .range
                : equalsLowercase(name, count, "allow") ? .allow : nil
        case 6:
            known = equalsLowercase(name, count, "accept") ? .accept
                : equalsLowercase(name, count, "expect") ? .expect
                : equalsLowercase(name, count, "server") ? .server : nil
        case 8:
            known = equalsLowercase(name, count, "if-match") ? .ifMatch
                : equalsLowercase(name, count, "location") ? .location : nil
        case 10:
            known = equalsLowercase(name, count, "connection") ? .connection
                : equalsLowercase(name, count, "user-agent") ? .userAgent : nil
        case 11:
            known = equalsLowercase(name, count, "retry-after") ? .retryAfter : nil
        case 12:
            known = equalsLowercase(name, count, "content-type") ? .contentType : nil
        case 13:
            known = equalsLowercase(name, count, "if-none-match") ? .ifNoneMatch
                : equalsLowercase(name, count, "last-event-id") ? .lastEventID
                : equalsLowercase(name, count, "content-range") ? .contentRange
                : equalsLowercase(name, count, "last-modified") ? .lastModified
                : equalsLowercase(name, count, "accept-ranges") ? .acceptRanges
                : equalsLowercase(name, count, "authorization") ? .authorization
                : equalsLowercase(name, count, "cache-control") ? .cacheControl : nil
        case 14:
            known = equalsLowercase(name, count, "content-length") ? .contentLength : nil
        case 16:
            known = equalsLowercase(name, count, "content-encoding") ? .contentEncoding : nil
        case 17:
            known = equalsLowercase(name, count, "transfer-encoding") ? .transferEncoding
                : equalsLowercase(name, count, "if-modified-since") ? .ifModifiedSince : nil
        case 19:
            known = equalsLowercase(name, count, "if-unmodified-since") ? .ifUnmodifiedSince : nil
        default:
            known = nil
        }
        return known?.rawValue ?? 0
    }
}
