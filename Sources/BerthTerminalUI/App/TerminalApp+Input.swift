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
                editCommandLine(insert: text)
            } else {
                editFocusedField(insert: text)
            }
        case .mouse(let mouse): handle(mouse)
        case .synchronizedOutput(let supported): writer.synchronized = supported
        }
        draw()
        return true
    }

    /// A key outside the command line.
    private func handle(_ key: Key) {
        message = nil
        let target = focus[visibleKey]
        let focusedView = target.flatMap(focusedNode)
        let inTextField = focusedView?.type == "TextField"
        switch key {
        case .control("c"): quit()
        case .function(2): showsInspector.toggle()
        case .character(":") where !inTextField: commandLine = ("", 0)
        case .tab, .down: moveFocus(by: 1)
        case .backTab, .up: moveFocus(by: -1)
        case .escape:
            if banner != nil { banner = nil } else { goBack() }
        case .pageDown: scrollBy(rendered?.viewportHeight ?? 10)
        case .pageUp: scrollBy(-(rendered?.viewportHeight ?? 10))
        case .enter where inTextField: moveFocus(by: 1)
        case .enter:
            if let target { press(target) }
        case .character(" ") where !inTextField:
            if let target { press(target) }
        case .character("+") where focusedView?.isSteppable == true, .right where focusedView?.isSteppable == true:
            input(.step, "+")
        case .character("-") where focusedView?.isSteppable == true, .left where focusedView?.isSteppable == true:
            input(.step, "-")
        case .left where inTextField: moveCaret(by: -1)
        case .right where inTextField: moveCaret(by: 1)
        case .home where inTextField: moveCaret(by: -Int.max / 2)
        case .end where inTextField: moveCaret(by: Int.max / 2)
        case .backspace where inTextField: editFocusedField(deleteBackward: true)
        case .delete where inTextField: editFocusedField(deleteBackward: false)
        case .character(let character) where inTextField: editFocusedField(insert: String(character))
        case .left: moveFocus(by: -1)
        case .right: moveFocus(by: 1)
        default: break
        }
    }

    private func handle(_ mouse: MouseEvent) {
        switch mouse.kind {
        case .wheelUp: scrollBy(-3)
        case .wheelDown: scrollBy(3)
        case .release: break
        case .press:
            guard let target = rendered?.target(column: mouse.column, row: mouse.row) else { return }
            message = nil
            if target == .back { return goBack() }
            if case .option(let id, let index) = target {
                setFocus(.view(id))
                return input(.select, String(index), view: id)
            }
            setFocus(target)
            // A click puts the caret at the end of a field; a picker's label only takes focus.
            if case .view(let id) = target, focusedNode(target)?.type == "TextField" || focusedNode(target)?.type == "Picker" {
                carets[visibleKey, default: [:]][id] = nil
                return
            }
            press(target)
        }
    }

    /// The focused view's node in the visible screen's last render.
    func focusedNode(_ target: FocusTarget) -> ViewNode? {
        guard case .view(let id) = target else { return nil }
        return host.visibleRouter?.module?.lastTree?.firstNode { $0.id == id }
    }

    func setFocus(_ target: FocusTarget) {
        focus[visibleKey] = target
        if let index = rendered?.focusOrder.firstIndex(of: target) { focusIndex[visibleKey] = index }
        followFocus = true
    }

    func moveFocus(by step: Int) {
        guard let order = rendered?.focusOrder, !order.isEmpty else { return }
        let current = focus[visibleKey].flatMap { order.firstIndex(of: $0) } ?? (step > 0 ? -1 : 0)
        let next = ((current + step) % order.count + order.count) % order.count
        setFocus(order[next])
    }

    private func scrollBy(_ rows: Int) {
        scroll[visibleKey] = max((scroll[visibleKey] ?? 0) + rows, 0)
        followFocus = false
    }

    /// Enter, Space or a click on a target.
    func press(_ target: FocusTarget) {
        switch target {
        case .view(let id):
            switch focusedNode(target)?.type {
            case "Button": input(.tap, "", view: id)
            case "Toggle": input(.toggle, "", view: id)
            case "Picker":
                // Enter or Space: the next option, round to the first.
                guard let picker = focusedNode(target), !picker.children.isEmpty else { return }
                let next = ((Int(picker.fields["value"] ?? "") ?? -1) + 1) % picker.children.count
                input(.select, String(next), view: id)
            default: break
            }
        case .action(let name):
            guard let router = host.visibleRouter else { return }
            // An action that takes text opens the command line to type it.
            if let declared = host.declaredActions(of: router).first(where: { $0.name == name }), declared.summary?.contains("TEXT") == true {
                let text = "send \(name) "
                commandLine = (text, text.count)
                message = declared.summary
                return
            }
            perform { try host.send(screen: router.id, action: name, payload: []) }
        case .route(let route):
            perform { try host.push(route) }
        case .back:
            goBack()
        case .option(let id, let index):
            input(.select, String(index), view: id)
        }
    }

    /// Esc or the header's affordance: back on a stack, dismiss a modal's root, close the
    /// launch stack's root (back to the start screen).
    func goBack() {
        let chain = visibleChain
        guard let visible = chain.last else { return }
        let start = frontStart(chain)
        if chain.count - start > 1 {
            perform { try host.userBack() }
        } else if start > 0 {
            perform { try host.userDismiss() }
        } else {
            perform { host.close(visible) }
        }
    }

    func input(_ kind: BerthHost.ViewInputKind, _ value: String, view: String? = nil) {
        guard let router = host.visibleRouter else { return }
        guard let id = view ?? { if case .view(let id)? = focus[visibleKey] { return id } else { return nil } }() else { return }
        perform { try host.input(kind, view: id, value: value, screen: router.id) }
    }

    // MARK: Text fields

    private func caretOffset(_ id: String, text: String) -> Int {
        min(carets[visibleKey]?[id] ?? text.count, text.count)
    }

    private func moveCaret(by step: Int) {
        guard case .view(let id)? = focus[visibleKey], let node = focusedNode(.view(id)) else { return }
        let text = node.fields["text"] ?? ""
        carets[visibleKey, default: [:]][id] = min(max(caretOffset(id, text: text) + step, 0), text.count)
    }

    /// Types `insert` at the caret (or deletes one character), and sends the field's whole
    /// new text as view input, as `type N TEXT` does.
    func editFocusedField(insert: String = "", deleteBackward: Bool? = nil) {
        guard case .view(let id)? = focus[visibleKey], let node = focusedNode(.view(id)), node.type == "TextField" else { return }
        var text = Array(node.fields["text"] ?? "")
        var offset = caretOffset(id, text: String(text))
        if let backward = deleteBackward {
            if backward, offset > 0 {
                text.remove(at: offset - 1)
                offset -= 1
            } else if !backward, offset < text.count {
                text.remove(at: offset)
            } else {
                return
            }
        } else {
            // A pasted newline would end the field: kept as spaces.
            let typed = insert.map { $0.isNewline ? " " : $0 }
            text.insert(contentsOf: typed, at: offset)
            offset += typed.count
        }
        carets[visibleKey, default: [:]][id] = offset
        input(.type, String(text), view: id)
    }

    // MARK: The command line

    private func handleCommandLine(_ key: Key) async {
        guard var line = commandLine else { return }
        var text = Array(line.text)
        switch key {
        case .escape, .control("c"):
            commandLine = nil
            return
        case .enter:
            commandLine = nil
            await runCommand(line.text)
            return
        case .backspace:
            guard line.caret > 0 else {
                if text.isEmpty { commandLine = nil }
                return
            }
            text.remove(at: line.caret - 1)
            line.caret -= 1
        case .delete where line.caret < text.count: text.remove(at: line.caret)
        case .left: line.caret = max(line.caret - 1, 0)
        case .right: line.caret = min(line.caret + 1, text.count)
        case .home, .control("a"): line.caret = 0
        case .end, .control("e"): line.caret = text.count
        case .tab:
            complete(&text, &line.caret)
        case .character(let character):
            text.insert(character, at: line.caret)
            line.caret += 1
        default: break
        }
        line.text = String(text)
        commandLine = line
    }

    private func editCommandLine(insert: String) {
        guard var line = commandLine else { return }
        var text = Array(line.text)
        let typed = insert.filter { !$0.isNewline }
        text.insert(contentsOf: typed, at: line.caret)
        line.caret += typed.count
        line.text = String(text)
        commandLine = line
    }

    /// Tab on the command line: the word before the caret is completed to the candidates'
    /// common start; several candidates are listed on the status line.
    private func complete(_ text: inout [Character], _ caret: inout Int) {
        let before = String(text[..<caret])
        let words = before.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let word = before.hasSuffix(" ") || before.isEmpty ? "" : (words.last ?? "")
        let previous = word.isEmpty ? words : Array(words.dropLast())
        let candidates = commands.complete(previous, word)
        guard let first = candidates.first else { return }
        var common = first
        for candidate in candidates.dropFirst() {
            while !candidate.hasPrefix(common) { common.removeLast() }
        }
        let addition = Array(common.dropFirst(word.count)) + (candidates.count == 1 ? [" "] : [])
        text.insert(contentsOf: addition, at: caret)
        caret += addition.count
        message = candidates.count > 1 ? candidates.prefix(12).joined(separator: "  ") : nil
    }

    /// Runs a command line; its output goes to the log, its last line (or error) to the status.
    public func runCommand(_ line: String) async {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return }
        switch trimmed {
        case "inspect", "inspector":
            showsInspector.toggle()
            return
        default: break
        }
        appendLog(":" + trimmed)
        let outcome = await commands.run(trimmed)
        for output in outcome.lines { for part in output.split(separator: "\n") { appendLog("  " + part) } }
        for error in outcome.errors { appendLog("  error: " + error) }
        if let error = outcome.errors.last {
            message = "error: \(error)"
        } else if let last = outcome.lines.last?.split(separator: "\n").last {
            message = String(last)
        }
        if outcome.quit { quit() }
        requestRedraw()
    }
}

extension ViewNode {
    /// Whether +/- and ←/→ step it.
    var isSteppable: Bool { type == "Stepper" || type == "Picker" }
}
