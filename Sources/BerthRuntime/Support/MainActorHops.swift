@_spi(Engine) import BerthCore
/// Work that another thread hands to the main actor, counted by its owner until it has run:
/// the owner's `cancelAll()`, or its release, cancels what has not run yet (STYLE.md, rule 7,
/// as it applies to hops: the owner cancels what it started).
///
/// Each owner that hops onto the main actor from another thread holds one: a screen's
/// handle (a refused service resolve is reported), an interactor (a task's body returned,
/// a task posted an action), a worker group (its channel became readable), the host
/// runner. A hop whose owner is gone is cancelled, never run.
///
/// `@_spi(Hops) public`, not `package`: not part of the embedding API (an importer names
/// the SPI: the CLI's host runner, and the benchmark of what the bookkeeping costs a hop, which
/// lives in a package of its own and so cannot see `package` declarations).
@_spi(Hops) public final class MainActorHops: Sendable {
    /// The hops of the current generation not yet finished. `cancelAll` starts a new
    /// generation: a hop posted in an older one does nothing when its turn comes. A count,
    /// not a table of tasks: hops are only ever cancelled all at once, and a table cost each
    /// hop a dictionary insert and removal (P13, Docs/benchmarks.md).
    private struct Counts {
        var generation: UInt64 = 0
        var pending = 0
    }

    /// One posted hop: the generation it belongs to.
    private struct Ticket: Sendable {
        let counts: Locked<Counts>
        let generation: UInt64

        /// True while its generation is current (neither `cancelAll` nor the owner's release came first).
        var admitted: Bool { counts.withLock { $0.generation == generation } }

        func finished() {
            counts.withLock { if $0.generation == generation { $0.pending -= 1 } }
        }
    }

    /// Shared with the posted hops, which outlive their owner only to find they were cancelled.
    private let counts = Locked(Counts())

    /// An owner's hops, none yet.
    public init() {}

    deinit {
        cancelAll()
    }

    /// Runs `job` on the main actor after what it is doing now, unless cancelled first.
    public func post(_ job: @escaping @MainActor @Sendable () -> Void) {
        let ticket = enter()
        Task { @MainActor in
            guard ticket.admitted else { return }
            job()
            ticket.finished()
        }
    }

    /// `post` for a job that awaits (the CLI's commands from the control socket).
    ///
    /// Cancelling reaches only a job that has not started: one already running when
    /// `cancelAll` (or the owner's release) comes runs to its end, and `Task.isCancelled`
    /// stays false inside it. A job that must stop part-way checks its own condition.
    public func post(_ job: @escaping @MainActor @Sendable () async -> Void) {
        let ticket = enter()
        Task { @MainActor in
            guard ticket.admitted else { return }
            await job()
            ticket.finished()
        }
    }

    /// Cancels every hop that has not started yet; a running one finishes.
    package func cancelAll() {
        counts.withLock { counts in
            counts.generation &+= 1
            counts.pending = 0
        }
    }

    /// Hops posted and not yet run (or running).
    public var pendingCount: Int { counts.withLock { $0.pending } }

    private func enter() -> Ticket {
        let generation = counts.withLock { counts in
            counts.pending += 1
            return counts.generation
        }
        return Ticket(counts: counts, generation: generation)
    }
}
