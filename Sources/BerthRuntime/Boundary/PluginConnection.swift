@_spi(Engine) import BerthCore
internal import CBerth

/// The host → plugin half of the seam: everything routing, lifecycle, state, scopes and
/// reload ask of one loaded plugin generation. Nothing above this protocol knows whether
/// the plugin runs in the host's process (`InProcessPlugin`: dlopen, function table,
/// libffi) or elsewhere; the plugin → host half is `PluginToHost` (`HostAdapter`, `HostCallbackHandler.answer`).
///
/// Every call is made on the host's main actor, marked with `HostCall.run`, with the
/// screen's scope current (see `ModuleInstance.call`).
@MainActor
package protocol PluginConnection: AnyObject {
    /// What the handshake read: ABI, table size, the optional functions the plugin has.
    var handshake: PluginHandshake { get }
    /// The file the plugin's image was loaded from (a per-generation shadow copy).
    var imagePath: String { get }
    /// What the load cost, by phase (for the reload's timings).
    var loadTimings: LoadTimings { get }

    /// Creates a module instance for `route`. `screen` is the host's handle for the new
    /// screen: plugin → host calls made by the instance name it.
    func create(route: String, argument: [UInt8], screen: ScreenHandle) throws(PluginCallError) -> PluginInstanceID
    /// Destroys an instance (once, after deactivation).
    func destroy(_ instance: PluginInstanceID)
    func activate(_ instance: PluginInstanceID) throws(PluginCallError)
    func deactivate(_ instance: PluginInstanceID) throws(PluginCallError)
    func screenEvent(_ instance: PluginInstanceID, code: Int32, flag: Bool)
    /// A closed screen's `call` on the plugin's lane, after what runs there now and the
    /// closing calls queued before it; the main actor goes on (`LaneState.close`).
    /// `finished` gets its failure's message, or nil, on the main actor.
    func closeOnLane(_ call: ClosingCall, of instance: PluginInstanceID, as running: RunningPluginCall.Call,
                     finished: @escaping (String?) -> Void)
    func action(_ instance: PluginInstanceID, name: String, payload: [UInt8]) throws(PluginCallError)
    /// An action after which the host renders this instance (the visible screen, at the end
    /// of the operation): a connection may render it with the action and hand that tree to
    /// the next `render` when nothing changed in between. By default, the plain action.
    func action(_ instance: PluginInstanceID, name: String, payload: [UInt8], renderingAfterwards state: StateStorage) throws(PluginCallError)
    func delegateReceived(_ instance: PluginInstanceID, from child: Int, action: String, payload: [UInt8]) throws(PluginCallError)
    func contextReceived(_ instance: PluginInstanceID, type: String, payload: [UInt8]) throws(PluginCallError)
    /// One render pass; returns the view tree as the plugin wrote it. `state` is the
    /// instance's storage: with `render_tree` its slots go to the plugin in one batch (in
    /// another process, with the request: one round trip).
    func render(_ instance: PluginInstanceID, state: StateStorage) throws(PluginCallError) -> RenderedTree
    func saveState(_ instance: PluginInstanceID) throws(PluginCallError) -> [UInt8]
    func restoreState(_ instance: PluginInstanceID, _ bytes: [UInt8]) throws(PluginCallError)
    /// Calls a manifest export with typed arguments.
    func callExport(_ symbol: String, arguments: [FFIValue]) throws(FFIError) -> FFIValue
    /// The export's prepared libffi function when it runs in this process (typed call
    /// sites write into its slots); nil when calls must go through `callExport`.
    func exportFunction(_ symbol: String) -> ForeignFunction?
    /// Tells the plugin to let go and gives its code back: what became of it. A worker's
    /// last plugin ends on the worker's lane, and the worker stops there, unless
    /// `waitingForWorker` (the host's exit: nothing is left to go on meanwhile).
    func end(waitingForWorker: Bool) throws(LoaderError) -> GenerationEnding
    /// The heap and CPU time of the process the plugin runs in.
    func resourceUsage() throws(PluginCallError) -> PluginResourceUsage

    /// The call its lane is running now: the plugin's screens are busy until it returns.
    /// Nil when the lane is free.
    var busyCall: RunningPluginCall.Call? { get }
    /// The call a synchronous call made now would be refused for: `busyCall`, unless the
    /// caller runs nested on the plugin's lane (a plugin's call back into the host). It does
    /// not wait: a task's post still running counts as busy.
    var refusingCall: RunningPluginCall.Call? { get }
    /// The call an unload or reload made now would be refused for: `busyCall`, nested or
    /// not. It does not wait either.
    var callInTheWay: RunningPluginCall.Call? { get }
    /// The synchronous API's wait (`host.push`, `host.unload`, a blocking render): blocks
    /// until a task's post on the lane has returned, 3 s at most. The host's own paths never
    /// call it; a front end uses the `…OnLane` and `…OffMain` calls, which await instead.
    func waitForHostCall()
    /// Runs `work` on the main actor now when the lane is free for a call the host makes on
    /// its own (`isFreeForHostCall`), else once its call has ended (a task's post waits so
    /// for the call before it).
    func afterCall(_ work: @escaping () -> Void)
    /// No call runs on the lane and no person's call is about to begin.
    var isFreeForHostCall: Bool { get }
    /// Returns once the lane is in no call the host made on its own (`byHost`): a person's
    /// call waits for a task's post rather than being refused as busy.
    func hostCallsEnded() async
    /// `create` on the plugin's lane: the caller is suspended, the main actor free, until the
    /// instance exists.
    func createOnLane(route: String, argument: [UInt8], screen: ScreenHandle, as running: RunningPluginCall.Call,
                      in context: LaneCallContext) async throws(PluginCallError) -> PluginInstanceID
    /// `activate` on the plugin's lane (a screen opened with `BerthHost.open`): the caller is
    /// suspended, the main actor free, until it returns.
    func activateOnLane(_ instance: PluginInstanceID, as running: RunningPluginCall.Call, in context: LaneCallContext) async throws(PluginCallError)
    /// An action on the plugin's lane: the caller is suspended, the main actor free, until it
    /// returns. With `state`, as `action(_:name:payload:renderingAfterwards:)`.
    func actionOnLane(_ instance: PluginInstanceID, name: String, payload: [UInt8], renderingAfterwards state: StateStorage?,
                      as running: RunningPluginCall.Call, in context: LaneCallContext) async throws(PluginCallError)
    /// A delegate action or a route context on the plugin's lane, as the host's own call
    /// (`byHost`): the caller is suspended, the main actor free, until it returns.
    func deliverOnLane(_ delivery: LaneDelivery, as running: RunningPluginCall.Call, in context: LaneCallContext) async throws(PluginCallError)
    /// One render pass on the plugin's lane: the plugin renders there, and its tree is
    /// decoded and limit-checked there too (a 150,000-view JSON tree takes seconds); the
    /// caller, on the main actor, only commits it (`StateStorage.commit`). `state`'s slots
    /// go with it as with `render`.
    func renderOnLane(_ instance: PluginInstanceID, state: StateStorage, as running: RunningPluginCall.Call,
                      in context: LaneCallContext) async throws(PluginCallError) -> CheckedRender
    /// How many of the host's renders used a render made with an action (no call of their
    /// own to the plugin); for tests.
    var rendersTakenFromActions: Int { get }
    /// How many calls its lane has run (a worker group's: all its members'); for tests.
    var laneCallsRun: Int { get }
}

