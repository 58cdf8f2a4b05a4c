@_spi(Engine) import BerthCore
/// Scopes in the host: a screen scope per open screen, request scopes around every action,
/// context delivery, delegate delivery and host command, one session at a time, and the
/// services plugins provide through the ABI.
extension BerthHost {
    /// Runs a host command (or any operation) in its own request scope.
    package func inRequestScope<T>(_ owner: String, _ body: () throws -> T) rethrows -> T {
        try scopes.withRequestScope(owner: owner, body)
    }

    /// `inRequestScope` for work that awaits (a command whose action runs on a plugin's lane).
    package func inRequestScope<T>(_ owner: String, _ body: () async throws -> T) async rethrows -> T {
        let scope = scopes.makeRequestScope(owner: owner)
        defer { scope.end() }
        return try await ScopeRegistry.$currentRequest.withValue(scope) { try await body() }
    }

    /// Begins session `id` (ending the current one, releasing its instances).
    package func beginSession(_ id: String) {
        if let current = scopes.currentSession { emit(.event, .session, "session \(current.id) ended (\(current.keys.count) instance(s) released)") }
        scopes.beginSession(id)
        emit(.event, .session, "session \(id) began")
    }

    /// Ends the current session, releasing every session instance.
    @discardableResult
    package func endSession() -> String? {
        let count = scopes.currentSession?.keys.count ?? 0
        guard let id = scopes.endSession() else { return nil }
        emit(.event, .session, "session \(id) ended (\(count) instance(s) released)")
        return id
    }
}
