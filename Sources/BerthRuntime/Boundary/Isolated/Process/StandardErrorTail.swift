@_spi(Engine) import BerthCore
import Foundation

/// Reads a worker's stderr pipe on a thread of its own until end of file, keeping the
/// last lines, and above all the last fatal one: the Swift runtime writes
/// "Swift/Array.swift:1350: Fatal error: Index out of range" there just before a trap kills
/// the worker (then a "Current stack trace:" whose frames name
/// `_swift_stdlib_reportFatalErrorInFile`), and the host reports that line, not a frame.
///
/// The descriptor is read by the reader thread only.
final class StandardErrorTail: Sendable {
    private let descriptor: Int32
    private let limit: Int
    private let onLine: (@Sendable (String) -> Void)?
    /// What was read so far.
    private struct Tail {
        var lines: [String] = []
        /// The last Swift runtime "Fatal error" line, and the last merely mentioning "fatal".
        var fatalError: String?
        var fatalMention: String?
        /// The stack frames the runtime printed after the last Swift fatal error (at most 128).
        var fatalTrace: [String] = []
        var partial: [UInt8] = []
        var closed = false
    }
    private let tail = LockedCondition(Tail())

    /// Starts reading `descriptor` (the read end of the pipe, owned from now on).
    init(descriptor: Int32, keeping limit: Int, onLine: (@Sendable (String) -> Void)?) {
        self.descriptor = descriptor
        self.limit = limit
        self.onLine = onLine
        let thread = Thread { [self] in readUntilEndOfFile() }
        thread.name = "berth.worker-stderr"
        thread.start()
    }

    /// The last lines (at most the limit), oldest first.
    var lastLines: [String] { tail.withLock { $0.lines } }

    /// The last Swift runtime fatal-error line ("Fatal error: ...", after the file and line
    /// when the runtime knows them), else the last line outside a stack trace that
    /// mentions "fatal" in any case.
    var lastFatalLine: String? { tail.withLock { $0.fatalError ?? $0.fatalMention } }

    /// The last Swift fatal error with the stack frames printed after it, for
    /// `FatalErrorReport.located(in:)`; nil without one.
    var lastFatalError: FatalErrorReport? {
        tail.withLock { tail in tail.fatalError.map { FatalErrorReport(line: $0, stackTrace: tail.fatalTrace) } }
    }

    /// Waits until the pipe reached end of file (every writer closed it), at most `timeout`.
    /// Returns false when it did not in time (a grandchild may hold the pipe open).
    @discardableResult
    func waitUntilClosed(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        return tail.wait { tail, timedOut in
            if tail.closed || timedOut { return .finish(tail.closed) }
            return .waitUntil(deadline)
        }
    }

    private func readUntilEndOfFile() {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                take(chunk[0..<count])
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        close(descriptor)
        let last = tail.withLock { tail in
            defer { tail.partial.removeAll() }
            return tail.partial
        }
        if !last.isEmpty { record(String(decoding: last, as: UTF8.self)) }
        tail.withLock { $0.closed = true }
        tail.broadcast()
    }

    private func take(_ bytes: ArraySlice<UInt8>) {
        let complete = tail.withLock { tail in
            var complete: [String] = []
            for byte in bytes {
                if byte == UInt8(ascii: "\n") {
                    complete.append(String(decoding: tail.partial, as: UTF8.self))
                    tail.partial.removeAll(keepingCapacity: true)
                } else if tail.partial.count < 64 * 1024 {
                    tail.partial.append(byte)
                }
            }
            return complete
        }
        for line in complete { record(line) }
    }

    private func record(_ line: String) {
        tail.withLock { tail in
            tail.lines.append(line)
            if tail.lines.count > limit { tail.lines.removeFirst(tail.lines.count - limit) }
            if Self.isSwiftFatalError(line) {
                tail.fatalError = line
                tail.fatalTrace.removeAll()
            } else if Self.isStackFrame(line) {
                if tail.fatalError != nil, tail.fatalTrace.count < 128 { tail.fatalTrace.append(line) }
            } else if line.lowercased().contains("fatal") {
                tail.fatalMention = line
            }
        }
        onLine?(line)
    }

    /// "Fatal error: ..." or "<file>:<line>: Fatal error: ..." (how the Swift runtime's
    /// `_swift_stdlib_reportFatalErrorInFile` starts its report).
    static func isSwiftFatalError(_ line: String) -> Bool {
        if line.hasPrefix("Fatal error") { return true }
        guard let marker = line.range(of: ": Fatal error") else { return false }
        // The file and line before it ("Tasks/Tasks.swift:100").
        let location = line[..<marker.lowerBound]
        guard let colon = location.lastIndex(of: ":"), colon > location.startIndex else { return false }
        let number = location[location.index(after: colon)...]
        return !number.isEmpty && number.allSatisfy(\.isASCII) && number.allSatisfy(\.isNumber)
    }

    /// A line of the runtime's "Current stack trace:": a frame number, the image, an
    /// address ("1    libswiftCore.so    0x00007f... _swift_stdlib_reportFatalErrorInFile + 109").
    static func isStackFrame(_ line: String) -> Bool {
        let words = line.split(separator: " ", omittingEmptySubsequences: true)
        return words.count >= 3 && Int(words[0]) != nil && words[2].hasPrefix("0x")
    }
}
