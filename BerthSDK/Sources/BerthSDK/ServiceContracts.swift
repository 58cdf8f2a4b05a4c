internal import CBerth
import FoundationEssentials

/// A service one plugin provides and others call, across workers: a caseless enum in a
/// small contract package that provider and consumer both depend on (and on nothing of
/// each other). Its `Service` is the contract protocol's existential, whose methods are
/// `async throws` over `Codable & Sendable` values:
///
/// ```swift
/// public protocol ReminderClock { func next(after: Date) async throws -> Date }
///
/// public enum ReminderClockContract: ServiceContract {
///     public static let name = "com.nu.reminders.ReminderClock"
///     public static func client(_ link: ServiceLink) -> any ReminderClock { Client(link: link) }
///     public static func serve(_ service: any ReminderClock, _ call: inout ServiceCall) async throws {
///         switch call.method {
///         case "next": try call.reply(await service.next(after: call.argument()))
///         default: throw call.unknownMethod()
///         }
///     }
///     struct Client: ReminderClock {
///         let link: ServiceLink
///         func next(after: Date) async throws -> Date { try await link.call("next", after) }
///     }
/// }
/// ```
///
/// A call crosses as JSON through the host (`{"method":"next","arguments":[…]}`, berth.h's
/// `service_call`), so the provider may run in another worker; it fails with a
/// `ServiceError` when the provider is missing, crashed or hung.
public protocol ServiceContract {
    /// The contract protocol as an existential (`any ReminderClock`).
    associatedtype Service
    /// The host-wide key of the contract (reverse DNS, `com.nu.reminders.ReminderClock`).
    static var name: String { get }
    /// A client whose methods call through `link`.
    static func client(_ link: ServiceLink) -> Service
    /// Answers one call: switches over `call.method`, decodes the arguments with
    /// `call.argument()` and hands the result to `call.reply`.
    static func serve(_ service: Service, _ call: inout ServiceCall) async throws
}

extension Service {
    /// A contract this plugin provides to every plugin, one instance per `scope`, made by
    /// `make` on first use: `.provides(ReminderClockContract.self, .session) { SystemClock() }`.
    /// Needs `services.provide` for other plugins to call it.
    public static func provides<Contract: ServiceContract>(
        _ contract: Contract.Type, _ scope: ServiceScope, make: @escaping () throws -> Contract.Service
    ) -> Service {
        Service(typeName: Contract.name, scope: scope, contractName: Contract.name,
                make: { ContractInstance(try make()) },
                serve: { instance, call in
                    try await Contract.serve(unsafeDowncast(instance, to: ContractInstance<Contract.Service>.self).service, &call)
                })
    }
}

/// One instance of a provided contract, as the host holds it.
final class ContractInstance<Instance> {
    let service: Instance
    init(_ service: Instance) { self.service = service }
}

extension ScreenContext {
    /// The contract `Contract` in the scope its provider registered it for (the session,
    /// this screen, the current request or the host's lifetime): a client whose calls go
    /// through the host to the provider, wherever it runs. Call it inside `awaiting`.
    /// Needs `services.consume` (unless this plugin provides the contract itself).
    public func service<Contract: ServiceContract>(_ contract: Contract.Type) throws -> Contract.Service {
        guard PluginRuntime.shared.hostFunction(\.service_call) != nil else { throw ServiceLink.hostLacksServiceCall(Contract.name) }
        return Contract.client(ServiceLink(screen: handle, contract: Contract.name))
    }

    /// Runs `body` to completion on the calling thread and returns its result: the bridge
    /// from a screen's synchronous methods to a contract's `async` ones
    /// (`let date = try context.awaiting { try await clock.next(after: now) }`). Host
    /// functions may be called only on the thread the host called the plugin on, so the
    /// body's jobs run here, on this blocked thread, never on a thread pool.
    public func awaiting<T>(_ body: @escaping () async throws -> T) throws -> T {
        try CallingThreadRunner.run(body)
    }
}

