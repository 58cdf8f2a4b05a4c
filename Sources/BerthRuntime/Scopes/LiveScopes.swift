@_spi(Engine) import BerthCore
/// Every scope of a registry alive now (`scopes`, the memory checks, and the scopes a
/// plugin's unload must visit). Guarded by the registry's lock: every method is called
/// with it held.
///
/// Screen, session and singleton scopes are held weakly. Request scopes are held unowned
/// in an array, each knowing its index: `withRequestScope` keeps its scope alive until it
/// ends it, and ending removes it (swap with the last), so no entry outlives its scope and
/// a request costs no weak reference and no hashing.
final class LiveScopes: @unchecked Sendable {
    // @unchecked: everything here is only touched with the registry's lock held.
    private struct WeakScope {
        weak var scope: Scope?
    }

    private var scopes: [ObjectIdentifier: WeakScope] = [:]
    private var requests: [Unmanaged<Scope>] = []

    func insertLockHeld(_ scope: Scope) {
        scopes[ObjectIdentifier(scope)] = WeakScope(scope: scope)
    }

    /// A request scope, which its creator ends before letting it go.
    func insertRequestLockHeld(_ scope: Scope) {
        scope.requestIndexLockHeld = requests.count
        requests.append(.passUnretained(scope))
    }

    func removeLockHeld(_ scope: Scope) {
        guard scope.requestIndexLockHeld >= 0 else {
            scopes.removeValue(forKey: ObjectIdentifier(scope))
            return
        }
        let index = scope.requestIndexLockHeld
        scope.requestIndexLockHeld = -1
        let last = requests.removeLast()
        guard index < requests.count else { return }
        requests[index] = last
        last.takeUnretainedValue().requestIndexLockHeld = index
    }

    var allLockHeld: [Scope] { scopes.values.compactMap(\.scope) + requests.map { $0.takeUnretainedValue() } }
}
