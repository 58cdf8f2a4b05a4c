@_spi(Engine) import BerthCore
import Foundation
import Logging
internal import CBerth

/// The in-process side of the seam: the plugin's image mapped into the host with
/// `dlopen`, its `berth_plugin_v1` called directly, exports called through libffi. The
/// fastest path; a crash in the plugin is a crash of the host, and a Swift image is
/// never unmapped (it is retired when the generation ends).
@MainActor
final class InProcessPlugin: PluginConnection {
    let pluginID: String
    let handshake: PluginHandshake
    let loadTimings: LoadTimings
    /// The image and its table, called by the rules both modes share.
    private let image: PluginImage
    private let runtime: PluginRuntimeKind
    private let shadowPath: String
    var imagePath: String { shadowPath }
    private let imageBytes: Int
    private let runtimeDirectory: RuntimeDirectory
    private let contextHandle: OpaquePointer
    /// The thread its code runs on when the host must not wait (an action from a front end):
    /// while it is in a call, other calls are refused (busy) or, for a closing screen, wait.
    private let lane: LaneState
    /// The render made on the lane with the last action, until the host renders (or any
    /// other call makes it stale).
    private var prerendered: PrerenderedTree<Result<CheckedRender, PluginCallError>>?
    private(set) var rendersTakenFromActions = 0
    var laneCallsRun: Int { lane.callsRun }

    /// Copies, opens and handshakes the image and prepares its exports, on the calling
    /// thread (the main actor, which waits). On any failure nothing of it stays loaded (a
    /// Swift image already mapped is retired: `onRetire`).
    convenience init(
        plugin: ValidatedPlugin, generation number: Int, runtimeDirectory: RuntimeDirectory, logger: Logger,
        host: (any PluginFacingHost)?, onRetire: (Int) -> Void
    ) throws(LoaderError) {
        let opening = try Opening(plugin: plugin, generation: number, runtimeDirectory: runtimeDirectory, logger: logger, host: host)
        let image: PluginImage
        do {
            image = try opening.image.open { onRetire(plugin.librarySize) }
        } catch {
            opening.abandon()
            throw error
        }
        self.init(opening, image: image)
    }

    /// `init`, with the image opened and handshaken on the new generation's own lane: the
    /// main actor goes on meanwhile, and answers there what the plugin's entry asks of the
    /// host (a service registered) while the lane waits (`LaneHop`).
    static func open(
        plugin: ValidatedPlugin, generation number: Int, runtimeDirectory: RuntimeDirectory, logger: Logger,
        host: (any PluginFacingHost)?, onRetire: (Int) -> Void
    ) async throws(LoaderError) -> InProcessPlugin {
        let opening = try Opening(plugin: plugin, generation: number, runtimeDirectory: runtimeDirectory, logger: logger, host: host)
        let retired = Locked(false)
        let loading = RunningPluginCall.Call.loading(opening.pluginID, generation: number)
        let context = LaneCallContext(screen: nil, request: nil, held: HeldRequests())
        let result = await opening.lane.run(loading, in: context) { [image = opening.image] () -> Result<OpenedImage, LoaderError> in
            do throws(LoaderError) {
                return .success(OpenedImage(image: try image.open { retired.withLock { $0 = true } }))
            } catch {
                return .failure(error)
            }
        }
        if retired.withLock({ $0 }) { onRetire(plugin.librarySize) }
        switch result {
        case .success(let opened):
            return InProcessPlugin(opening, image: opened.image)
        case .failure(let error):
            opening.abandon()
            opening.lane.end()
            throw error
        }
    }

    private init(_ opening: Opening, image: PluginImage) {
        pluginID = opening.pluginID
        runtime = opening.image.manifest.runtime
        imageBytes = opening.imageBytes
        runtimeDirectory = opening.runtimeDirectory
        shadowPath = opening.image.path
        var timings = opening.timings
        timings.dlopen = image.openDuration
        timings.handshake = image.handshakeDuration
        loadTimings = timings
        self.image = image
        contextHandle = opening.image.handle
        handshake = image.table.handshake
        lane = opening.lane
    }

