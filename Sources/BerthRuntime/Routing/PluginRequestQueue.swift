@_spi(Engine) import BerthCore
/// Work plugins ask for during a call (navigation, delegate deliveries), run in order once
/// the host is back at top level, so a plugin is never re-entered mid-call. Work queued
/// while the queue drains runs in the same drain; past `budget` items in one drain the rest
/// is dropped, so a plugin that keeps asking in a loop cannot hang the host.
@MainActor
final class PluginRequestQueue {
    /// One queued item: a plugin's request, or the host's own work (a worker's end), which a
    /// stopped drain never holds back.
    private struct Item {
        let work: () -> Void
        let byHost: Bool
    }

    /// The most items one drain runs.
    let budget: Int
    /// Unchecked exclusivity, with `isDraining`: looked at whenever an operation ends; each
    /// item runs after it has left the array, never inside an access to it.
    @exclusivity(unchecked) private var pending: [Item] = []
    @exclusivity(unchecked) private var isDraining = false
    /// What a stopped drain had left of its budget: the drain that runs its held items
    /// goes on with it rather than a fresh one.
    private var carriedBudget: Int?

    /// An empty queue that runs at most `budget` items in one drain.
    init(budget: Int = 10_000) {
        self.budget = budget
    }

    /// Queues a plugin's request to run at the next drain.
    func enqueue(_ work: @escaping () -> Void) {
        pending.append(Item(work: work, byHost: false))
    }

    /// Queues the host's own work to run at the next drain; a stopped drain runs it anyway.
    func enqueueHostWork(_ work: @escaping () -> Void) {
        pending.append(Item(work: work, byHost: true))
    }

    /// Queues requests a stopped drain held ahead of everything queued: the next items a
    /// drain runs, in order, within what `budgetLeft` the stopped drain had.
    func enqueueFirst(_ work: [() -> Void], budgetLeft: Int? = nil) {
        pending.insert(contentsOf: work.map { Item(work: $0, byHost: false) }, at: 0)
        if let budgetLeft { carriedBudget = min(carriedBudget ?? budgetLeft, budgetLeft) }
    }

    /// Runs the queued work in order, each through `run` (which calls it, and says whether
    /// the drain goes on). Returns how many items were dropped past the budget (0 when all
    /// ran); once `run` stopped it, the plugins' requests it held back, in order (the host's
    /// own work still runs); and the budget left. A drain asked for from
    /// inside a running drain does nothing: the outer one runs what is queued.
    func drain(_ run: (_ work: () -> Void) -> Bool) -> (dropped: Int, held: [() -> Void], budgetLeft: Int) {
        guard !isDraining else { return (0, [], budget) }
        isDraining = true
        defer { isDraining = false }
        var budget = min(self.budget, carriedBudget ?? self.budget)
        carriedBudget = nil
        var held: [() -> Void] = []
        var stopped = false
        while !pending.isEmpty && budget > 0 {
            let item = pending.removeFirst()
            if stopped && !item.byHost {
                held.append(item.work)
                continue
            }
            budget -= 1
            if !run(item.work) { stopped = true }
        }
        let dropped = pending.count
        pending.removeAll()
        return (dropped, held, budget)
    }
}
