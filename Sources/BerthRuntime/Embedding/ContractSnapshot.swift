@_spi(Engine) import BerthCore
/// One service contract in force across plugins (Docs/scopes.md#across-plugins), as an
/// application sees it: a value read on the main actor.
public struct ContractSnapshot: Sendable, Equatable {
    /// The contract's key (`org.berth.Clock`).
    public var key: String
    /// How long an instance of it lives.
    public var kind: ScopeKind
    /// Who provides it: the plugin and its generation (`org.berth.clock#1`).
    public var provider: String
    /// The plugins that called it so far, sorted.
    public var callers: [String]
}

extension BerthHost {
    /// Every contract in force, by key.
    public var contracts: [ContractSnapshot] {
        scopes.contracts.map { ContractSnapshot(key: $0.key, kind: $0.kind, provider: $0.provider, callers: $0.callers) }
    }
}
