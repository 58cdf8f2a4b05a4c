private import CBerthEditLine
import Foundation

/// The REPL's line editor: libedit through its readline-compatible callback interface,
/// driven from the main actor (libedit is not thread-safe, and host events arrive there).
///
/// While the prompt is shown, standard input is read as it becomes readable, one key at a
/// time, and anything written to the terminal is drawn above the prompt, which is then
/// redrawn with the line being edited. While a command runs the prompt is taken down: the
/// terminal is back in its normal mode, so Ctrl-C is a signal and typed keys wait.
///
/// Without libedit (EditLineLibrary) it reads plain lines: the terminal's own line editing,
/// the prompt written again after output drawn above it.
@MainActor
final class LineEditor {
    /// The editor whose prompt is on screen: terminal output goes above it.
    private(set) static var prompting: LineEditor?

    private let prompt: String
    private let history: CommandHistory
    private let completion: (_ before: [String], _ word: String) -> [String]
    private let onLine: (String) -> Void
    private let onEnd: () -> Void
    private let input: DispatchSourceRead
    /// Set by the C callbacks during `rl_callback_read_char`, acted on after it returns
    /// (libedit must not be reconfigured from inside its own line callback).
    private var finishedLine: String?
    private var endOfInput = false
    /// Plain-line mode: bytes read past the last complete line.
    private var pending: [UInt8] = []

    init(prompt: String, history: CommandHistory, completion: @escaping (_ before: [String], _ word: String) -> [String],
         onLine: @escaping (String) -> Void, onEnd: @escaping () -> Void) {
        self.prompt = prompt
        self.history = history
        self.completion = completion
        self.onLine = onLine
        self.onEnd = onEnd
        // From now on output from any thread goes through the main queue (FileHandleOutput).
        DispatchQueue.main.setSpecific(key: mainQueueMark, value: true)
        input = DispatchSource.makeReadSource(fileDescriptor: STDIN_FILENO, queue: .main)
        input.setEventHandler { MainActor.assumeIsolated { LineEditor.prompting?.readKey() } }
        // Activated, then held: keys are read only while the prompt is shown.
        input.activate()
        input.suspend()
        if let notice = EditLineLibrary.notice {
            FileHandleOutput.write(notice + "\n", to: STDERR_FILENO)
        } else {
            Self.configure()
        }
        history.load()
    }

    /// Shows the prompt and starts reading keys.
    func showPrompt() {
        guard Self.prompting == nil, !input.isCancelled else { return }
        Self.prompting = self
        installHandler()
        input.resume()
    }

    /// Draws the prompt on a fresh, empty line and reads keys into it.
    private func installHandler() {
        guard EditLineLibrary.isAvailable else {
            FileHandleOutput.write(prompt, to: STDOUT_FILENO)
            // Lines that arrived together with the last one are answered without a read.
            if pending.contains(UInt8(ascii: "\n")) {
                DispatchQueue.main.async { MainActor.assumeIsolated { if LineEditor.prompting === self { self.deliverPlainLine() } } }
            }
            return
        }
        berth_edit_handler_install(prompt) { line in
            // Called inside rl_callback_read_char on the main thread.
            MainActor.assumeIsolated {
                if let line { LineEditor.prompting?.finishedLine = String(cString: line) } else { LineEditor.prompting?.endOfInput = true }
            }
            free(line)
        }
    }

    /// Takes the prompt down (a command runs, or the host is leaving): the terminal goes
    /// back to its normal mode.
    func hidePrompt() {
        guard Self.prompting === self else { return }
        input.suspend()
        if EditLineLibrary.isAvailable { berth_edit_handler_remove() }
        Self.prompting = nil
    }

    /// Ctrl-C at the prompt: the line is dropped and a fresh prompt drawn below it. False
    /// when no prompt is shown.
    @discardableResult
    func cancelLine() -> Bool {
        guard Self.prompting === self else { return false }
        FileHandleOutput.write("\n", to: STDOUT_FILENO)
        // libedit's rl_replace_line ignores an empty text; a new handler starts an empty line.
        if EditLineLibrary.isAvailable { berth_edit_handler_remove() }
        pending.removeAll()
        installHandler()
        return true
    }