    func create(route: String, argument: [UInt8], screen: ScreenHandle) throws(PluginCallError) -> PluginInstanceID {
        try callable()
        let created = try image.create(route: route, argument: argument, screen: screen.opaque)
        return PluginInstanceID(rawValue: UInt(bitPattern: created))
    }

    func destroy(_ instance: PluginInstanceID) {
        lane.whenFree { [self, image] in
            discardPrerenderedTree()
            HostCall.run { image.destroy(Self.pointer(instance)) }
        }
    }

    func activate(_ instance: PluginInstanceID) throws(PluginCallError) {
        try callable()
        try image.activate(Self.pointer(instance))
    }

    /// While the lane is busy (back on a screen whose action still runs) it runs once the
    /// call has returned; a failure then is only logged by the plugin's own lines.
    func deactivate(_ instance: PluginInstanceID) throws(PluginCallError) {
        guard lane.refusingCall == nil else {
            lane.whenFree { [self, image] in
                discardPrerenderedTree()
                HostCall.run { _ = try? image.deactivate(Self.pointer(instance)) }
            }
            return
        }
        discardPrerenderedTree()
        try image.deactivate(Self.pointer(instance))
    }

    func screenEvent(_ instance: PluginInstanceID, code: Int32, flag: Bool) {
        lane.whenFree { [self, image] in
            discardPrerenderedTree()
            HostCall.run { image.screenEvent(Self.pointer(instance), code: code, flag: flag) }
        }
    }

    func closeOnLane(_ call: ClosingCall, of instance: PluginInstanceID, as running: RunningPluginCall.Call,
                     finished: @escaping (String?) -> Void) {
        discardPrerenderedTree()
        let target = LaneImageCall(image: image, instance: instance)
        lane.close(as: running, { target.close(call) }, finished: finished)
    }

    func action(_ instance: PluginInstanceID, name: String, payload: [UInt8]) throws(PluginCallError) {
        try callable()
        try image.action(Self.pointer(instance), name: name, payload: payload)
    }

    func delegateReceived(_ instance: PluginInstanceID, from child: Int, action: String, payload: [UInt8]) throws(PluginCallError) {
        try callable()
        try image.delegateReceived(Self.pointer(instance), from: UInt64(child), action: action, payload: payload)
    }

    func contextReceived(_ instance: PluginInstanceID, type: String, payload: [UInt8]) throws(PluginCallError) {
        try callable()
        try image.contextReceived(Self.pointer(instance), type: type, payload: payload)
    }

    /// `render_tree` gets the screen's slots in one batch; a v1.0 `render` reads each slot
    /// itself through `state_read` as it renders.
    func render(_ instance: PluginInstanceID, state: StateStorage) throws(PluginCallError) -> RenderedTree {
        try callable()
        return try image.render(Self.pointer(instance)) { state.renderSlots() }
    }

    func saveState(_ instance: PluginInstanceID) throws(PluginCallError) -> [UInt8] {
        try callable()
        return try image.saveState(Self.pointer(instance))
    }

    func restoreState(_ instance: PluginInstanceID, _ bytes: [UInt8]) throws(PluginCallError) {
        try callable()
        try image.restoreState(Self.pointer(instance), bytes)
    }

    func callExport(_ symbol: String, arguments: [FFIValue]) throws(FFIError) -> FFIValue {
        discardPrerenderedTree()
        lane.waitForHostCall()
        if let busy = lane.refusingCall { throw FFIError(.pluginFailed, PluginCallError.busy(pluginID, busy).message) }
        return try image.callExport(symbol, arguments: arguments)
    }

    func resourceUsage() -> PluginResourceUsage { .current }

    // MARK: On the lane

