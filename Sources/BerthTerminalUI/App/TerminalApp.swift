public import BerthRuntime

/// Where frames go: a real terminal, or a headless one in tests.
@MainActor
public protocol TerminalScreen: AnyObject {
    /// Columns and rows now.
    var size: (width: Int, height: Int) { get }
    /// One frame's bytes, written at once.
    func write(_ bytes: [UInt8])
}

/// The full-screen front end over a host: draws the visible screen as controls, moves
/// focus, turns keys and clicks into view input and navigation, and redraws when the host
/// says something changed (never on a timer). Runs on the main actor, like the host.
@MainActor
public final class TerminalApp {
    /// The host whose screens are shown.
    public let host: BerthHost
    let screen: TerminalScreen
    let commands: TerminalCommands
    var writer: FrameWriter

    /// The frame on the terminal now, and what drew it.
    public private(set) var rendered: RenderedFrame?
    private var onScreen: (frame: Frame, cursor: FrameWriter.Cursor?)?
    /// Frames written so far (a frame with no change writes nothing and is not counted).
    public private(set) var framesWritten = 0

    /// Focus per screen (router id; 0 is the start screen), kept by identity.
    var focus: [Int: FocusTarget] = [:]
    /// Where focus was in the order, to land near it when its target goes away.
    var focusIndex: [Int: Int] = [:]
    var scroll: [Int: Int] = [:]
    var followFocus = true
    /// Caret offsets of text fields, by screen and identity.
    var carets: [Int: [String: Int]] = [:]
    var banner: String?
    var message: String?
    var commandLine: (text: String, caret: Int)?
    /// Whether the inspector is shown (F2).
    public internal(set) var showsInspector = false
    /// Recent events and captured output lines, for the inspector.
    var log: [String] = []
    /// Set once the front end was asked to leave.
    public private(set) var finished = false
    /// Backdrops rendered once by the front end (screen/generation), so one that renders
    /// nothing is not asked again on every frame.
    private var renderedBackdrops: Set<String> = []
    /// Set while the front end itself calls the host, so its own operations do not ask
    /// for another frame (the frame after the input is drawn anyway).
    private var operating = false
    /// Whether the host reported a change (any outermost operation ended, the front end's
    /// own included) since the last frame was laid out.
    private var hostChangedSinceFrame = true
    /// The front end's own part of the last frame laid out: with no host change since and
    /// the same key, the next frame would be the same, so it is not laid out at all.
    private var drawnKey: FrameKey?
    /// Frames laid out so far (an unchanged one is skipped before layout); for tests.
    private(set) var framesLaidOut = 0
    private var changeToken: Int?
    private var eventToken: Int?
    /// Told when a redraw is wanted (the run loop wakes up; a headless driver notes it).
    var wake: () -> Void = {}
    /// Whether a frame was asked for and not drawn yet.
    public private(set) var redrawPending = false

    static let help = "Tab move · Enter press · +/- step · Esc back · : command · F2 inspect · ^C quit"

    /// A front end over `host` drawing on `screen`; it listens to the host's changes and events until `detach()`.
    public init(host: BerthHost, screen: TerminalScreen, commands: TerminalCommands? = nil, colours: Bool = false) {
        self.host = host
        self.screen = screen
        self.commands = commands ?? .basic(host: host)
        self.writer = FrameWriter(colours: colours)
        changeToken = host.addChangeObserver { [weak self] in self?.hostChanged() }
        eventToken = host.addEventObserver { [weak self] event in self?.noteEvent(event) }
    }

    /// Stops listening to the host (the front end is done).
    public func detach() {
        if let changeToken { host.removeChangeObserver(changeToken) }
        if let eventToken { host.removeEventObserver(eventToken) }
        changeToken = nil
        eventToken = nil
    }

    /// The front end leaves at the next turn of its loop.
    public func quit() {
        finished = true
        wake()
    }

    private func hostChanged() {
        hostChangedSinceFrame = true
        guard !operating else { return }
        requestRedraw()
    }

