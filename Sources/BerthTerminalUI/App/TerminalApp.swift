public import BerthRuntime

/// The full-screen front end over a host: draws the visible screen as controls, moves
/// focus, turns keys and clicks into view input and navigation, and redraws when the host
/// says something changed (never on a timer). Runs on the main actor, like the host, and
/// reads it through its value API alone (Docs/embedding.md): snapshots of screens and
/// plugins, operations by screen number, and `changes`.
@MainActor
public final class TerminalApp {
    /// The host whose screens are shown.
    public let host: BerthHost
    let screen: TerminalScreen
    let commands: TerminalCommands
    var output: TerminalOutput
    var schedule = RedrawSchedule()

    /// The frame on the terminal now, and what drew it.
    public private(set) var rendered: RenderedFrame?
    /// Frames written so far (a frame with no change writes nothing and is not counted).
    public var framesWritten: Int { output.framesWritten }

    /// Focus, scroll and carets per screen.
    var places = ScreenPlaces()
    var banner: String?
    var message: String?
    /// A failed build's problems (`showProblems`), until cleared.
    var problems: [String]?
    /// The `:` command line while it is open.
    var commandLine: CommandLineEntry?
    var inspector = Inspector()
    /// Whether the inspector is shown (F2).
    public var showsInspector: Bool { inspector.isShown }
    /// Set once the front end was asked to leave.
    public private(set) var finished = false
    /// Backdrops rendered once by the front end (screen/generation), so one that renders
    /// nothing is not asked again on every frame.
    private var renderedBackdrops: Set<String> = []
    /// The task reading `host.changes` until `detach()`.
    private var feed: Task<Void, Never>?
    /// Told when a redraw is wanted (the run loop wakes up; a headless driver notes it).
    var wake: () -> Void = {}
    /// Whether a frame was asked for and not drawn yet, or the host changed since the last
    /// one (`changeCount`; its element in `changes` may not have been read yet).
    public var redrawPending: Bool { schedule.isPending || schedule.showsOlder(than: host.changeCount) }

    static let help = "Tab move · Enter press · +/- step · Esc back · : command · F2 inspect · ^C quit"

    /// A front end over `host` drawing on `screen`; it listens to the host's changes and events until `detach()`.
    public init(host: BerthHost, screen: TerminalScreen, commands: TerminalCommands? = nil, colours: Bool = false) {
        self.host = host
        self.screen = screen
        self.commands = commands ?? .basic(host: host)
        output = TerminalOutput(colours: colours)
        // The sequence starts now, and the log with what the host said before now: no
        // event is missed or shown twice. A plugin that did not load is the banner (its
        // line went by under the full screen).
        let changes = host.changes
        let earlier = host.events
        for event in earlier { appendLog("\(event.sequence). \(event.subject): \(event.message)") }
        banner = StartupProblems(events: earlier) { host.pluginSnapshot($0)?.generation != nil }.banner
        feed = Task { @MainActor [weak self] in
            for await change in changes {
                guard let self else { return }
                switch change {
                case .changed: hostChanged()
                case .event(let event): noteEvent(event)
                }
            }
        }
    }

    /// Stops listening to the host (the front end is done).
    public func detach() {
        feed?.cancel()
        feed = nil
    }

    /// The front end leaves at the next turn of its loop.
    public func quit() {
        finished = true
        wake()
    }

    /// A `.changed` element: a frame, unless the one drawn since shows the host as it is
    /// (the front end's own operation, drawn at once, or an earlier element's frame).
    private func hostChanged() {
        if schedule.showsOlder(than: host.changeCount) { requestRedraw() }
    }

    /// Asks for a frame at the next turn (coalesced: many changes, one frame).
    public func requestRedraw() {
        if schedule.request() { wake() }
    }