    var busyCall: RunningPluginCall.Call? { lane.busy }
    var refusingCall: RunningPluginCall.Call? { lane.refusingCall }
    var callInTheWay: RunningPluginCall.Call? { lane.callInTheWay }
    func waitForHostCall() { lane.waitForHostCall() }

    func afterCall(_ work: @escaping () -> Void) { lane.afterCall(work) }
    var isFreeForHostCall: Bool { lane.isFreeForHostCall }

    func hostCallsEnded() async { await lane.hostCallsEnded() }
    /// How many people's calls wait in `hostCallsEnded` now; for tests.
    var peopleWaiting: Int { lane.peopleWaiting }

    /// The action on the plugin's own thread: its calls back into the host are answered by
    /// the main actor, which is free meanwhile (`InProcessTransport`, `LaneHop`). With
    /// `state` (a `render_tree` plugin's visible screen), the render after it runs in the
    /// same lane job when the action called nothing back in the host, and waits, checked,
    /// for the host's `renderOnLane` of the instance: one hop to the lane instead of two.
    func actionOnLane(_ instance: PluginInstanceID, name: String, payload: [UInt8], renderingAfterwards state: StateStorage?,
                      as running: RunningPluginCall.Call, in context: LaneCallContext) async throws(PluginCallError) {
        try callable(waiting: false)
        let call = LaneImageCall(image: image, instance: instance)
        let renderAfter = state.flatMap { state in
            handshake.functions.contains(.renderTree)
                ? RenderInputs(slots: state.renderSlots(), batchKeys: state.batchKeys, paths: state.identityPaths, version: state.version) : nil
        }
        let result = await lane.run(running, in: context, { () -> LaneAction in
            HostCall.run {
                let callsBefore = HostCallbackCount.onThisThread
                do throws(PluginCallError) {
                    try call.image.action(Self.pointer(call.instance), name: name, payload: payload)
                } catch {
                    return LaneAction(failure: error)
                }
                // Only when the action left the host's side untouched (no navigation, no state
                // written, nothing asked; counted on this lane's thread, so for this call
                // alone): then this render sees what the host's would.
                guard let renderAfter, HostCallbackCount.onThisThread == callsBefore else { return LaneAction(failure: nil) }
                let output = Result { () throws(PluginCallError) in try call.image.render(Self.pointer(call.instance)) { renderAfter.slots } }
                return LaneAction(render: output.map { StateStorage.checked($0, identityPaths: renderAfter.paths) })
            }
        }, returned: { [self] result in
            // Kept before the work that waited for the lane runs (a task's post, a closing
            // screen's events): every call into the plugin drops it. The storage's version is
            // the one the render started from: a write since makes it stale.
            guard let state, let renderAfter, let render = result.render else { return }
            prerendered = PrerenderedTree(instance: instance, storage: state, version: renderAfter.version, batchKeys: renderAfter.batchKeys,
                                          callsMade: nil, result: render)
        })
        if let failure = result.failure { throw failure }
    }

    /// The render on the plugin's own thread (a v1.0 `render`'s `state_read` calls are
    /// answered by the main actor meanwhile), its tree decoded and checked there; or the
    /// render made with the last action, when nothing changed since.
    func renderOnLane(_ instance: PluginInstanceID, state: StateStorage, as running: RunningPluginCall.Call,
                      in context: LaneCallContext) async throws(PluginCallError) -> CheckedRender {
        if let ready = prerendered?.take(for: instance, state: state) {
            prerendered = nil
            rendersTakenFromActions += 1
            return try ready.get()
        }
        try callable(waiting: false)
        let call = LaneImageCall(image: image, instance: instance)
        let slots = handshake.functions.contains(.renderTree) ? state.renderSlots() : []
        let paths = state.identityPaths
        let result = await lane.run(running, in: context) { () -> Result<CheckedRender, PluginCallError> in
            let output = HostCall.run { () -> Result<RenderedTree, PluginCallError> in
                do throws(PluginCallError) {
                    return .success(try call.image.render(Self.pointer(call.instance)) { slots })
                } catch {
                    return .failure(error)
                }
            }
            return output.map { StateStorage.checked($0, identityPaths: paths) }
        }
        return try result.get()
    }

