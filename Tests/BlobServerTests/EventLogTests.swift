import BlobStore
import BlobSystem
import Foundation
import Testing

@testable import BlobServer

@Suite struct EventLogTests {
    func change(_ store: String, _ id: String) -> BlobChange {
        BlobChange(sequence: 1, store: store, kind: .removed(identifier: id), date: Date(timeIntervalSince1970: 0))
    }

    func frames(_ subscription: EventSubscription) -> [String] {
        subscription.take().frames.map { String(decoding: $0, as: UTF8.self) }
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

    @Test func aSubscriberThatFallsBehindIsDroppedNotBuffered() {
        let log = EventLog(capacity: 100, subscriberLimit: 5, firstID: 1)
        let woken = Locked(0)
        let slow = log.subscribe(store: nil, after: nil) { woken.withLock { $0 += 1 } }
        for i in 0..<6 { log.append(change("s", "\(i)")) }
        let (pending, dropped) = slow.take()
        #expect(dropped)
        #expect(pending.isEmpty)
        #expect(log.subscriberCount == 0)
        #expect(woken.withLock { $0 } >= 1)
    }

    @Test func idsOfALaterLogStartAboveAnEarlierOne() {
        let first = EventLog()
        for i in 0..<3 { first.append(change("s", "\(i)")) }
        usleep(2_000)
        let second = EventLog()
        #expect(second.nextID >= first.nextID)
    }
}
