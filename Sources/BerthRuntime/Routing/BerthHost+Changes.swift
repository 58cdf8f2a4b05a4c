@_spi(Engine) import BerthCore
/// Telling a front end that what it shows may have changed, so it redraws instead of polling.
/// `package`: `changes` (Embedding/BerthHost+Snapshots.swift), which applications and both
/// front ends read, is built on them.
extension BerthHost {
    /// Calls `observer` on the main actor each time an outermost host operation ends: a
    /// navigation, an input, a managed task's posted result, a delegate action or route
    /// context, a load, reload or crash. The router tree, a screen's state and the visible
    /// screen's last render (`module.lastTree`, rendered again by then) may have changed.
    /// The observer must not start a host operation itself (that would end in another
    /// call): it schedules its work. Returns a token for `removeChangeObserver`.
    package func addChangeObserver(_ observer: @escaping () -> Void) -> Int {
        navigator.addChangeObserver(observer)
    }

    /// Stops calling the observer `token` names.
    package func removeChangeObserver(_ token: Int) {
        navigator.removeChangeObserver(token)
    }
}