    /// `create` on the plugin's own thread; its calls back (observers registered from its
    /// initializer) are answered by the main actor meanwhile.
    func createOnLane(route: String, argument: [UInt8], screen: ScreenHandle, as running: RunningPluginCall.Call,
                      in context: LaneCallContext) async throws(PluginCallError) -> PluginInstanceID {
        try callable(waiting: false)
        let call = LaneImageCall(image: image, instance: PluginInstanceID(rawValue: UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(screen.opaque)))))
        let result = await lane.run(running, in: context) { () -> Result<UInt, PluginCallError> in
            HostCall.run {
                do throws(PluginCallError) {
                    let handle = OpaquePointer(bitPattern: call.instance.rawValue)!
                    let created = try call.image.create(route: route, argument: argument, screen: handle)
                    return .success(UInt(bitPattern: created))
                } catch {
                    return .failure(error)
                }
            }
        }
        return PluginInstanceID(rawValue: try result.get())
    }

    func activateOnLane(_ instance: PluginInstanceID, as running: RunningPluginCall.Call, in context: LaneCallContext) async throws(PluginCallError) {
        try callable(waiting: false)
        let call = LaneImageCall(image: image, instance: instance)
        let result = await lane.run(running, in: context) { () -> Result<Void, PluginCallError> in
            HostCall.run { Result { () throws(PluginCallError) in try call.image.activate(Self.pointer(call.instance)) } }
        }
        try result.get()
    }

    func deliverOnLane(_ delivery: LaneDelivery, as running: RunningPluginCall.Call, in context: LaneCallContext) async throws(PluginCallError) {
        try callable(waiting: false)
        let call = LaneImageCall(image: image, instance: delivery.instance)
        let result = await lane.run(running, in: context) { () -> Result<Void, PluginCallError> in
            HostCall.run {
                Result { () throws(PluginCallError) in
                    let instance = Self.pointer(call.instance)
                    switch delivery {
                    case .delegate(_, let child, let action, let payload):
                        try call.image.delegateReceived(instance, from: UInt64(child), action: action, payload: payload)
                    case .context(_, let type, let payload):
                        try call.image.contextReceived(instance, type: type, payload: payload)
                    }
                }
            }
        }
        try result.get()
    }

    /// Refuses a call while the lane is in another one: plugin code never runs on two threads.
    /// A call of the synchronous API (`waiting`) waits a while for a task's post first; a
    /// call on the lane has awaited it (`hostCallsEnded`) and never blocks.
    /// Any call may change what the plugin renders: a tree made with an action is dropped.
    private func callable(waiting: Bool = true) throws(PluginCallError) {
        discardPrerenderedTree()
        if waiting { lane.waitForHostCall() }
        if let busy = lane.refusingCall { throw PluginCallError.busy(pluginID, busy) }
    }

    /// A stale tree made with an action is not used, but the identities it defined are
    /// taken in (the plugin counts them as sent).
    private func discardPrerenderedTree() {
        guard let stale = prerendered else { return }
        prerendered = nil
        guard case .success(let checked) = stale.result, case .binary(let bytes) = checked.output else { return }
        try? stale.storage.takeDefinitions(of: bytes)
    }

    func exportFunction(_ symbol: String) -> ForeignFunction? { image.exportFunction(symbol) }

    /// Tells the plugin to let go, then closes a C image (proving it is unmapped) or
    /// retires a Swift image.
    func end(waitingForWorker: Bool) throws(LoaderError) -> GenerationEnding {
        image.unload()
        defer { runtimeDirectory.discard(shadowCopy: shadowPath) }
        switch runtime {
        case .swift:
            // A retired image's code may still run (a leaked thread could log), so its
            // handle stays valid for the life of the process.
            return .retired(bytes: imageBytes)
        case .c:
            try image.close()
            PluginContext.releaseHandle(contextHandle)
            return .unmapped
        }
    }

    nonisolated static func pointer(_ instance: PluginInstanceID) -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: instance.rawValue)
    }
}