/// What the host delivers to a screen on its plugin's lane (`PluginConnection.deliverOnLane`).
package enum LaneDelivery: Sendable {
    /// A delegate action of the open child screen `child`.
    case delegate(PluginInstanceID, child: Int, action: String, payload: [UInt8])
    /// A route context the screen observes.
    case context(PluginInstanceID, type: String, payload: [UInt8])

    /// The instance it goes to.
    package var instance: PluginInstanceID {
        switch self {
        case .delegate(let instance, _, _, _), .context(let instance, _, _): instance
        }
    }
}

/// An instance as the plugin knows it: the `berth_instance *` in process, a token in a
/// worker. Opaque to everything above the seam.
package struct PluginInstanceID: Hashable, Sendable {
    package let rawValue: UInt
    package init(rawValue: UInt) { self.rawValue = rawValue }
}

extension PluginCallError {
    /// The lane is in another call: `com.example.slow is busy: action 'scan' (screen 2) has run for 1200 ms`.
    static func busy(_ plugin: String, _ call: RunningPluginCall.Call) -> PluginCallError {
        PluginCallError(status: Int32(BERTH_ERR_STATE), message: "\(plugin) is busy: \(call.function) (screen \(call.screen)) has run for \(call.elapsedMilliseconds) ms")
    }
}

/// What ending a generation did with its code.
package enum GenerationEnding: Sendable, Equatable {
    /// A C image closed, and `dlopen(RTLD_NOLOAD)` proved it gone.
    case unmapped
    /// A Swift image that stays mapped for the life of the process (`bytes` of file).
    case retired(bytes: Int)
    /// The worker process that held it exited; nothing of it was ever in the host.
    case workerEnded
    /// Its unload, and its worker's shutdown and exit, run as the worker's lane's last job:
    /// the host goes on meanwhile (a worker that does not exit is killed there).
    case workerEnding
    /// Unloaded from its group's worker, which goes on for the other members and keeps the
    /// image mapped until it ends; nothing of it was ever in the host.
    case leftGroupWorker(group: String)
}

extension PluginConnection {
    package func action(_ instance: PluginInstanceID, name: String, payload: [UInt8], renderingAfterwards state: StateStorage) throws(PluginCallError) {
        try action(instance, name: name, payload: payload)
    }
}

/// A closed screen's calls into its plugin, in the order of the close sequence.
package enum ClosingCall: Sendable {
    case deactivate
    /// A lifecycle event (`willDisappear`, `didDisappear`), as `screenEvent` sends it.
    case event(code: Int32, flag: Bool)
    case destroy
}
