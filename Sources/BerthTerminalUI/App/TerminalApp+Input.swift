import Foundation
import BerthRuntime

/// Keys, paste and the mouse: focus moves in render order, the focused control takes the
/// key, the rest are the front end's own (back, command line, inspector, quit).
extension TerminalApp {
    /// Handles one input event and draws the frame it leads to.
    public func handle(_ event: InputEvent) async {
        if case .key(let key) = event, commandLine != nil {
            await handleCommandLine(key)
            draw()
            return
        }
        handleNow(event)
    }

    /// Handles an event that needs no waiting and draws the frame it leads to, at once (a
    /// benchmark's key press); false, doing nothing, for a key while the command line is
    /// open: its commands run asynchronously (`handle`).
    @discardableResult
    public func handleNow(_ event: InputEvent) -> Bool {
        if case .key = event, commandLine != nil { return false }
        switch event {
        case .key(let key): handle(key)
        case .paste(let text):
            if commandLine != nil {
                commandLine?.insert(pasted: text)
            } else {
                editFocusedField { $0.insert(text) }
            }
        case .mouse(let mouse): handle(mouse)
        case .synchronizedOutput(let supported): output.writer.synchronized = supported
        }
        draw()
        return true
    }

    /// A key outside the command line.
    private func handle(_ key: Key) {
        message = nil
        let target = places.focus[visibleKey]
        let focusedView = target.flatMap(focusedNode)
        let inTextField = focusedView?.type == "TextField"
        switch key {
        case .control("c"): quit()
        case .function(2): inspector.isShown.toggle()
        case .character(":") where !inTextField: commandLine = CommandLineEntry()
        case .tab, .down: moveFocus(by: 1)
        case .backTab, .up: moveFocus(by: -1)
        case .escape:
            if banner != nil { banner = nil } else { goBack() }
        case .pageDown: places.scroll(by: rendered?.viewportHeight ?? 10, on: visibleKey)
        case .pageUp: places.scroll(by: -(rendered?.viewportHeight ?? 10), on: visibleKey)
        case .enter where inTextField: moveFocus(by: 1)
        case .enter:
            if let target { press(target) }
        case .character(" ") where !inTextField:
            if let target { press(target) }
        case .character("+") where focusedView?.isSteppable == true, .right where focusedView?.isSteppable == true:
            input(.step(.up))
        case .character("-") where focusedView?.isSteppable == true, .left where focusedView?.isSteppable == true:
            input(.step(.down))
        case _ where inTextField: editFocusedField { $0.apply(key) }
        case .left: moveFocus(by: -1)
        case .right: moveFocus(by: 1)
        default: break
        }
    }

    private func handle(_ mouse: MouseEvent) {
        switch mouse.kind {
        case .wheelUp: places.scroll(by: -3, on: visibleKey)
        case .wheelDown: places.scroll(by: 3, on: visibleKey)
        case .release: break
        case .press:
            guard let target = rendered?.target(column: mouse.column, row: mouse.row) else { return }
            message = nil
            if target == .back { return goBack() }
            if case .option(let id, let index) = target {
                setFocus(.view(id))
                return input(.select(index), view: id)
            }
            setFocus(target)
            // A click puts the caret at the end of a field; a picker's label only takes focus.
            if case .view(let id) = target, focusedNode(target)?.type == "TextField" || focusedNode(target)?.type == "Picker" {
                places.setCaret(nil, of: id, on: visibleKey)
                return
            }
            press(target)
        }
    }

    /// The focused view's node in the visible screen's last render.
    func focusedNode(_ target: FocusTarget) -> ViewNode? {
        guard case .view(let id) = target else { return nil }
        return host.visibleScreen?.tree?.firstNode { $0.id == id }
    }

    func setFocus(_ target: FocusTarget) {
        places.setFocus(target, on: visibleKey, order: rendered?.focusOrder)
    }

    func moveFocus(by step: Int) {
        places.moveFocus(by: step, on: visibleKey, order: rendered?.focusOrder)
    }

