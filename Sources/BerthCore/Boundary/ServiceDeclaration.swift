package import CBerth

/// A plugin's `berth_service_v1`, copied (up to its `struct_size`) and checked: the same
/// rules and the same calls of its `create` and `release` wherever the plugin runs (the
/// host's table in process, the worker's in a worker).
package struct ServiceDeclaration: Sendable {
    package let key: String
    package let kind: ScopeKind
    private let context: ServiceContext
    private let create: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?, UnsafeMutablePointer<berth_error>?) -> berth_status
    private let releaseFunction: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void
    /// ABI 1.2: how the service answers a contract call; nil for a C table (resolved only).
    private let callFunction: (@convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, berth_bytes, UnsafePointer<berth_sink>?,
                                               UnsafeMutablePointer<berth_error>?) -> berth_status)?

    /// True for a contract: any plugin, in any process, calls it through the host.
    package var answersCalls: Bool { callFunction != nil }

    /// The declaration, or the refusal `service_register` reports.
    package static func read(_ service: UnsafePointer<berth_service_v1>?) -> Result<ServiceDeclaration, HostRefusal> {
        guard let service else { return .failure(HostRefusal(.invalidArgument, "service_register: service is NULL")) }
        var copy = berth_service_v1()
        withUnsafeMutableBytes(of: &copy) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: service, count: min(Int(service.pointee.struct_size), target.count)))
        }
        guard let key = copy.key.map({ String(cString: $0) }), !key.isEmpty else {
            return .failure(HostRefusal(.invalidArgument, "service_register: the key is empty"))
        }
        guard let kind = ScopeKind(code: copy.scope) else {
            return .failure(HostRefusal(.invalidArgument, "service_register \(key): unknown scope \(copy.scope)"))
        }
        guard let create = copy.create, let release = copy.release else {
            return .failure(HostRefusal(.invalidArgument, "service_register \(key): create and release are required"))
        }
        // A struct of v1.0/v1.1 size ends before `call`: the copy's field stays NULL.
        return .success(ServiceDeclaration(key: key, kind: kind, context: ServiceContext(pointer: copy.context), create: create,
                                           releaseFunction: release, callFunction: copy.call))
    }

    /// One instance from the provider's `create`; its failure names the key and the message.
    package func make() throws(ScopeError) -> UnsafeMutableRawPointer {
        var made: UnsafeMutableRawPointer?
        var failure = BerthErrorBuffer.make()
        let status = create(context.pointer, &made, &failure)
        guard status == BERTH_OK, let made else {
            throw ScopeError(.factoryFailed, key: key, BerthErrorBuffer.message(of: failure, status: status))
        }
        return made
    }

    /// The provider's `release` of one instance.
    package func release(_ instance: UnsafeMutableRawPointer) {
        releaseFunction(context.pointer, instance)
    }

    /// One contract call on `instance`, on the calling thread (the provider's lane): the
    /// reply's bytes, or the provider's refusal with its status and message.
    package func invoke(_ instance: UnsafeMutableRawPointer, request: [UInt8]) -> Result<[UInt8], PluginCallError> {
        guard let callFunction else {
            return .failure(PluginCallError(status: Int32(BERTH_ERR_UNSUPPORTED), message: "\(key) answers no calls: it is a C table, resolved with service_resolve"))
        }
        let reply = SinkBuffer()
        var failure = BerthErrorBuffer.make()
        let status = HostCall.run {
            request.withUnsafeBufferPointer { bytes in
                reply.withSink { callFunction(context.pointer, instance, berth_bytes(data: bytes.baseAddress, length: UInt64(bytes.count)), $0, &failure) }
            }
        }
        guard status == BERTH_OK else {
            return .failure(PluginCallError(status: status, message: BerthErrorBuffer.message(of: failure, status: status)))
        }
        return .success(reply.bytes)
    }
}

/// A C factory's context pointer, carried into the registry's Sendable closures.
/// `@unchecked Sendable`: the provider plugin owns the pointer and documents (berth.h)
/// that its create and release may be called from any thread.
package struct ServiceContext: @unchecked Sendable {
    package let pointer: UnsafeMutableRawPointer?

    package init(pointer: UnsafeMutableRawPointer?) {
        self.pointer = pointer
    }
}
