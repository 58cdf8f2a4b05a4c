@_spi(Engine) import BerthCore
/// What a registration, and the instances it makes, are found by: a Swift type the host
/// registered (hashed by its `ObjectIdentifier`: a resolve does no string work) or the name
/// a plugin chose for its service.
struct ServiceKey: Hashable, Sendable {
    private enum Identity: Hashable, Sendable {
        case type(ObjectIdentifier)
        case name(String)
    }

    private let identity: Identity

    private init(identity: Identity) { self.identity = identity }

    static func type<T>(_ type: T.Type) -> ServiceKey { ServiceKey(identity: .type(ObjectIdentifier(type))) }
    init(type: ObjectIdentifier) { identity = .type(type) }
    static func named(_ name: String) -> ServiceKey { ServiceKey(identity: .name(name)) }

    /// A type key's type.
    var typeIdentity: ObjectIdentifier? {
        if case .type(let type) = identity { return type }
        return nil
    }

    /// A type key: the registration's factory makes exactly that type.
    var isType: Bool {
        if case .type = identity { return true }
        return false
    }
}