/// A consumer's line to one contract: the screen whose scopes the calls use, and the
/// contract's key. A `Client` struct calls `call(method, arguments…)` once per method.
public struct ServiceLink: @unchecked Sendable {
    // @unchecked: the screen handle is the host's token, only passed back to the host on
    // the thread it called the plugin on.
    let screen: OpaquePointer?
    /// The contract's name.
    public let contract: String

    init(screen: OpaquePointer?, contract: String) {
        self.screen = screen
        self.contract = contract
    }

    /// Calls `method` with `arguments`, decoding the provider's result as `Result`.
    public func call<each Argument: Encodable, Result: Decodable>(
        _ method: String, _ arguments: repeat each Argument
    ) async throws -> Result {
        var encoded: [any Encodable] = []
        for argument in repeat each arguments { encoded.append(argument) }
        let reply = try exchange(method, encoded)
        do {
            return try JSONDecoder().decode(Result.self, from: Data(reply))
        } catch {
            throw ServiceError(reason: .failed, contract: contract, method: method,
                               message: "\(contract).\(method): the reply is not a \(Result.self): \(String(decoding: reply.prefix(120), as: UTF8.self))")
        }
    }

    /// Calls `method`, which returns nothing.
    public func call<each Argument: Encodable>(_ method: String, _ arguments: repeat each Argument) async throws {
        var encoded: [any Encodable] = []
        for argument in repeat each arguments { encoded.append(argument) }
        _ = try exchange(method, encoded)
    }

    /// One `service_call`: the request as JSON, the reply's bytes, or the typed error.
    private func exchange(_ method: String, _ arguments: [any Encodable]) throws -> [UInt8] {
        let runtime = PluginRuntime.shared
        guard let serviceCall = runtime.hostFunction(\.service_call) else { throw Self.hostLacksServiceCall(contract) }
        let request = try ServiceRequest.encode(method: method, arguments: arguments)
        var error = berth_error()
        error.struct_size = UInt32(MemoryLayout<berth_error>.size)
        var reply = ByteCollector()
        let status = reply.collect { sink in
            request.withUnsafeBufferPointer { buffer in
                serviceCall(screen, contract, berth_bytes(data: buffer.baseAddress, length: UInt64(buffer.count)), sink, &error)
            }
        }
        guard status == BERTH_OK else {
            let message = withUnsafeBytes(of: &error.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            throw ServiceError(status: status, contract: contract, method: method, message: message)
        }
        return reply.bytes
    }

    static func hostLacksServiceCall(_ contract: String) -> BerthError {
        BerthError(code: .unsupported,
                   message: "contract \(contract): the host does not provide service_call (berth.h ABI 1.2); run the plugin on a host of ABI 1.2 or later")
    }
}

/// One call as the provider sees it: the method's name, its arguments (decoded in order
/// by `argument()`), and the reply `serve` writes with `reply(_:)`.
public struct ServiceCall {
    /// The contract's name.
    public let contract: String
    /// The method called.
    public let method: String
    private let request: [UInt8]
    private let arguments: [Range<Int>]
    private var nextArgument = 0
    /// The reply as JSON (`null` until `reply` is called).
    private(set) var replyBytes: [UInt8] = Array("null".utf8)

    init(contract: String, request: [UInt8]) throws {
        self.contract = contract
        self.request = request
        (method, arguments) = try ServiceRequest.decode(request, contract: contract)
    }

    /// The next argument, decoded as `Value` (the type the method's parameter asks for).
    public mutating func argument<Value: Decodable>(_ type: Value.Type = Value.self) throws -> Value {
        guard nextArgument < arguments.count else {
            throw BerthError(code: .decode, message: "\(contract).\(method): argument \(nextArgument + 1) is missing (the call sent \(arguments.count))")
        }
        let range = arguments[nextArgument]
        nextArgument += 1
        do {
            return try JSONDecoder().decode(Value.self, from: Data(request[range]))
        } catch {
            throw BerthError(code: .decode, message: "\(contract).\(method): argument \(nextArgument) is not a \(Value.self): \(String(decoding: request[range].prefix(120), as: UTF8.self))")
        }
    }

