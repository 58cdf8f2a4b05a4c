import Foundation

/// Unbuffered writes to the standard streams, so stdout and stderr interleave in order.
/// While the REPL's prompt is shown, a line written from the main actor (a host event, a
/// socket client's note) is drawn above the prompt, which is redrawn below it.
enum FileHandleOutput {
    static func standardError(_ text: String) {
        emit(text, to: STDERR_FILENO)
    }

    static func standardOutput(_ text: String) {
        emit(text, to: STDOUT_FILENO)
    }

    /// Writes all of `text` to `descriptor`, as is.
    static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    private static func emit(_ text: String, to descriptor: Int32) {
        // Only the main actor may touch the editor. Its jobs run on the main queue, but not
        // on the main thread (on Linux, dispatch_main ends that thread): ask the queue.
        guard DispatchQueue.getSpecific(key: mainQueueMark) != nil else {
            // Another thread (`berth dev`'s loop) while the REPL's editor exists: its prompt may
            // be on screen, so the main queue writes the text, above the prompt, in order.
            // (The main queue never waits for such a thread.)
            if DispatchQueue.main.getSpecific(key: mainQueueMark) == true {
                return DispatchQueue.main.sync { emit(text, to: descriptor) }
            }
            return write(text, to: descriptor)
        }
        MainActor.assumeIsolated {
            guard let editor = LineEditor.prompting else { return write(text, to: descriptor) }
            editor.drawAbove { write(text.hasSuffix("\n") ? text : text + "\n", to: descriptor) }
        }
    }
}

/// Set on the main queue (by `LineEditor`), so a write can tell it runs there.
let mainQueueMark = DispatchSpecificKey<Bool>()

/// Prints a line to stdout without buffering.
func emitLine(_ text: String) {
    FileHandleOutput.standardOutput(text + "\n")
}