    /// Enter, Space or a click on a target.
    func press(_ target: FocusTarget) {
        switch target {
        case .view(let id):
            switch focusedNode(target)?.type {
            case "Button": input(.tap, view: id)
            case "Toggle": input(.toggle, view: id)
            case "Picker":
                // Enter or Space: the next option, round to the first.
                guard let picker = focusedNode(target), !picker.children.isEmpty else { return }
                let next = ((Int(picker.fields["value"] ?? "") ?? -1) + 1) % picker.children.count
                input(.select(next), view: id)
            default: break
            }
        case .action(let name):
            guard let screen = host.visibleScreen else { return }
            // An action that takes text opens the command line to type it.
            if let declared = screen.actions.first(where: { $0.name == name }), declared.summary?.contains("TEXT") == true {
                commandLine = CommandLineEntry(text: "send \(name) ")
                message = declared.summary
                return
            }
            performOnLane { [host] in try await host.send(screen: screen.id, action: name, payload: []) }
        case .route(let route):
            performOnLane { [host] in try await host.openScreen(route) }
        case .back:
            goBack()
        case .option(let id, let index):
            input(.select(index), view: id)
        }
    }

    /// Esc or the header's affordance: back on a stack, dismiss a modal's root, close the
    /// launch stack's root (back to the start screen).
    func goBack() {
        let chain = ScreenChain(host.visibleScreens)
        guard let visible = chain.visible else { return }
        switch chain.back {
        // The screen left visible renders on its lane: a plugin slow to render holds only it.
        case .back: performOnLane { [host] in try await host.userBackOnLane() }
        case .dismiss: performOnLane { [host] in try await host.userDismissOnLane() }
        case .close: performOnLane { [host] in try await host.closeScreenOnLane(visible.id) }
        }
    }

    func input(_ input: ViewInput, view: String? = nil) {
        guard let screen = host.visibleScreen?.id else { return }
        guard let id = view ?? { if case .view(let id)? = places.focus[visibleKey] { return id } else { return nil } }() else { return }
        performOnLane { [host] in try await host.input(input, view: id, screen: screen) }
    }

    // MARK: Text fields and the command line

    /// Applies `edit` to the focused text field at its kept caret; keeps the new caret, and
    /// sends the field's whole new text as view input when it changed, as `type N TEXT` does.
    private func editFocusedField(_ edit: (inout TextFieldEditor) -> TextFieldEditor.Change) {
        guard case .view(let id)? = places.focus[visibleKey], let node = focusedNode(.view(id)), node.type == "TextField" else { return }
        var editor = TextFieldEditor(text: node.fields["text"] ?? "", caret: places.caret(of: id, on: visibleKey))
        let change = edit(&editor)
        if change != .none { places.setCaret(editor.caret, of: id, on: visibleKey) }
        if change == .text { input(.type(editor.text), view: id) }
    }

    private func handleCommandLine(_ key: Key) async {
        guard var line = commandLine else { return }
        switch line.handle(key, candidates: { commands.complete($0, $1) }) {
        case .editing:
            commandLine = line
        case .completed(let listing):
            commandLine = line
            message = listing
        case .closed:
            commandLine = nil
        case .run(let text):
            commandLine = nil
            // An action runs on its plugin's lane: keys go on meanwhile.
            if text.hasPrefix("send ") {
                performOnLane { [weak self] in await self?.runCommand(text) }
            } else {
                await runCommand(text)
            }
        }
    }

    /// Runs a command line; its output goes to the log, its last line (or error) to the status.
    public func runCommand(_ line: String) async {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return }
        switch trimmed {
        case "inspect", "inspector":
            inspector.isShown.toggle()
            return
        default: break
        }
        appendLog(":" + trimmed)
        let outcome = await commands.run(trimmed)
        for line in outcome.logLines { appendLog(line) }
        if let status = outcome.status { message = status }
        if outcome.quit { quit() }
        requestRedraw()
    }
}

extension ViewNode {
    /// Whether +/- and ←/→ step it.
    var isSteppable: Bool { type == "Stepper" || type == "Picker" }
}
