/// Every scope of a registry alive now, held weakly (`scopes`, the memory checks, and the
/// scopes a plugin's unload must visit). Guarded by the registry's lock: every method is
/// called with it held.
final class LiveScopes: @unchecked Sendable {
    // @unchecked: `scopes` is only touched with the registry's lock held.
    private struct WeakScope {
        weak var scope: Scope?
    }

    private var scopes: [ObjectIdentifier: WeakScope] = [:]

    func insertLockHeld(_ scope: Scope) {
        scopes[ObjectIdentifier(scope)] = WeakScope(scope: scope)
    }

    func removeLockHeld(_ scope: Scope) {
        scopes.removeValue(forKey: ObjectIdentifier(scope))
    }

    var allLockHeld: [Scope] { scopes.values.compactMap(\.scope) }
}
