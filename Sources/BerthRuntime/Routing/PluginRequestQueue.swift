@_spi(Engine) import BerthCore
/// Work plugins ask for during a call (navigation, delegate deliveries), run in order once
/// the host is back at top level, so a plugin is never re-entered mid-call. Work queued
/// while the queue drains runs in the same drain; past `budget` items in one drain the rest
/// is dropped, so a plugin that keeps asking in a loop cannot hang the host.
@MainActor
final class PluginRequestQueue {
    /// The most items one drain runs.
    let budget: Int
    /// Unchecked exclusivity, with `isDraining`: looked at whenever an operation ends; each
    /// item runs after it has left the array, never inside an access to it.
    @exclusivity(unchecked) private var pending: [() -> Void] = []
    @exclusivity(unchecked) private var isDraining = false

    /// An empty queue that runs at most `budget` items in one drain.
    init(budget: Int = 10_000) {
        self.budget = budget
    }

    /// Queues `work` to run at the next drain.
    func enqueue(_ work: @escaping () -> Void) {
        pending.append(work)
    }

    /// Queues `work` ahead of everything queued: the next items a drain runs, in order.
    func enqueueFirst(_ work: [() -> Void]) {
        pending.insert(contentsOf: work, at: 0)
    }

    /// Runs the queued work in order, each through `run` (which calls it, and says whether
    /// the drain goes on); returns how many items were dropped past the budget (0 when all
    /// ran), and the items left when `run` stopped it, in order. A drain asked for from
    /// inside a running drain does nothing: the outer one runs what is queued.
    func drain(_ run: (_ work: () -> Void) -> Bool) -> (dropped: Int, stoppedBefore: [() -> Void]) {
        guard !isDraining else { return (0, []) }
        isDraining = true
        defer { isDraining = false }
        var budget = self.budget
        while !pending.isEmpty && budget > 0 {
            let work = pending.removeFirst()
            budget -= 1
            guard run(work) else {
                defer { pending.removeAll() }
                return (0, pending)
            }
        }
        let dropped = pending.count
        pending.removeAll()
        return (dropped, [])
    }
}
