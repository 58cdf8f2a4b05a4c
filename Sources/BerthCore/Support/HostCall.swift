#if canImport(Glibc)
internal import Glibc
#endif

/// Marks the calls the host makes into plugin code from its main actor.
///
/// berth.h says navigation, state and the other main-thread functions may only be called
/// from inside such a call. On Linux the main actor need not run on the process's first
/// thread, so `Thread.isMainThread` cannot tell. The mark is per thread, not per task: a
/// plugin's own threads never have it, and neither does a Swift `Task` a plugin starts (a
/// task-local value would be inherited by it, and the host would then trust a call that
/// is not on its main actor).
package enum HostCall {
    /// The pthread key of the mark (a per-thread nesting depth, stored as a pointer value).
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// True on the thread the host is calling plugin code from, during the call.
    package static var isInside: Bool { depth > 0 }

    private static var depth: Int {
        get { Int(bitPattern: pthread_getspecific(key)) }
        set { pthread_setspecific(key, UnsafeRawPointer(bitPattern: newValue)) }
    }

    /// Runs a call into plugin code, marked as made by the host's main actor.
    package static func run<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        depth += 1
        defer { depth -= 1 }
        return try body()
    }
}
