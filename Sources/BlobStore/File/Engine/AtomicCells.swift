import Synchronization

/// The memory ordering of ``AtomicCounter`` and ``AtomicFlag``: relaxed only, since they count and
/// flag and order no other memory.
enum CellOrdering: Sendable {
    case relaxed
}

/// An atomic count behind a reference, so that the part that owns it can be handed around and its
/// counter reached through forwarding (an `Atomic` cannot be copied or returned).
final class AtomicCounter: Sendable {
    private let value: Atomic<Int>

    init(_ initial: Int = 0) { value = Atomic(initial) }

    func load(ordering: CellOrdering) -> Int { value.load(ordering: .relaxed) }

    func wrappingAdd(_ delta: Int, ordering: CellOrdering) { value.wrappingAdd(delta, ordering: .relaxed) }
}

/// An atomic flag behind a reference (see ``AtomicCounter``).
final class AtomicFlag: Sendable {
    private let value: Atomic<Bool>

    init(_ initial: Bool) { value = Atomic(initial) }

    func load(ordering: CellOrdering) -> Bool { value.load(ordering: .relaxed) }

    func store(_ newValue: Bool, ordering: CellOrdering) { value.store(newValue, ordering: .relaxed) }
}