    private func noteEvent(_ event: HostEvent) {
        appendLog("\(event.sequence). \(event.subject): \(event.message)")
        switch event.kind {
        case .crashed:
            banner = event.message.contains(event.subject.description) ? event.message : "\(event.subject) crashed: \(event.message)"
            requestRedraw()
        case .failed, .rejected, .denied, .reloaded:
            // Read after the operation that logged it, which may have been drawn already.
            message = "\(event.subject): \(event.message)"
            requestRedraw()
        default:
            break
        }
    }

    /// A line of captured output (a plugin's log, the host's stderr) for the inspector.
    public func appendLog(_ line: String) {
        inspector.append(line)
        if showsInspector { requestRedraw() }
    }

    /// Shows a failed build's problems in a panel above the status line (the heading first,
    /// then one per line, "Hello.swift:12:5: error: …"), or takes the panel down (nil: the
    /// next build was good). Stays through keys, unlike a message.
    public func showProblems(_ lines: [String]?) {
        guard lines != problems else { return }
        problems = lines?.isEmpty == true ? nil : lines
        requestRedraw()
    }

    /// Shows `text` on the status line until the next key (a plugin's log line, say).
    public func showMessage(_ text: String) {
        message = text
        requestRedraw()
    }

    // MARK: Drawing

    /// Draws the scene now and writes what changed (nothing when nothing did).
    public func draw() {
        schedule.startDrawing()
        renderVisibleIfNeeded()
        // The inspector's figures (CPU, memory) move on their own, so a frame with it open is always made.
        let size = screen.size
        let key = frameKey(size: size)
        guard schedule.shouldLayOut(key, hostChange: host.changeCount, terminalShowsLast: output.showsLastFrame, always: showsInspector) else { return }
        var scene = makeScene()
        var frame = Renderer.render(scene, width: size.width, height: size.height)
        let screenKey = key.screen
        // Focus kept by identity; when its target went away, the nearest one in the order.
        if let target = places.refocus(on: screenKey, order: frame.focusOrder) {
            scene.focus = target
            scene.caret = places.caret(for: target, on: screenKey)
            frame = Renderer.render(scene, width: size.width, height: size.height)
        }
        places.noteDrawn(on: screenKey, order: frame.focusOrder, scroll: frame.scroll)
        rendered = frame
        schedule.laidOut(frameKey(size: size), hostChange: host.changeCount)
        let bytes = output.update(to: frame)
        if !bytes.isEmpty { screen.write(bytes) }
    }

    private func frameKey(size: (width: Int, height: Int)) -> FrameKey {
        FrameKey(size: size, screen: visibleKey, places: places, banner: banner, message: message, commandLine: commandLine, inspector: showsInspector,
                 problems: problems, busy: visibleIsBusy)
    }

    /// Forgets what is on the terminal, so the next frame is drawn whole (after a resize,
    /// or when something else wrote to it).
    public func invalidate() {
        output.forget()
        requestRedraw()
    }

    /// The screen under a modal that has no tree yet (reopened there by a reload, say) is
    /// rendered once; the visible screen is rendered by the host after every operation.
    private func renderVisibleIfNeeded() {
        guard let backdrop = ScreenChain(host.visibleScreens).backdrop, backdrop.rendersViews, backdrop.tree == nil, backdrop.state == .active,
              let generation = backdrop.generation else { return }
        let key = "\(backdrop.id)/\(generation)"
        guard !renderedBackdrops.contains(key) else { return }
        renderedBackdrops.insert(key)
        performOnLane { [host] in try await host.renderOnLane(screen: backdrop.id) }
    }

