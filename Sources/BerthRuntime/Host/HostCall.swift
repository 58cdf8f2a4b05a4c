/// Marks the calls the host makes into plugin code from its main actor.
///
/// berth.h says navigation, state and the other main-thread functions may only be called
/// from inside such a call. On Linux the main actor need not run on the process's first
/// thread, so `Thread.isMainThread` cannot tell; a task-local flag set around every call
/// into a plugin can: a plugin's own worker threads never inherit it.
enum HostCall {
    @TaskLocal static var isInside = false

    /// Runs a call into plugin code, marked as made by the host's main actor.
    static func run<T>(_ body: () throws -> T) rethrows -> T {
        try $isInside.withValue(true, operation: body)
    }
}