    /// Asks for a frame at the next turn (coalesced: many changes, one frame).
    public func requestRedraw() {
        guard !redrawPending else { return }
        redrawPending = true
        wake()
    }

    private func noteEvent(_ event: HostEvent) {
        appendLog("\(event.sequence). \(event.subject): \(event.message)")
        switch event.kind {
        case .crashed:
            banner = event.message.contains(event.subject.description) ? event.message : "\(event.subject) crashed: \(event.message)"
            requestRedraw()
        case .failed, .rejected, .denied:
            message = "\(event.subject): \(event.message)"
        case .reloaded:
            message = "\(event.subject): \(event.message)"
        default:
            break
        }
    }

    /// A line of captured output (a plugin's log, the host's stderr) for the inspector.
    public func appendLog(_ line: String) {
        log.append(line)
        if log.count > 500 { log.removeFirst(log.count - 400) }
        if showsInspector { requestRedraw() }
    }

    /// Shows `text` on the status line until the next key (a plugin's log line, say).
    public func showMessage(_ text: String) {
        message = text
        requestRedraw()
    }

    // MARK: Drawing

    /// Draws the scene now and writes what changed (nothing when nothing did).
    public func draw() {
        redrawPending = false
        renderVisibleIfNeeded()
        // Nothing the host shows changed and nothing of the front end's own: the frame on
        // the terminal is the one this would make. The inspector's figures (CPU, memory)
        // move on their own, so a frame with it open is always made.
        let size = screen.size
        let key = frameKey(size: size)
        if !hostChangedSinceFrame, onScreen != nil, !showsInspector, key == drawnKey { return }
        framesLaidOut += 1
        var scene = makeScene()
        var frame = Renderer.render(scene, width: size.width, height: size.height)
        let screenKey = key.screen
        // Focus kept by identity; when its target went away, the nearest one in the order.
        if scene.focus.map({ !frame.focusOrder.contains($0) }) ?? true, !frame.focusOrder.isEmpty {
            let index = min(focusIndex[screenKey] ?? 0, frame.focusOrder.count - 1)
            focus[screenKey] = frame.focusOrder[index]
            scene.focus = frame.focusOrder[index]
            scene.caret = caret(for: scene.focus, key: screenKey)
            frame = Renderer.render(scene, width: size.width, height: size.height)
        }
        scroll[screenKey] = frame.scroll
        if let focused = focus[screenKey], let index = frame.focusOrder.firstIndex(of: focused) { focusIndex[screenKey] = index }
        rendered = frame
        hostChangedSinceFrame = false
        drawnKey = frameKey(size: size)
        let bytes = writer.update(from: onScreen?.frame, cursor: onScreen?.cursor, to: frame.frame, cursor: frame.cursor)
        onScreen = (frame.frame, frame.cursor)
        guard !bytes.isEmpty else { return }
        framesWritten += 1
        screen.write(bytes)
    }

    /// What a frame shows besides the host's state: the terminal's size, the screen in
    /// front, and the front end's focus, scroll, carets, banner, status, command line and
    /// whether the inspector is open.
    private struct FrameKey: Equatable {
        var width: Int
        var height: Int
        var screen: Int
        var focus: FocusTarget?
        var scroll: Int?
        var followFocus: Bool
        var carets: [String: Int]?
        var banner: String?
        var message: String?
        var commandLine: String?
        var commandCaret: Int?
        var inspector: Bool
    }

    private func frameKey(size: (width: Int, height: Int)) -> FrameKey {
        let screen = visibleKey
        return FrameKey(width: size.width, height: size.height, screen: screen, focus: focus[screen], scroll: scroll[screen],
                        followFocus: followFocus, carets: carets[screen], banner: banner, message: message,
                        commandLine: commandLine?.text, commandCaret: commandLine?.caret, inspector: showsInspector)
    }

    /// Forgets what is on the terminal, so the next frame is drawn whole (after a resize,
    /// or when something else wrote to it).
    public func invalidate() {
        onScreen = nil
        requestRedraw()
    }

