import Synchronization

/// How many plugin → host calls the host has served that could change what a screen
/// renders (state, persistence, navigation, contexts, delegates, services, sessions,
/// tasks), process-wide. Logging and a task's own sleep and cancel checks are left out.
///
/// A screen event that leaves the count unchanged made no such call, so the render the
/// host made just before it still stands (`Navigator.freshlyRendered`). Counted from any
/// thread; a call from another thread counting in between only costs a render.
/// Process-wide on purpose: the C host table's functions carry no host, and a count
/// another host adds in between only costs a render too.
package enum HostCallbackCount {
    private static let served = Atomic<UInt64>(0)

    package static var current: UInt64 { served.load(ordering: .relaxed) }

    package static func record() {
        served.add(1, ordering: .relaxed)
    }
}
