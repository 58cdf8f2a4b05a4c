@_spi(Engine) import BerthCore
import Logging

/// One loaded generation of a plugin, as the host keeps it: which plugin, which number,
/// from which validated files, and the connection through which every call reaches its
/// code. A reload makes a new generation; the old one ends.
@MainActor
@_spi(Engine) public final class PluginGeneration {
    /// Where a generation is in its life.
    package enum State: String, Sendable {
        /// Its code is mapped and callable.
        case loaded
        /// A Swift image that stays mapped (never unmapped in process).
        case retired
        /// Its code is gone: a C image closed, or a worker process ended.
        case unloaded
    }

    /// The plugin's id.
    package let pluginID: String
    /// 1 for the first load in this host process, then +1 for every reload.
    package let number: Int
    /// The manifest it was loaded with.
    package let manifest: PluginManifest
    /// The validated plugin folder this generation came from.
    package let source: ValidatedPlugin
    /// Where the image was loaded from (the shadow copy).
    package var shadowPath: String { connection.imagePath }
    /// Bytes of the image file (what a retired Swift generation keeps mapped).
    package var imageBytes: Int { source.librarySize }
    /// Unchecked exclusivity: read on every typed export call, and only ever read or
    /// assigned whole, on the main actor, so no access can overlap another.
    @exclusivity(unchecked) package private(set) var state: State = .loaded
    /// True while the generation is loaded: its code mapped and callable.
    package var isLoaded: Bool { state == .loaded }

    /// Where its code runs.
    package let isolation: IsolationMode
    /// The worker's process id, for an isolated generation.
    package var workerPID: Int32? { (connection as? IsolatedPlugin)?.workerPID }
    /// The process its code runs in, for an isolated generation: `workerPID`, or inside the
    /// worker's own PID namespace the process there (`WorkerProcess.pluginPID`); its
    /// `/proc` entry holds the worker's memory and processor time.
    package var workerPluginPID: Int32? { (connection as? IsolatedPlugin)?.group.worker.pluginPID }
    /// How long its worker may stay silent in a call before it is judged hung, from now on
    /// (`IsolationSettings.unresponsiveAfter` set it at load); false when it has no worker.
    /// `package`: a test that loads under a long budget shortens it for the step that hangs.
    @discardableResult
    package func setWorkerHangBudget(_ budget: Duration) -> Bool {
        guard let plugin = connection as? IsolatedPlugin else { return false }
        plugin.group.worker.channel.replyTimeout = budget
        return true
    }
    /// The processor time its worker has used so far (user + system; shared with the other
    /// plugins of a worker group), for an isolated generation whose worker runs.
    package var workerProcessorTime: Duration? { (connection as? IsolatedPlugin)?.group.worker.processorTime }

    /// What its load cost, phase by phase.
    package var loadTimings: LoadTimings { connection.loadTimings }
    /// When it was loaded (its plugin's activation, for a first generation: at start, or
    /// at first use for a lazy plugin).
    package let loadedAt = ContinuousClock.now

    /// The plugin side of the seam.
    let connection: any PluginConnection
    /// The state the host holds for this generation's screens, against `limits.state`.
    package let stateBudget: StateBudget

    init(source: ValidatedPlugin, number: Int, connection: any PluginConnection, isolation: IsolationMode = .inProcess) {
        self.pluginID = source.manifest.id
        self.number = number
        self.manifest = source.manifest
        self.source = source
        self.connection = connection
        self.isolation = isolation
        stateBudget = StateBudget(pluginID: source.manifest.id, limits: source.manifest.limits)
        grant = CapabilityGrant(manifest: source.manifest)
    }

    /// What its manifest grants, made once: every screen it opens carries it.
    package let grant: CapabilityGrant

    /// What the handshake read.
    /// `package`: for `berth conformance-check`, which drives a table by hand; apps use `BerthHost`.
    package var handshake: PluginHandshake { connection.handshake }
    /// Where the plugin's table lives (conformance: a second generation must have its own).
    /// `package`: for `berth conformance-check`, which drives a table by hand; apps use `BerthHost`.
    package var tableAddress: UInt { handshake.tableAddress }
    /// Whether the plugin implements save_state and restore_state.
    /// `package`: for `berth conformance-check`, which drives a table by hand; apps use `BerthHost`.
    package var savesState: Bool { handshake.functions.isSuperset(of: [.saveState, .restoreState]) }

    /// The heap and CPU time of the process this generation runs in (its worker's when
    /// isolated).
    /// `package`: for `berth conformance-check`, which drives a table by hand; apps use `BerthHost`.
    package func resourceUsage() throws(PluginCallError) -> PluginResourceUsage {
        try connection.resourceUsage()
    }

    /// Calls an export through the connection (libffi in process).
    @_spi(Engine) public func call(_ symbol: String, arguments: [FFIValue]) throws(FFIError) -> FFIValue {
        guard isLoaded else {
            throw FFIError(.unknownSymbol, "\(pluginID)#\(number) is \(state.rawValue); nothing is called")
        }
        do {
            return try connection.callExport(symbol, arguments: arguments)
        } catch where error.code == .unknownSymbol {
            let known = manifest.exports.map(\.symbol).joined(separator: ", ")
            throw FFIError(.unknownSymbol, "\(pluginID) has no export '\(symbol)' (exports: \(known.isEmpty ? "none" : known))")
        }
    }

    /// Calls an export with arguments given as text, converted by the manifest's signature.
    package func call(_ symbol: String, textArguments: [String]) throws(FFIError) -> FFIValue {
        guard let signature = manifest.export(named: symbol) else {
            return try call(symbol, arguments: []) // reports the unknown symbol
        }
        return try call(symbol, arguments: signature.parseArguments(textArguments))
    }

    /// Ends this generation: the plugin lets go and its code goes (or is retired); see
    /// `PluginConnection.end(waitingForWorker:)`.
    func end(waitingForWorker: Bool = false) throws(LoaderError) -> GenerationEnding {
        guard state == .loaded else {
            throw LoaderError(.lifecycle, plugin: pluginID, detail: "generation \(number) is \(state.rawValue); it cannot end again")
        }
        let ending: GenerationEnding
        do {
            ending = try connection.end(waitingForWorker: waitingForWorker)
        } catch {
            state = .unloaded  // whatever is left of it is never called again
            throw error
        }
        switch ending {
        case .retired: state = .retired
        case .unmapped, .workerEnded, .workerEnding, .leftGroupWorker: state = .unloaded
        }
        return ending
    }
}