    /// The screen under a modal that has no tree yet (reopened there by a reload, say) is
    /// rendered once; the visible screen is rendered by the host after every operation.
    private func renderVisibleIfNeeded() {
        guard let router = backdropRouter, let module = router.module, module.canRender, module.lastTree == nil, module.isActive else { return }
        let key = "\(router.id)/\(module.generation.number)"
        guard !renderedBackdrops.contains(key) else { return }
        renderedBackdrops.insert(key)
        perform { try host.render(screen: router.id) }
    }

    /// Runs a host call as the front end's own operation; an error becomes the message.
    func perform(_ body: () throws -> Void) {
        operating = true
        defer { operating = false }
        do {
            try body()
        } catch {
            message = "\(error)"
        }
    }

    /// The key of the screen in front (its router id; 0 for the start screen).
    var visibleKey: Int { host.visibleRouter?.id ?? 0 }

    /// The chain of screens from the launch root to the visible one.
    var visibleChain: [Router] {
        var chain: [Router] = []
        var current = host.visibleRouter
        while let router = current, router.kind == .screen {
            chain.append(router)
            current = router.parent
        }
        return chain.reversed()
    }

    /// Where the front layer starts in `chain`: the last presented screen, else 0.
    func frontStart(_ chain: [Router]) -> Int {
        var start = 0
        for index in chain.indices.dropFirst() where chain[index].isPresented(from: chain[index - 1]) { start = index }
        return start
    }

    var backdropRouter: Router? {
        let chain = visibleChain
        let start = frontStart(chain)
        return start > 0 ? chain[start - 1] : nil
    }

    func makeScene() -> Scene {
        let chain = visibleChain
        let key = visibleKey
        var scene: Scene
        if let visible = chain.last {
            let start = frontStart(chain)
            scene = Scene(title: "\(visible.pluginID)/\(visible.route)", crumbs: chain.map(\.route), content: content(of: visible), status: "")
            scene.modalStarts = Set(chain.indices.dropFirst().filter { chain[$0].isPresented(from: chain[$0 - 1]) })
            scene.isModal = start > 0
            scene.backdrop = start > 0 ? content(of: chain[start - 1]) : nil
            scene.back = chain.count - start > 1 ? .back : start > 0 ? .dismiss : .close
        } else {
            scene = Scene(title: "no screen open", crumbs: [], content: startContent(), status: "")
        }
        scene.focus = focus[key]
        scene.caret = caret(for: scene.focus, key: key)
        scene.scroll = scroll[key] ?? 0
        scene.followFocus = followFocus
        scene.banner = banner
        scene.status = message ?? Self.help
        scene.commandLine = commandLine
        scene.inspector = showsInspector
            ? inspectorLines(rows: screen.size.height - 2, columns: Renderer.inspectorWidth(forWidth: screen.size.width) - 2) : nil
        return scene
    }

    /// The start screen: every route of every plugin that can be opened.
    private func startContent() -> ScreenContent {
        let routes = host.plugins.keys.sorted().flatMap { id -> [String] in
            host.plugins[id].map { record in record.source.manifest.routes.map { "\(id)/\($0)" } } ?? []
        }
        let note = routes.isEmpty ? "No plugin offers a screen. Drop plugins into the plugins folder, or type : for commands." : "Open a screen:"
        return ScreenContent(heading: "Berth", note: note, routes: routes)
    }

    func content(of router: Router) -> ScreenContent {
        let module = router.module
        var content = ScreenContent(heading: "\(router.pluginID)/\(router.route) · screen \(router.id)", actions: host.declaredActions(of: router))
        if let module, module.canRender {
            content.tree = module.lastTree?.root
            content.title = module.lastTree?.screenTitle
        }
        if content.tree == nil {
            content.note = content.actions.isEmpty ? "This screen shows no views." : "This screen shows no views; its actions are below."
        }
        return content
    }

    private func caret(for target: FocusTarget?, key: Int) -> (view: String, offset: Int)? {
        guard case .view(let id)? = target, let offset = carets[key]?[id] else { return nil }
        return (id, offset)
    }
}
