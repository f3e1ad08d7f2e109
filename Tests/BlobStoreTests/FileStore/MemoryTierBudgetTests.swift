import Foundation
import Testing

@testable import BlobStore

/// Memory tiers on one shared budget (`StoreConfiguration.sharedMemoryTier`, STORAGE.md "Memory
/// tier"): together they stay within it, an idle store's cold entries make room for a busy one's, and
/// a closed store gives its charge back.
@Suite struct MemoryTierBudgetTests {
    let root = TemporaryRoot()

    private func store(_ name: String, on budget: MemoryTierBudget) throws -> PersistentDataStore {
        try PersistentDataStore(
            name: name, root: root.url,
            configuration: StoreConfiguration(durability: .relaxed, memoryTierBytes: budget.bytes, sharedMemoryTier: budget))
    }

    /// About 9 entries of 4 KiB.
    private func budgetOfNineEntries() -> MemoryTierBudget {
        MemoryTierBudget(bytes: 9 * (4096 + 300))
    }

    @Test func tiersOnOneBudgetStayWithinItTogether() async throws {
        let budget = budgetOfNineEntries()
        let idle = try store("idle", on: budget)
        let busy = try store("busy", on: budget)
        for index in 0..<6 { try await idle.put(MemoryTierTests.content(index), identifier: "\(index)") }
        for index in 0..<9 { try await busy.put(MemoryTierTests.content(100 + index), identifier: "\(index)") }
        // The idle store's blobs are read once (cold); then the busy store's working set, as large as
        // the whole budget, is read over and over.
        for index in 0..<6 { #expect(try await idle.get("\(index)") == MemoryTierTests.content(index)) }
        #expect(idle.memoryTierStatistics.entries == 6)
        for _ in 0..<10 {
            for index in 0..<9 { #expect(try await busy.get("\(index)") == MemoryTierTests.content(100 + index)) }
        }
        let (a, b) = (idle.memoryTierStatistics, busy.memoryTierStatistics)
        #expect(a.budgetBytes == budget.bytes && b.budgetBytes == budget.bytes)
        #expect(a.bytes + b.bytes <= budget.bytes, "held \(a.bytes) + \(b.bytes) on a budget of \(budget.bytes)")
        #expect(budget.chargedBytes == a.bytes + b.bytes)
        // Nothing was read from the idle store since: only the busy store's fills can have evicted its entries.
        #expect(a.evictions > 0 && a.entries < 6, "the idle store kept \(a.entries) entries, \(a.evictions) evicted")
        #expect(b.entries > 0)
    }

    @Test func aClosedStoreGivesItsChargeBack() async throws {
        let budget = budgetOfNineEntries()
        let keeper = try store("keeper", on: budget)
        try await keeper.put(MemoryTierTests.content(1), identifier: "a")
        #expect(try await keeper.get("a") == MemoryTierTests.content(1))
        let held = budget.chargedBytes
        #expect(held > 4096)
        do {
            let passing = try store("passing", on: budget)
            for index in 0..<3 {
                try await passing.put(MemoryTierTests.content(index), identifier: "\(index)")
                #expect(try await passing.get("\(index)") == MemoryTierTests.content(index))
            }
            #expect(budget.chargedBytes > held)
        }
        // The engine goes away with its last instance (and with it, its tier).
        var waited = 0
        while budget.chargedBytes != held && waited < 200 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        #expect(budget.chargedBytes == held)
        #expect(keeper.memoryTierStatistics.bytes == held)
    }

    @Test func aStoreOfItsOwnIsNotBoundByAnother() async throws {
        // The control: without sharing, each store keeps its own budget's worth.
        let (first, second) = (budgetOfNineEntries(), budgetOfNineEntries())
        let one = try store("one", on: first)
        let two = try store("two", on: second)
        for store in [one, two] {
            for index in 0..<6 {
                try await store.put(MemoryTierTests.content(index), identifier: "\(index)")
                #expect(try await store.get("\(index)") == MemoryTierTests.content(index))
            }
        }
        #expect(one.memoryTierStatistics.entries == 6 && two.memoryTierStatistics.entries == 6)
        #expect(first.chargedBytes == one.memoryTierStatistics.bytes && second.chargedBytes == two.memoryTierStatistics.bytes)
        #expect(first != second && first == first)
    }
}
