package import CBerth

/// How long a scoped instance lives.
public enum ScopeKind: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Host lifetime (or until the plugin that provides it unloads).
    case singleton
    /// One per open screen; cleared when the screen is removed permanently.
    case screen
    /// Begun and ended explicitly (`session begin ID`, `session end`).
    case session
    /// One per action, context delivery or host command; task-local.
    case request

    /// The kind's name (`singleton`, `screen`, `session`, `request`).
    public var description: String { rawValue }

    /// Its `BERTH_SCOPE_*` number.
    package var code: Int32 {
        switch self {
        case .singleton: Int32(BERTH_SCOPE_SINGLETON)
        case .screen: Int32(BERTH_SCOPE_SCREEN)
        case .session: Int32(BERTH_SCOPE_SESSION)
        case .request: Int32(BERTH_SCOPE_REQUEST)
        }
    }

    package init?(code: Int32) {
        switch Int(code) {
        case Int(BERTH_SCOPE_SINGLETON): self = .singleton
        case Int(BERTH_SCOPE_SCREEN): self = .screen
        case Int(BERTH_SCOPE_SESSION): self = .session
        case Int(BERTH_SCOPE_REQUEST): self = .request
        default: return nil
        }
    }
}

/// Why a scoped service could not be resolved or registered. Says which key, which scope
/// kind, and what to do.
@_spi(Engine) public struct ScopeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which rule was broken: no registration for the key, no scope of its kind open, the scope ended, the provider unloaded, the factory failed, the instance has another type, a second registration.
    package enum Code: Sendable, Equatable {
        /// No registration for the key; no scope of its kind is current; the scope has ended; the providing plugin was unloaded; the factory failed; the instance is not of the asked type; the key is registered already.
        case notRegistered, noCurrentScope, scopeEnded, providerUnloaded, factoryFailed, wrongType, duplicate
        /// The provider's instances live in another process than the one resolving.
        case acrossProcesses
        /// Another plugin's service, and the consumer lacks `services.consume` or the
        /// provider `services.provide` (`denial` says which).
        case denied
    }

    /// Which rule was broken.
    package var code: Code
    /// The service key involved.
    package var key: String
    /// What happened and what to do.
    package var message: String
    /// For `denied`: the capability refusal the host reports.
    package var denial: CapabilityDenial?

    /// An error of `code` about `key`, explained by `message`.
    package init(_ code: Code, key: String, _ message: String) {
        self.code = code
        self.key = key
        self.message = message
    }

    /// A resolve outside the capabilities (see `ServiceConsumer.denial(toResolve:)`).
    package init(denied denial: CapabilityDenial, key: String) {
        self.init(.denied, key: key, denial.message)
        self.denial = denial
    }

    /// `key: message`.
    public var description: String { "\(key): \(message)" }

    /// The berth.h status a plugin's `service_resolve` gets for it.
    package var resolveStatus: HostRefusal.Code {
        switch code {
        case .notRegistered, .providerUnloaded: .notFound
        case .acrossProcesses: .unsupported
        case .denied: .denied
        case .noCurrentScope, .scopeEnded, .factoryFailed, .wrongType, .duplicate: .state
        }
    }
}

/// An instance held by a scope: a Swift object, the pointer a C factory returned, or the
/// token of an instance a worker made (its pointer never leaves the worker).
package enum ScopedValue: @unchecked Sendable {
    // @unchecked for `.pointer` alone: it belongs to its provider plugin, which documents
    // its own thread rules; the host only stores it, hands it back, and releases it once.
    // An object must be Sendable itself (`registerScoped` asks for `AnyObject & Sendable`).
    case object(any AnyObject & Sendable)
    case pointer(UnsafeMutableRawPointer)
    /// The token of an instance a worker's plugin made; the pointer stays in the worker.
    case workerInstance(UInt64)

    /// What an in-process plugin gets (nil for a worker's instance, which it cannot reach).
    package var pointer: UnsafeMutableRawPointer? {
        switch self {
        case .pointer(let pointer): pointer
        case .object(let object): Unmanaged.passUnretained(object).toOpaque()
        case .workerInstance: nil
        }
    }
}
