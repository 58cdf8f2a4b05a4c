/// Work that another thread hands to the main actor, kept by key until it has run: the
/// owner's `cancelAll()`, or its release, cancels what has not run yet (STYLE.md, rule 7:
/// every task lives in a keyed table and removes itself when done).
///
/// Each owner that hops onto the main actor from another thread holds one: a screen's
/// handle (a refused service resolve is reported), an interactor (a task's body returned,
/// a task posted an action), a worker group (its channel became readable), the host
/// runner. A hop whose owner is gone is cancelled, never run.
package final class MainActorHops: Sendable {
    private struct Table {
        var lastKey: UInt64 = 0
        var pending: [UInt64: Task<Void, Never>] = [:]
    }
    private let table = Locked(Table())

    package init() {}

    deinit {
        cancelAll()
    }

    /// Runs `job` on the main actor after what it is doing now, unless cancelled first.
    package func post(_ job: @escaping @MainActor @Sendable () async -> Void) {
        table.withLock { table in
            table.lastKey += 1
            let key = table.lastKey
            // Created under the lock: the task's own removal (which takes it) comes after.
            table.pending[key] = Task { @MainActor [weak self] in
                defer { self?.ran(key) }
                guard !Task.isCancelled else { return }
                await job()
            }
        }
    }

    /// Cancels every hop that has not run yet.
    package func cancelAll() {
        let pending = table.withLock { table in
            defer { table.pending = [:] }
            return Array(table.pending.values)
        }
        for task in pending { task.cancel() }
    }

    /// Hops posted and not yet run (or running).
    package var pendingCount: Int { table.withLock { $0.pending.count } }

    private func ran(_ key: UInt64) {
        _ = table.withLock { $0.pending.removeValue(forKey: key) }
    }
}
