@_spi(Engine) import BerthRuntime

/// The host's data as the CLI shows it: one line per item, and the next step where one helps.
@MainActor
enum HostText {
    /// `state`: every slot of every open screen.
    static func stateLines(_ host: BerthHost) -> [String] {
        host.stateSlots.map { slot in
            let value = StateValueText.decoded(fingerprint: slot.fingerprint, bytes: slot.bytes).map { "= \($0)" }
            return "\(slot.identity)[\(slot.index)]  " + (value ?? "fingerprint \(String(slot.fingerprint, radix: 16))  \(slot.bytes.count) byte(s)")
        }
    }

    /// `state`: persisted keys per plugin, or why persistence is off.
    static func persistedLines(_ host: BerthHost) -> [String] {
        switch host.persistenceStatus {
        case .disabled: return ["persistence off (no --state-dir)"]
        case .failed(let path, let error): return ["persistence OFF: \(path): \(error)"]
        case .on(let path):
            return ["persisted in \(path)"] + host.persistedKeys().map { entry in
                let swift = host.plugins[entry.plugin]?.source.manifest.runtime == .swift
                let value = host.persistedValue(plugin: entry.plugin, key: entry.key).flatMap { StateValueText.persisted($0, swiftPlugin: swift) }
                return "  \(entry.plugin)/\(entry.key)  " + (value.map { "= \($0)" } ?? "\(entry.bytes) byte(s)")
            }
        }
    }

    /// `observers`: who observes which route context.
    static func contextObserverLines(_ host: BerthHost) -> [String] {
        host.contextObservations.map { "screen \($0.screen) \($0.pluginID)/\($0.route): \($0.type)\($0.byHost ? " (host)" : "")" }
    }

    /// `scopes`: one line per live scope: kind, id, owner, instance count and keys.
    static func scopeLines(_ host: BerthHost) -> [String] {
        let order: [ScopeKind] = [.singleton, .session, .screen, .request]
        return host.scopes.liveScopes
            .sorted { (order.firstIndex(of: $0.kind) ?? 0, $0.id) < (order.firstIndex(of: $1.kind) ?? 0, $1.id) }
            .map { scope in
                let keys = scope.keys
                return "\(scope.kind) \(scope.id)  owner \(scope.owner)  \(keys.count) instance(s)\(keys.isEmpty ? "" : ": " + keys.joined(separator: ", "))"
            }
    }

    /// An event line, with the command that helps where there is one.
    static func eventLine(_ event: HostEvent) -> String {
        switch event.kind {
        case .retiredLimitExceeded: "\(event): run `berth restart` to start a fresh process (persisted state and open screens are kept)"
        case .denied where !event.message.contains("system-call filter"): "\(event) (if you trust the plugin, grant the capability: Plugin(capabilities:) in Swift, \"capabilities\" in a C plugin's plugin.json)"
        default: event.description
        }
    }
}
