internal import Glibc
import Synchronization
package import CBerth

/// One managed task: a plugin's `berth_task_v1` running on a thread of the shared
/// `TaskThreadPool` until it returns. Cancellation is a flag the body polls (`task_is_cancelled`) or a sleep that
/// wakes early (`task_sleep`); the optional `cancel` callback is told once.
///
/// `@unchecked Sendable` for `descriptor` alone: a C struct (the plugin's function
/// pointers and context), immutable after init, which berth.h lets the task's thread and
/// the host's use. The rest is checked: `phase` is a `LockedCondition` (`hasFinished`, an
/// `Atomic`, mirrors its finishing for a lock-free look), `owner` the main actor's.
package final class ManagedTask: @unchecked Sendable {
    package let key: String
    package let screenID: Int
    private let descriptor: berth_task_v1
    private let phase = LockedCondition(ManagedTaskPhase())
    private let hasFinished = Atomic<Bool>(false)
    /// Set on the main actor; used by `task_post` to reach the screen.
    @MainActor package weak var owner: (any ManagedTaskOwner)?
    /// The owning interactor's: how the task's thread reaches the host's main actor (nil in
    /// a worker, whose tasks notify the host over the channel instead).
    package let hops: (any MainActorPosting)?

    package init(key: String, screenID: Int, descriptor: berth_task_v1, hops: (any MainActorPosting)? = nil) {
        self.key = key
        self.screenID = screenID
        self.descriptor = descriptor
        self.hops = hops
    }

    /// The opaque `berth_task_handle *` given to `run`; valid until `release`.
    package var handle: OpaquePointer { OpaquePointer(Unmanaged.passUnretained(self).toOpaque()) }

    package static func from(handle: OpaquePointer?) -> ManagedTask? {
        guard let handle else { return nil }
        return Unmanaged<ManagedTask>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
    }

    /// Starts the body on a pool thread. `whenFinished` runs on that thread after the body
    /// returns.
    package func start(whenFinished: @escaping @Sendable (ManagedTask) -> Void) {
        TaskThreadPool.shared.run { [self] in
            if let run = descriptor.run { run(descriptor.context, handle) }
            whenFinished(self)
            hasFinished.store(true, ordering: .releasing)
            phase.withLock { $0.bodyReturned() }
            // Woken after the unlock, a waiter does not wake only to block on the lock.
            phase.broadcast()
        }
    }

    /// How long `waitUntilFinished` yields before it sleeps on the condition.
    private static let spinBeforeBlocking: Duration = .microseconds(50)

    package var isCancelled: Bool {
        phase.withLock { $0.isCancelled }
    }

    /// Requests cancellation (once): wakes a sleeping body and tells the plugin.
    package func cancel() {
        let action = phase.withLock { $0.cancel() }
        phase.broadcast()
        if action == .tellPlugin, let cancel = descriptor.cancel { cancel(descriptor.context) }
    }

    /// Sleeps up to `milliseconds`; false when cancelled (at once or while sleeping).
    package func sleep(milliseconds: UInt64) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        return phase.wait { phase, timedOut in
            if phase.isCancelled { return .finish(false) }
            return timedOut ? .finish(true) : .waitUntil(deadline)
        }
    }

    /// Blocks until the body has returned. A cancelled body usually returns within a few
    /// microseconds (it wakes from `task_sleep` or sees the flag), less than it takes to put
    /// this thread to sleep and wake it again, so it yields briefly before it blocks.
    package func waitUntilFinished() {
        let spinUntil = ContinuousClock.now + Self.spinBeforeBlocking
        while !hasFinished.load(ordering: .acquiring) {
            guard ContinuousClock.now < spinUntil else { break }
            sched_yield()
        }
        guard !hasFinished.load(ordering: .acquiring) else { return }
        phase.wait { phase, _ in phase.hasReturned ? .finish(()) : .wait }
    }

    /// Calls the plugin's `release` exactly once. Main thread (berth.h).
    @MainActor
    package func releaseOnce() {
        let action = phase.withLock { $0.release() }
        guard action == .callRelease else { return }
        if let release = descriptor.release { HostCall.run { release(descriptor.context) } }
    }

    /// Releases a task that was never started (refused): the ownership rule still holds.
    @MainActor
    package static func releaseUnstarted(_ descriptor: berth_task_v1) {
        if let release = descriptor.release { HostCall.run { release(descriptor.context) } }
    }
}

/// Where a managed task is: its body running, asked to stop or returned; and, apart from
/// that, whether the plugin's `release` was called (once, normally after the body returned;
/// a task refused before it ran is released without running). Events return what the
/// caller must tell the plugin.
package struct ManagedTaskPhase {
    package init() {}

    package enum Action: Equatable {
        case none
        /// Call the descriptor's `cancel` (the first cancellation only).
        case tellPlugin
        /// Call the descriptor's `release` (once).
        case callRelease
    }

    private enum Body {
        case running
        case cancelling
        case returned(cancelled: Bool)
    }

    private enum Ownership {
        case held
        case released
    }

    private var body = Body.running
    private var ownership = Ownership.held

    package var isCancelled: Bool {
        switch body {
        case .running: false
        case .cancelling: true
        case .returned(let cancelled): cancelled
        }
    }

    /// The body has returned (sleeps end, waiters wake).
    package var hasReturned: Bool {
        switch body {
        case .running, .cancelling: false
        case .returned: true
        }
    }

    package mutating func cancel() -> Action {
        switch body {
        case .running: body = .cancelling
        case .returned(cancelled: false): body = .returned(cancelled: true)
        case .cancelling, .returned(cancelled: true): return .none
        }
        return .tellPlugin
    }

    package mutating func bodyReturned() {
        switch body {
        case .running: body = .returned(cancelled: false)
        case .cancelling: body = .returned(cancelled: true)
        case .returned: preconditionFailure("a managed task's body returned twice")
        }
    }

    package mutating func release() -> Action {
        switch ownership {
        case .held:
            ownership = .released
            return .callRelease
        case .released:
            return .none
        }
    }
}

/// A screen's table of managed tasks, by key: the one place that cancels and awaits them,
/// for the interactor in process and the instance in a worker.
@MainActor
extension [String: ManagedTask] {
    /// Cancels the task `key` (a no-op when there is none), waits until its body returned,
    /// releases it once.
    package mutating func cancelTask(key: String) {
        guard let task = removeValue(forKey: key) else { return }
        task.cancel()
        task.waitUntilFinished()
        task.releaseOnce()
    }

    /// A task whose body returned on its own: it leaves the table (unless a task started
    /// since holds its key) and is released once.
    package mutating func bodyReturned(_ task: ManagedTask) {
        if self[task.key] === task { self[task.key] = nil }
        task.releaseOnce()
    }

    /// Cancels every task, waits until each body returned, releases each once; the table
    /// is empty afterwards.
    package mutating func cancelAll() {
        let running = Array(values)
        removeAll()
        for task in running { task.cancel() }
        for task in running {
            task.waitUntilFinished()
            task.releaseOnce()
        }
    }
}

/// The host's owner of its managed tasks (a screen's interactor), told on its main actor.
@MainActor
package protocol ManagedTaskOwner: AnyObject {
    /// The task's body returned on its own.
    func taskFinished(_ task: ManagedTask)
    /// The task's `task_post`, hopped to the main actor (the task was not cancelled).
    func taskPosted(_ task: ManagedTask, action: String, payload: [UInt8])
}

/// How a task's thread hands work to the host's main actor (`MainActorHops`).
package protocol MainActorPosting: Sendable {
    func post(_ job: @escaping @MainActor @Sendable () -> Void)
}
