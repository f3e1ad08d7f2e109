import BlobStore
import BlobSystem
import Foundation
import Testing

@testable import BlobServer

@Suite struct EventLogTests {
    func change(_ store: String, _ id: String) -> BlobChange {
        BlobChange(sequence: 1, store: store, kind: .removed(identifier: id), date: Date(timeIntervalSince1970: 0))
    }

    /// Takes everything the subscription has now, as separate frames.
    func frames(_ subscription: EventSubscription, limit: Int = .max) -> [String] {
        var out: [UInt8] = []
        _ = subscription.take(into: &out, limit: limit)
        return String(decoding: out, as: UTF8.self).components(separatedBy: "\n\n").dropLast().map { $0 + "\n\n" }
    }

    @Test func subscribersGetNumberedFramesForTheirStoreOnly() {
        let log = EventLog(capacity: 10, firstID: 100)
        let all = log.subscribe(store: nil, after: nil) {}
        let photos = log.subscribe(store: "photos", after: nil) {}
        log.append(change("photos", "a"))
        log.append(change("docs", "b"))
        let allFrames = frames(all)
        #expect(allFrames.count == 2)
        #expect(allFrames[0].hasPrefix("id: 100\nevent: removed\ndata: {\"store\":\"photos\",\"identifier\":\"a\""))
        #expect(allFrames[1].hasPrefix("id: 101\n"))
        #expect(allFrames.allSatisfy { $0.hasSuffix("\n\n") })
        #expect(frames(photos).count == 1)
    }

    @Test func reconnectingWithLastEventIDReplaysWhatWasMissed() {
        let log = EventLog(capacity: 10, firstID: 1)
        for i in 0..<5 { log.append(change("s", "\(i)")) }
        let resumed = log.subscribe(store: nil, after: 3) {}
        let replay = frames(resumed)
        #expect(replay.map { $0.split(separator: "\n")[0] } == ["id: 4", "id: 5"])
    }

    /// Frames are encoded when first needed (a live subscriber, or a replay): the same bytes either way.
    @Test func framesEncodedLateAreTheFramesALiveSubscriberGot() {
        let log = EventLog(capacity: 10, firstID: 50)
        for i in 0..<3 { log.append(change("quiet", "before-\(i)")) }  // nobody listens: not encoded yet
        let live = log.subscribe(store: "s", after: nil) {}
        for i in 0..<3 { log.append(change(i == 1 ? "other" : "s", "\(i)")) }
        let liveFrames = frames(live)
        let replayed = frames(log.subscribe(store: nil, after: 49) {})
        #expect(replayed.count == 6)
        #expect(Array(replayed[3...]).filter { $0.contains("\"store\":\"s\"") } == liveFrames)
        #expect(replayed[0].hasPrefix("id: 50\nevent: removed\ndata: {\"store\":\"quiet\",\"identifier\":\"before-0\""))
        #expect(replayed[4].hasPrefix("id: 54\n") && replayed[4].contains("\"other\""))
    }

    @Test func tooOldLastEventIDGetsAGapEventFirst() {
        let log = EventLog(capacity: 3, firstID: 1)
        for i in 0..<10 { log.append(change("s", "\(i)")) }
        // Ids 8, 9, 10 are kept; the client saw up to 2.
        let resumed = log.subscribe(store: nil, after: 2) {}
        let replay = frames(resumed)
        #expect(replay.count == 4)
        #expect(replay[0].contains("event: gap"))
        #expect(replay[0].contains("\"lastEventId\":2,\"firstAvailableId\":8"))
        #expect(replay[1].hasPrefix("id: 8\n"))
    }

    /// A subscriber costs no buffer: it is dropped when an event it has not taken leaves the log.
    @Test func aSubscriberIsDroppedWhenAnEventItWasNotGivenLeavesTheLog() {
        let log = EventLog(capacity: 5, firstID: 1)
        let woken = Locked(0)
        let slow = log.subscribe(store: nil, after: nil) { woken.withLock { $0 += 1 } }
        let keepsUp = log.subscribe(store: nil, after: nil) {}
        for i in 0..<5 { log.append(change("s", "\(i)")) }
        #expect(frames(keepsUp).count == 5)
        #expect(!slow.isDropped)  // 5 events behind: all still in the log
        log.append(change("s", "5"))  // pushes out id 1, which `slow` was never given
        #expect(slow.isDropped)
        var out: [UInt8] = []
        #expect(slow.take(into: &out, limit: .max) == .dropped)
        #expect(out.isEmpty)
        #expect(woken.withLock { $0 } >= 1)
        #expect(!keepsUp.isDropped)
        #expect(frames(keepsUp).count == 1)
        #expect(log.subscriberCount == 1)
    }

    /// Events of other stores leaving the log do not drop a subscriber of one store.
    @Test func aStoreSubscriberIsNotDroppedForOtherStoresEvents() {
        let log = EventLog(capacity: 3, firstID: 1)
        let photos = log.subscribe(store: "photos", after: nil) {}
        for i in 0..<10 { log.append(change("docs", "\(i)")) }
        #expect(!photos.isDropped)
        #expect(frames(photos).isEmpty)
        log.append(change("photos", "p"))
        #expect(frames(photos).map { $0.split(separator: "\n")[0] } == ["id: 11"])
    }

    /// A backlog is handed out in pieces, in order, as the connection asks for more.
    @Test func aBacklogIsTakenInPiecesOfTheAskedSize() {
        let log = EventLog(capacity: 100, firstID: 1)
        for i in 0..<50 { log.append(change("s", "\(i)")) }
        let resumed = log.subscribe(store: nil, after: 0) {}
        var ids: [String] = []
        var pieces = 0
        while true {
            let piece = frames(resumed, limit: 500)
            if piece.isEmpty { break }
            pieces += 1
            #expect(piece.joined().utf8.count < 500 + 200, "a piece went well past the limit")
            ids += piece.map { String($0.split(separator: "\n")[0]) }
        }
        #expect(ids == (1...50).map { "id: \($0)" })
        #expect(pieces > 5)
    }

    /// A waiting subscriber is woken by its store's next event; one that has not taken everything is not.
    @Test func onlyWaitingSubscribersAreWoken() {
        let log = EventLog(capacity: 100, firstID: 1)
        let woken = Locked(0)
        let subscriber = log.subscribe(store: nil, after: nil) { woken.withLock { $0 += 1 } }
        log.append(change("s", "a"))  // not yet waiting: it will take anyway
        #expect(woken.withLock { $0 } == 0)
        #expect(frames(subscriber).count == 1)  // took everything: now waiting
        log.append(change("s", "b"))
        log.append(change("s", "c"))
        #expect(woken.withLock { $0 } == 1)
    }

    @Test func aLastEventIDThisLogNeverIssuedGetsAGap() {
        let log = EventLog(capacity: 10, firstID: 100)
        log.append(change("s", "a"))
        let resumed = log.subscribe(store: nil, after: 5_000) {}
        let replay = frames(resumed)
        #expect(replay.count == 2)
        #expect(replay[0].contains("\"lastEventId\":5000,\"firstAvailableId\":100"))
        #expect(replay[1].hasPrefix("id: 100\n"))
    }

    @Test func idsOfALaterLogStartAboveAnEarlierOne() {
        let first = EventLog()
        for i in 0..<3 { first.append(change("s", "\(i)")) }
        usleep(2_000)
        let second = EventLog()
        #expect(second.nextID >= first.nextID)
    }
}
