import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

/// How many plugin → host calls the host has served that could change what a screen
/// renders (state, persistence, navigation, contexts, delegates, services, sessions,
/// tasks), process-wide. Logging and a task's own sleep and cancel checks are left out.
///
/// A screen event that leaves the count unchanged made no such call, so the render the
/// host made just before it still stands (`Navigator.freshlyRendered`). Counted from any
/// thread; a call from another thread counting in between only costs a render.
/// Process-wide on purpose: the C host table's functions carry no host, and a count
/// another host adds in between only costs a render too.
///
/// Each thread's own share is counted too (`onThisThread`): a plugin calls the host on the
/// thread the host called it on, so an action on its lane that leaves the lane's count
/// unchanged asked the host for nothing, whatever other plugins did meanwhile.
package enum HostCallbackCount {
    private static let served = Atomic<UInt64>(0)

    package static var current: UInt64 { served.load(ordering: .relaxed) }

    /// The calls made on the current thread so far.
    package static var onThisThread: UInt { UInt(bitPattern: pthread_getspecific(threadKey)) }

    package static func record() {
        served.add(1, ordering: .relaxed)
        pthread_setspecific(threadKey, UnsafeRawPointer(bitPattern: onThisThread &+ 1))
    }

    /// The slot holding each thread's count, as a pointer's bits (no allocation).
    private static let threadKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
}