/// What a render on the lane starts from, taken from the screen's storage on the main actor.
private struct RenderInputs: Sendable {
    let slots: [RenderSlot]
    let batchKeys: [StateStorage.Key]
    let paths: [String]
    /// The storage's version then: a write since makes the render stale.
    let version: UInt64
}

/// What an action's lane job brings back: the action's failure, or the render made after it.
private struct LaneAction: Sendable {
    var failure: PluginCallError?
    var render: Result<CheckedRender, PluginCallError>?

    init(failure: PluginCallError?) { self.failure = failure }

    init(render: Result<CheckedRender, PluginCallError>) { self.render = render }
}

/// An image and an instance carried to the plugin's lane: only that thread calls into it
/// until the call returns (the lane is busy meanwhile), so nothing is shared.
private struct LaneImageCall: @unchecked Sendable {
    let image: PluginImage
    let instance: PluginInstanceID

    /// A closed screen's call, on the lane; its failure's message.
    func close(_ call: ClosingCall) -> String? {
        let pointer = InProcessPlugin.pointer(instance)
        switch call {
        case .deactivate:
            do { try image.deactivate(pointer) } catch { return error.message }
        case .event(let code, let flag):
            image.screenEvent(pointer, code: code, flag: flag)
        case .destroy:
            image.destroy(pointer)
        }
        return nil
    }
}

/// What a new generation's image is opened with: its verified shadow copy, its lane, and the
/// handle its plugin will know the host by (`PluginContext`). Made on the main actor.
@MainActor
private struct Opening {
    let pluginID: String
    let imageBytes: Int
    let runtimeDirectory: RuntimeDirectory
    let lane: LaneState
    let image: ImageToOpen
    var timings = LoadTimings()

    init(plugin: ValidatedPlugin, generation number: Int, runtimeDirectory: RuntimeDirectory, logger: Logger,
         host: (any PluginFacingHost)?) throws(LoaderError) {
        let manifest = plugin.manifest
        pluginID = manifest.id
        imageBytes = plugin.librarySize
        self.runtimeDirectory = runtimeDirectory
        let phase = ContinuousClock.now
        let shadow = try runtimeDirectory.verifiedShadowCopy(of: plugin, generation: number)
        timings.copyAndHash = phase.elapsed
        lane = LaneState(name: manifest.id)
        let context = PluginContext(pluginID: manifest.id, generation: number, logger: logger, host: host, grant: CapabilityGrant(manifest: manifest),
                                    limits: manifest.limits, lane: lane)
        image = ImageToOpen(path: shadow, manifest: manifest, handle: context.retainedHandle())
    }

    /// The image did not open: its handle and shadow copy go.
    func abandon() {
        PluginContext.releaseHandle(image.handle)
        runtimeDirectory.discard(shadowCopy: image.path)
    }
}

/// The shadow copy to open and the plugin's handle, carried to the new generation's lane:
/// only that thread uses them until the open returns (nothing else knows the handle yet).
private struct ImageToOpen: @unchecked Sendable {
    let path: String
    let manifest: PluginManifest
    let handle: OpaquePointer

    /// Opens and handshakes the image, on the calling thread.
    func open(onRetiredAfterFailure: () -> Void) throws(LoaderError) -> PluginImage {
        try PluginImage(path: path, manifest: manifest, disposal: manifest.runtime == .swift ? .retire : .close,
                        hostTable: HostTable.inProcess, handle: handle, onRetiredAfterFailure: onRetiredAfterFailure)
    }
}

/// An image opened on the lane, handed back to the main actor, which alone uses it from then on.
private struct OpenedImage: @unchecked Sendable {
    let image: PluginImage
}