    /// Sets the call's result.
    public mutating func reply<Value: Encodable>(_ value: Value) throws {
        replyBytes = Array(try JSONEncoder().encode(value))
    }

    /// Answers a method that returns nothing (`null`).
    public mutating func reply(_: Void = ()) {
        replyBytes = Array("null".utf8)
    }

    /// The error for a method this contract does not have (the `default:` of `serve`).
    public func unknownMethod() -> any Error {
        BerthError(code: .unsupported, message: "contract \(contract) has no method '\(method)'")
    }
}

/// Why a contract call failed, and the one line that says so.
public struct ServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, as berth.h's status codes tell it.
    public enum Reason: String, Sendable {
        /// The provider is not loaded, was unloaded, or was reloaded during the call.
        case unavailable
        /// The provider crashed before answering.
        case crashed
        /// The provider did not answer in time.
        case timedOut = "timed out"
        /// A capability is missing (`services.consume` here, or `services.provide` in the provider).
        case denied
        /// No loaded plugin provides the contract.
        case notFound = "not found"
        /// The provider answered with an error of its own (or the reply did not decode).
        case failed
    }

    /// What went wrong.
    public var reason: Reason
    /// The contract's name.
    public var contract: String
    /// The method called.
    public var method: String
    /// The host's or the provider's message.
    public var message: String

    /// An error of `reason` about `contract.method`.
    public init(reason: Reason, contract: String, method: String, message: String) {
        self.reason = reason
        self.contract = contract
        self.method = method
        self.message = message
    }

    init(status: berth_status, contract: String, method: String, message: String) {
        let reason: Reason = switch status {
        case berth_status(BERTH_ERR_UNAVAILABLE): .unavailable
        case berth_status(BERTH_ERR_CRASHED): .crashed
        case berth_status(BERTH_ERR_TIMED_OUT): .timedOut
        case berth_status(BERTH_ERR_DENIED): .denied
        case berth_status(BERTH_ERR_NOT_FOUND): .notFound
        default: .failed
        }
        self.init(reason: reason, contract: contract, method: method,
                  message: message.isEmpty ? "\(reason.rawValue) (status \(status))" : message)
    }

    /// One line: the host's message when it names the contract, else prefixed by
    /// `contract.method`.
    public var description: String {
        message.contains(contract) ? message : "\(contract).\(method): \(message)"
    }
}

/// `berth_service_v1.call` of a provided contract: decodes the request and runs the
/// contract's `serve` to completion on the provider's lane (this thread).
let answerContractCall: @convention(c) (
    UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, berth_bytes, UnsafePointer<berth_sink>?, UnsafeMutablePointer<berth_error>?
) -> berth_status = { context, instance, request, reply, errorBuffer in
    guard let context, let instance else { return berth_status(BERTH_ERR_INVALID_ARGUMENT) }
    let box = Unmanaged<ServiceBox>.fromOpaque(context).takeUnretainedValue()
    guard let serve = box.serve else { return berth_status(BERTH_ERR_UNSUPPORTED) }
    let service = Unmanaged<AnyObject>.fromOpaque(instance).takeUnretainedValue()
    do {
        let call = try ServiceCall(contract: box.key, request: request.array)
        let bytes = try CallingThreadRunner.run {
            var call = call
            try await serve(service, &call)
            return call.replyBytes
        }
        guard let reply, let write = reply.pointee.write else { return berth_status(BERTH_OK) }
        return bytes.withUnsafeBufferPointer { write(reply.pointee.context, $0.baseAddress, UInt64($0.count)) }
    } catch let thrown as BerthError {
        return fillError(errorBuffer, thrown)
    } catch let thrown as ServiceError {
        // A call the provider made in turn failed: pass its reason on.
        return fillError(errorBuffer, BerthError(code: .failed, message: thrown.description))
    } catch {
        return fillError(errorBuffer, BerthError(code: .failed, message: "\(error)"))
    }
}
