import BerthRuntime
import Foundation

/// `berth run` at a terminal: the line editor, Ctrl-C, and the command it interrupts.
/// Lines go to the host loop through `feed`; the loop runs each through `run`, which shows
/// the prompt again when the command is done.
@MainActor
final class InteractiveSession {
    private let editor: LineEditor
    private var interrupts: DispatchSourceRead?
    /// The command running now, cancelled by Ctrl-C.
    private var command: Task<Void, Never>?
    /// Ctrl-C came after a line was entered and before its command started.
    private var cancelNext = false

    init(host: BerthHost, history: CommandHistory = CommandHistory(), feed: AsyncStream<LoopInput>.Continuation) {
        let completion = HostCompletion(host: host)
        editor = LineEditor(prompt: "berth> ", history: history,
                            completion: { before, word in completion.candidates(before: before, word: word) },
                            onLine: { feed.yield(.line($0)) }, onEnd: { feed.yield(.endOfInput) })
        interrupts = InterruptSignal.install { [weak self] in self?.interrupted() }
    }

    func start() {
        editor.showPrompt()
    }

    /// Runs one command as a task Ctrl-C cancels, then shows the prompt again unless the
    /// host is leaving.
    func run(_ body: @escaping @MainActor () async -> Void, prompt: () -> Bool) async {
        let task = Task { @MainActor in await body() }
        if cancelNext {
            cancelNext = false
            task.cancel()
            emitLine("  · interrupted")
        }
        command = task
        await task.value
        command = nil
        if prompt() { editor.showPrompt() }
    }

    /// Restores the terminal and saves the history.
    func finish() {
        interrupts?.cancel()
        editor.finish()
    }

    private func interrupted() {
        if let command {
            command.cancel()
            // After the terminal's own `^C`.
            emitLine("\n  · interrupted")
        } else if !editor.cancelLine() {
            cancelNext = true
        }
    }
}