    /// Runs an operation whose plugin call goes to the plugin's lane, without waiting for it:
    /// keys, other screens and their ticks go on meanwhile; an error becomes the message.
    /// Its end redraws; a call that outlasts `busyMarkDelay` shows its screen's busy mark.
    func performOnLane(_ body: @escaping @MainActor () async throws -> Void) {
        laneOperations += 1
        Task { @MainActor [weak self] in
            do {
                try await body()
            } catch {
                self?.message = "\(error)"
            }
            self?.laneOperationReturned()
        }
        // One timer at a time: a key press that returns within the delay (nearly all) leaves
        // no task behind it but the one already waiting.
        guard !busyMarkTimerPending else { return }
        busyMarkTimerPending = true
        Task { @MainActor [weak self] in
            // Redraws every `busyMarkDelay` while an operation runs, so a long one shows its mark.
            repeat {
                try? await Task.sleep(for: Self.busyMarkDelay)
                if self?.laneOperations ?? 0 > 0 { self?.requestRedraw() }
            } while self?.laneOperations ?? 0 > 0
            self?.busyMarkTimerPending = false
        }
    }

    /// A busy-mark timer is waiting (see `performOnLane`).
    private var busyMarkTimerPending = false

    /// Operations started with `performOnLane` that have not returned yet.
    private(set) var laneOperations = 0
    private var laneWaiters: [CheckedContinuation<Void, Never>] = []

    private func laneOperationReturned() {
        laneOperations -= 1
        requestRedraw()
        guard laneOperations == 0 else { return }
        let waiters = laneWaiters
        laneWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once every operation a key started on a plugin's lane has returned (a
    /// test's key then has its whole effect).
    public func laneOperationsReturned() async {
        guard laneOperations > 0 else { return }
        await withCheckedContinuation { laneWaiters.append($0) }
    }

    /// Whether the visible screen's plugin has been in a call on its lane for at least
    /// `busyMarkDelay` (a shorter call shows no mark, so quick actions do not flicker).
    var visibleIsBusy: Bool { Self.showsBusyMark(host.visibleScreen) }

    /// Whether `screen`'s plugin has been in a call for at least `busyMarkDelay`.
    private static func showsBusyMark(_ screen: ScreenSnapshot?) -> Bool {
        guard let call = screen?.busyCall else { return false }
        return call.elapsed >= busyMarkDelay
    }

    /// How long a plugin's call runs before its screen shows as busy.
    static let busyMarkDelay: Duration = .milliseconds(100)

    /// Runs a host call that needs no lane as the front end's own operation; an error
    /// becomes the message. The frame after it is drawn by the caller.
    func perform(_ body: () throws -> Void) {
        do {
            try body()
        } catch {
            message = "\(error)"
        }
    }

    /// The key of the screen in front (its screen number; 0 for the start screen).
    var visibleKey: Int { host.visibleScreen?.id ?? 0 }

    func makeScene() -> Scene {
        // One snapshot of the chain per scene: its front screen gives the key and the mark.
        let chain = ScreenChain(host.visibleScreens)
        let key = chain.visible?.id ?? 0
        var scene: Scene
        if let visible = chain.visible {
            scene = Scene(title: "\(visible.plugin)/\(visible.route.name)" + (Self.showsBusyMark(visible) ? "  ⧗ busy" : ""), crumbs: chain.screens.map(\.route.name),
                          content: ScreenContent(screen: visible), status: "")
            scene.modalStarts = chain.modalStarts
            scene.isModal = chain.frontStart > 0
            scene.backdrop = chain.backdrop.map(ScreenContent.init(screen:))
            scene.back = chain.back
        } else {
            let routes = host.pluginSnapshots().flatMap(\.routes)
            scene = Scene(title: "no screen open", crumbs: [], content: ScreenContent(startWith: routes), status: "")
        }
        scene.focus = places.focus[key]
        scene.caret = places.caret(for: scene.focus, on: key)
        scene.scroll = places.scroll[key] ?? 0
        scene.followFocus = places.followFocus
        scene.banner = banner
        scene.problems = problems
        scene.status = message ?? Self.help
        scene.commandLine = commandLine.map { ($0.text, $0.caret) }
        scene.inspector = showsInspector
            ? inspector.lines(rows: screen.size.height - 2, columns: Renderer.inspectorWidth(forWidth: screen.size.width) - 2,
                              host: host, focus: places.focus[key]) : nil
        return scene
    }
}
