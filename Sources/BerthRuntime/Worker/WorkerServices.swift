internal import CBerth

/// A plugin's own services in its worker: the declarations it registered and the instances
/// their `create` made, each by a token. The host keeps every instance's token in its
/// scopes and says when to make and release one; the pointers never leave this process.
@MainActor
final class WorkerServices {
    /// Each with the member (plugin) that registered it.
    private var declarations: [UInt64: (member: UInt64, declaration: ServiceDeclaration)] = [:]
    private var instances: [UInt64: (member: UInt64, declaration: ServiceDeclaration, pointer: UnsafeMutableRawPointer)] = [:]
    /// Creation order, for releasing what the host left (newest first).
    private var order: [UInt64] = []
    private var nextToken: UInt64 = 1

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

    /// The pointer of an instance the host named.
    func pointer(of instance: UInt64) -> UnsafeMutableRawPointer? {
        instances[instance]?.pointer
    }

    /// The provider's `release` of one instance (once; a token released before is ignored).
    func release(instance token: UInt64) {
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