    /// Draws `write`'s output above the prompt: clears the prompt's line, writes, redraws.
    func drawAbove(_ write: () -> Void) {
        FileHandleOutput.write("\r\u{1B}[K", to: STDOUT_FILENO)
        write()
        if EditLineLibrary.isAvailable { berth_edit_redisplay() } else { FileHandleOutput.write(prompt, to: STDOUT_FILENO) }
    }

    /// Leaves the terminal as it found it and saves the history.
    func finish() {
        hidePrompt()
        guard !input.isCancelled else { return }
        // A dispatch source must not be released while suspended.
        input.cancel()
        input.resume()
        history.save()
    }

    private func readKey() {
        guard EditLineLibrary.isAvailable else { return readPlain() }
        berth_edit_read_char()
        if Self.endOfDocument {
            Self.endOfDocument = false
            endOfInput = true
        }
        if endOfInput {
            endOfInput = false
            hidePrompt()
            FileHandleOutput.write("\n", to: STDOUT_FILENO)
            onEnd()
        } else if let line = finishedLine {
            finishedLine = nil
            hidePrompt()
            history.add(line)
            onLine(line)
        }
    }

    /// Plain-line mode: reads what standard input has and answers the first complete line;
    /// end of input ends the session once every complete line was answered.
    private func readPlain() {
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
        if count < 0 { return }
        if count == 0, !pending.isEmpty {
            // A last line without its newline is still a line.
            pending.append(UInt8(ascii: "\n"))
            return deliverPlainLine()
        }
        if count == 0 {
            hidePrompt()
            FileHandleOutput.write("\n", to: STDOUT_FILENO)
            onEnd()
            return
        }
        pending.append(contentsOf: buffer[..<count])
        deliverPlainLine()
    }

    private func deliverPlainLine() {
        guard let newline = pending.firstIndex(of: UInt8(ascii: "\n")) else { return }
        let line = String(decoding: pending[..<newline], as: UTF8.self)
        pending.removeSubrange(...newline)
        hidePrompt()
        onLine(line)
    }

    // MARK: libedit's settings (process-wide, set once)

    /// Ctrl-D on an empty line, seen by the key binding (libedit's callback interface
    /// reports no end of input by itself).
    private static var endOfDocument = false
    private static var configured = false
    /// The completer of the editor whose prompt is shown.
    private nonisolated(unsafe) static var matches: [String] = []

    private static func configure() {
        guard !configured else { return }
        configured = true
        // Multibyte keys (é, ü) need a UTF-8 character type; a bare C locale has none.
        setlocale(LC_CTYPE, "")
        if String(cString: setlocale(LC_CTYPE, nil)) == "C" { setlocale(LC_CTYPE, "C.UTF-8") }
        // The host handles SIGINT itself; libedit's handlers would re-raise it to the
        // whole process group (worker processes included).
        berth_edit_configure(UnsafePointer(strdup("berth"))) { text, start, _ in
            var matches: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
            MainActor.assumeIsolated { matches = LineEditor.complete(text: text.map { String(cString: $0) } ?? "", start: Int(start)) }
            return matches
        }
        _ = berth_edit_initialize()
        _ = berth_edit_add_command("berth-end-of-input", { _, _ in
            // Ctrl-D ends the session on an empty line; elsewhere it does nothing.
            MainActor.assumeIsolated {
                if berth_edit_line_end() == 0 {
                    LineEditor.endOfDocument = true
                    berth_edit_finish_line()
                }
            }
            return 0
        }, 4)
    }

    /// The completion of the word `text` starting at `start` (in characters) on the line.
    private static func complete(text: String, start: Int) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
        let line = berth_edit_line().map { String(cString: $0) } ?? ""
        let before = String(String.UnicodeScalarView(line.unicodeScalars.prefix(start)))
        let words = (try? CommandLineWords.split(before)) ?? before.split(separator: " ").map(String.init)
        matches = prompting?.completion(words, text) ?? []
        // A word with a slash after `load` with no plugin match: libedit completes a path.
        if matches.isEmpty, words.first == "load", text.contains("/") { return nil }
        berth_edit_completion_is_complete()
        return berth_edit_completion_matches(text) { _, state in
            let index = Int(state)
            guard index < LineEditor.matches.count else { return nil }
            return strdup(LineEditor.matches[index])
        }
    }
}
