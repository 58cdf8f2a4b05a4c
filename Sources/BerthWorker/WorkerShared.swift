import BerthCore
/// The part of a worker that plugin threads reach: the channel (for `log`, `task_post`
/// and the task notifications) and the book of running managed tasks. One per worker
/// process; safe from any thread.
final class WorkerShared: Sendable {
    /// The worker's shared state, set once the worker starts serving. Process-wide on
    /// purpose: one per worker process, reached from plugin threads that carry no pointer.
    static let current = Locked<WorkerShared?>(nil)

    let channel: IsolationChannel
    private let book = Locked(TaskBook())

    init(channel: IsolationChannel) {
        self.channel = channel
    }

    /// What the worker knows about its tasks: a serial per running task (so the host can
    /// tell a restarted task from its predecessor) and the tasks whose body has returned,
    /// waiting for the main thread to release them.
    private struct TaskBook {
        var nextSerial: UInt64 = 1
        var running: [ObjectIdentifier: Entry] = [:]
        var returned: [(task: ManagedTask, entry: Entry)] = []
    }

    /// A running task's serial and the instance that owns it.
    struct Entry {
        let serial: UInt64
        let instance: UInt64
    }

    /// Gives `task` its serial; call before it starts.
    func register(_ task: ManagedTask, instance: UInt64) -> UInt64 {
        book.withLock { book in
            let serial = book.nextSerial
            book.nextSerial += 1
            book.running[ObjectIdentifier(task)] = Entry(serial: serial, instance: instance)
            return serial
        }
    }

    /// The serial of a running task (nil once it was released).
    func serial(of task: ManagedTask) -> UInt64? {
        book.withLock { $0.running[ObjectIdentifier(task)]?.serial }
    }

    /// Called on the task's thread when its body returned: tells the host, and queues the
    /// task for release on the main thread (berth.h: `release` runs there).
    func taskReturned(_ task: ManagedTask) {
        let entry = book.withLock { book -> Entry? in
            guard let entry = book.running.removeValue(forKey: ObjectIdentifier(task)) else { return nil }
            book.returned.append((task, entry))
            return entry
        }
        guard let entry else { return }
        try? channel.notify(.taskFinished(screen: UInt64(UInt(bitPattern: task.screenID)), key: task.key,
                                          task: entry.serial, cancelled: task.isCancelled))
    }

    /// The tasks whose body returned since the last call; the main thread releases them.
    func takeReturnedTasks() -> [(task: ManagedTask, entry: Entry)] {
        book.withLock { book in
            defer { book.returned.removeAll() }
            return book.returned
        }
    }

    /// Sends a notification, dropping it when the host is gone (the worker is about to
    /// notice and exit).
    func notify(_ notification: IsolationNotification) {
        try? channel.notify(notification)
    }
}
