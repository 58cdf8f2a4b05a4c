internal import CBerth

/// What a managed effect's body gets: cancellation, sleeping, and posting results back to
/// its screen. The body runs on a host worker thread, never the main thread.
public struct EffectContext: @unchecked Sendable {
    // @unchecked: the handle is the host's task token; berth.h allows these three calls
    // from the task's own thread, which is the only place an EffectContext exists.
    let handle: OpaquePointer?

    /// True once the host cancelled the effect (its screen deactivated, or it was replaced).
    public var isCancelled: Bool {
        guard let isCancelled = PluginRuntime.shared.hostFunction(\.task_is_cancelled) else { return true }
        return isCancelled(handle) != 0
    }

    /// Sleeps up to `milliseconds`; false as soon as the effect is cancelled.
    @discardableResult
    public func sleep(milliseconds: UInt64) -> Bool {
        guard let sleep = PluginRuntime.shared.hostFunction(\.task_sleep) else { return false }
        return sleep(handle, milliseconds) == BERTH_OK
    }

    /// Delivers `action` to the screen on the main thread, as `handle(action:payload:)`.
    /// Dropped when the screen is no longer active.
    public func post(_ action: String, payload: [UInt8] = []) {
        guard let post = PluginRuntime.shared.hostFunction(\.task_post) else { return }
        _ = payload.withUnsafeBufferPointer { buffer in
            post(handle, action, berth_bytes(data: buffer.baseAddress, length: UInt64(buffer.count)))
        }
    }
}

extension ScreenContext {
    /// Starts a managed effect under `key`: the host runs `body` on a worker thread,
    /// cancels it when this screen deactivates (waiting until it returns), and replaces a
    /// running effect with the same key. Starting one on an inactive screen throws.
    public func run(_ key: String, _ body: @escaping @Sendable (EffectContext) -> Void) throws {
        let runtime = PluginRuntime.shared
        guard let start = runtime.hostFunction(\.task_start) else { throw BerthError.hostLacks("task_start") }
        let box = Unmanaged.passRetained(EffectBox(body: body)).toOpaque()
        var task = berth_task_v1()
        task.struct_size = UInt32(MemoryLayout<berth_task_v1>.size)
        task.context = box
        task.run = { context, handle in
            guard let context else { return }
            Unmanaged<EffectBox>.fromOpaque(context).takeUnretainedValue().body(EffectContext(handle: handle))
        }
        task.release = { context in
            guard let context else { return }
            Unmanaged<EffectBox>.fromOpaque(context).release()
        }
        // The host releases the box whether it starts the task or refuses it.
        try runtime.check { error in start(handle, key, &task, error) }
    }

    /// Cancels the effect `key` and waits until it has returned; a no-op when none runs.
    public func cancelEffect(_ key: String) {
        guard let cancel = PluginRuntime.shared.hostFunction(\.task_cancel) else { return }
        _ = cancel(handle, key)
    }
}

/// Keeps an effect's closure alive while the host holds its task.
private final class EffectBox {
    let body: @Sendable (EffectContext) -> Void
    init(body: @escaping @Sendable (EffectContext) -> Void) { self.body = body }
}
