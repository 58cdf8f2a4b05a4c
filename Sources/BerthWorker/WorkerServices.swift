@_spi(Engine) import BerthCore
internal import CBerth

/// A plugin's own services in its worker: the declarations it registered and the instances
/// their `create` made, each by a token. The host keeps every instance's token in its
/// scopes and says when to make and release one; the pointers never leave this process.
///
/// A screen's resolves are remembered: after the host named the instance of a key for a
/// screen (its screen scope, the session, the singleton), the next resolve of that key from
/// that screen is answered here. The host releases an instance exactly when the scope
/// holding it ends (a close, a session's end, an unload or reload), and the release forgets
/// every answer naming it, so an answer never outlives its scope. Request-scoped instances
/// are not remembered: each request is a scope of its own, known only to the host.
@MainActor
final class WorkerServices {
    /// Each with the member (plugin) that registered it.
    private var declarations: [UInt64: (member: UInt64, declaration: ServiceDeclaration)] = [:]
    private var instances: [UInt64: (member: UInt64, declaration: ServiceDeclaration, pointer: UnsafeMutableRawPointer)] = [:]
    /// Creation order, for releasing what the host left (newest first).
    private var order: [UInt64] = []
    private var nextToken: UInt64 = 1
    /// The instance each screen resolved for a key, and the answers naming each instance.
    private var resolved: [Resolved: (instance: UInt64, pointer: UnsafeMutableRawPointer)] = [:]
    private var answers: [UInt64: [Resolved]] = [:]

    /// One screen's resolve of one key.
    private struct Resolved: Hashable {
        let screen: UInt64
        let key: String
    }

    private func takeToken() -> UInt64 {
        defer { nextToken += 1 }
        return nextToken
    }

    /// Keeps a declaration `member` registered; returns its token.
    func declare(_ declaration: ServiceDeclaration, by member: UInt64) -> UInt64 {
        let token = takeToken()
        declarations[token] = (member, declaration)
        return token
    }

    /// The host refused the registration.
    func forget(service token: UInt64) {
        declarations[token] = nil
    }

    /// One instance of `service`: the provider's `create`, on the stack of the host's call.
    func make(service token: UInt64) -> IsolationReply {
        guard let (member, declaration) = declarations[token] else {
            return .created(.failure(Int(BERTH_ERR_NOT_FOUND), "service_create: no service \(token) in this worker"), instance: 0)
        }
        let made: UnsafeMutableRawPointer
        do throws(ScopeError) {
            made = try HostCall.run { () throws(ScopeError) in try declaration.make() }
        } catch {
            return .created(.failure(Int(BERTH_ERR_FAILED), error.message), instance: 0)
        }
        let instance = takeToken()
        instances[instance] = (member, declaration, made)
        order.append(instance)
        return .created(.ok, instance: instance)
    }

    /// One contract call on `instance`, answered on this (the worker's calling) thread.
    func invoke(instance token: UInt64, request: [UInt8]) -> IsolationReply {
        guard let (_, declaration, pointer) = instances[token] else {
            return .bytes(.failure(Int(BERTH_ERR_UNAVAILABLE), "service_invoke: instance \(token) was released (its scope ended)"), [])
        }
        switch declaration.invoke(pointer, request: request) {
        case .success(let reply): return .bytes(.ok, reply)
        case .failure(let failure): return .bytes(.failure(Int(failure.status), failure.message), [])
        }
    }

    /// The instance the host named for `screen`'s resolve of `key` before, while its scope lasts.
    func remembered(screen: UInt64, key: String) -> UnsafeMutableRawPointer? {
        resolved[Resolved(screen: screen, key: key)]?.pointer
    }

    /// The host named `instance` for `screen`'s resolve of `key`: its pointer, remembered
    /// unless its scope is a request's. nil when this worker does not hold it.
    func answer(screen: UInt64, key: String, instance: UInt64) -> UnsafeMutableRawPointer? {
        guard let (_, declaration, pointer) = instances[instance] else { return nil }
        guard declaration.kind != .request else { return pointer }
        let answer = Resolved(screen: screen, key: key)
        resolved[answer] = (instance, pointer)
        answers[instance, default: []].append(answer)
        return pointer
    }

    /// The screen is gone: its answers go too (a screen's own instances go with its scope).
    func forget(screen: UInt64) {
        for (answer, value) in resolved where answer.screen == screen {
            resolved[answer] = nil
            answers[value.instance]?.removeAll { $0 == answer }
        }
    }

    /// The provider's `release` of one instance (once; a token released before is ignored).
    /// Every answer naming it is forgotten first.
    func release(instance token: UInt64) {
        for answer in answers.removeValue(forKey: token) ?? [] { resolved[answer] = nil }
        guard let (_, declaration, pointer) = instances.removeValue(forKey: token) else { return }
        order.removeAll { $0 == token }
        HostCall.run { declaration.release(pointer) }
    }

    /// Releases, newest first, what `member`'s services made and the host did not release
    /// (before the plugin's `unload`), and forgets its declarations.
    func releaseAll(of member: UInt64) {
        for token in order.reversed() where instances[token]?.member == member { release(instance: token) }
        declarations = declarations.filter { $0.value.member != member }
    }
}
