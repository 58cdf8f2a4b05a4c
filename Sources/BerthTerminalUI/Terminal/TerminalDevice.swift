import Foundation
import Synchronization

/// The real terminal: raw mode, the alternate screen, input on a thread of its own, the
/// window size, and a restore that always runs: on quit, on SIGTERM/SIGINT/SIGHUP, and on
/// a crash of the process (SIGSEGV, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE), where a
/// signal handler writes the saved bytes and terminal modes back before the signal goes on.
///
/// With `captureOutput`, the process's stdout and stderr are turned into a pipe the input
/// thread reads, so a plugin's log or a stray print lands in the inspector, not on the frame.
@MainActor
final class TerminalDevice: TerminalScreen {
    /// What the input thread sends to the main actor.
    enum Arrival: Sendable {
        case input([InputEvent])
        case resized
        case terminate
        case output(String)
        case wake
    }

    let input: Int32
    /// The terminal's output (a copy of stdout taken before any capture).
    let output: Int32
    private var saved = termios()
    private var savedStandardOutput: Int32 = -1
    private var savedStandardError: Int32 = -1
    private var restored = false
    let arrivals: AsyncStream<Arrival>
    private let feed: AsyncStream<Arrival>.Continuation
    /// Written to end the input thread.
    private var stopPipe: (read: Int32, write: Int32) = (-1, -1)

    init(captureOutput: Bool) throws {
        input = STDIN_FILENO
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw TerminalUIError("the terminal front end needs a terminal on stdin and stdout")
        }
        if let term = ProcessInfo.processInfo.environment["TERM"], term == "dumb" {
            throw TerminalUIError("TERM=dumb: the terminal front end needs cursor addressing")
        }
        output = dup(STDOUT_FILENO)
        (arrivals, feed) = AsyncStream.makeStream(of: Arrival.self)
        guard tcgetattr(input, &saved) == 0 else { throw TerminalUIError("cannot read the terminal's modes: \(String(cString: strerror(errno)))") }
        var raw = saved
        // Raw: bytes as typed, no echo, no line discipline, no signals from keys (Ctrl-C is a key).
        raw.c_iflag &= ~tcflag_t(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON)
        raw.c_oflag &= ~tcflag_t(OPOST)
        raw.c_lflag &= ~tcflag_t(ECHO | ECHONL | ICANON | ISIG | IEXTEN)
        raw.c_cflag |= tcflag_t(CS8)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        tcsetattr(input, TCSAFLUSH, &raw)
        EmergencyRestore.arm(terminal: output, modes: saved, bytes: Array(TerminalModes.leave.utf8))
        write(Array(TerminalModes.enter.utf8))

        var pipeEnds: [Int32] = [-1, -1]
        pipe(&pipeEnds)
        stopPipe = (pipeEnds[0], pipeEnds[1])
        var capture: Int32 = -1
        if captureOutput {
            var captureEnds: [Int32] = [-1, -1]
            if pipe(&captureEnds) == 0 {
                savedStandardOutput = dup(STDOUT_FILENO)
                savedStandardError = dup(STDERR_FILENO)
                dup2(captureEnds[1], STDOUT_FILENO)
                dup2(captureEnds[1], STDERR_FILENO)
                close(captureEnds[1])
                capture = captureEnds[0]
                EmergencyRestore.standardStreams = (savedStandardOutput, savedStandardError)
            }
        }
        let signals = SignalPipe.install()
        let reader = InputReader(input: input, stop: stopPipe.read, signals: signals, capture: capture, feed: feed)
        let thread = Thread { reader.run() }
        thread.name = "berth.tui.input"
        thread.start()
    }

    func wakeFeed() {
        feed.yield(.wake)
    }

    var size: (width: Int, height: Int) {
        var size = winsize()
        guard ioctl(output, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    func write(_ bytes: [UInt8]) {
        TerminalDevice.writeAll(bytes, to: output)
    }

    nonisolated static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// The terminal as it was: modes, main screen, cursor, mouse and paste off; stdout and
    /// stderr back. Idempotent.
    func restore() {
        guard !restored else { return }
        restored = true
        write(Array(TerminalModes.leave.utf8))
        tcsetattr(input, TCSAFLUSH, &saved)
        EmergencyRestore.disarm()
        SignalPipe.uninstall()
        if savedStandardOutput >= 0 { dup2(savedStandardOutput, STDOUT_FILENO); close(savedStandardOutput) }
        if savedStandardError >= 0 { dup2(savedStandardError, STDERR_FILENO); close(savedStandardError) }
        var byte: UInt8 = 1
        _ = Glibc.write(stopPipe.write, &byte, 1)
        feed.finish()
    }
}

/// A front-end failure (no terminal).
public struct TerminalUIError: Error, CustomStringConvertible {
    /// What went wrong, in one line.
    public var description: String
    init(_ description: String) { self.description = description }
}

/// The input thread: waits in poll(2) on the terminal, the signal pipe, the captured output
/// and the stop pipe (no timeout: nothing runs while nothing happens), decodes keys, and
/// hands everything to the main actor. A lone ESC becomes the Escape key when no byte
/// follows within 30 ms.
private final class InputReader: Sendable {
    let input: Int32
    let stop: Int32
    let signals: Int32
    let capture: Int32
    let feed: AsyncStream<TerminalDevice.Arrival>.Continuation

    init(input: Int32, stop: Int32, signals: Int32, capture: Int32, feed: AsyncStream<TerminalDevice.Arrival>.Continuation) {
        self.input = input
        self.stop = stop
        self.signals = signals
        self.capture = capture
        self.feed = feed
    }

    func run() {
        var decoder = KeyDecoder()
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var descriptors = [pollfd(fd: input, events: Int16(POLLIN), revents: 0), pollfd(fd: stop, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: signals, events: Int16(POLLIN), revents: 0), pollfd(fd: capture, events: Int16(POLLIN), revents: 0)]
        while true {
            let timeout: Int32 = decoder.isWaitingAfterEscape ? 30 : -1
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0 { if errno == EINTR { continue } else { return } }
            if ready == 0 {
                feed.yield(.input(decoder.flush()))
                continue
            }
            if descriptors[1].revents != 0 { return }
            if descriptors[0].revents & Int16(POLLIN) != 0 {
                let count = read(input, &buffer, buffer.count)
                if count > 0 {
                    let events = decoder.decode(buffer[..<count])
                    if !events.isEmpty { feed.yield(.input(events)) }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    feed.yield(.terminate)
                    descriptors[0].fd = -1
                }
            } else if descriptors[0].revents != 0 {
                feed.yield(.terminate)
                descriptors[0].fd = -1
            }
            if descriptors[2].revents != 0 {
                let count = read(signals, &buffer, buffer.count)
                for signal in buffer.prefix(max(count, 0)) {
                    feed.yield(Int32(signal) == SIGWINCH ? .resized : .terminate)
                }
            }
            if descriptors[3].revents != 0 {
                let count = read(capture, &buffer, buffer.count)
                if count > 0 {
                    pending += buffer[..<count]
                    while let newline = pending.firstIndex(of: 10) {
                        feed.yield(.output(String(decoding: pending[..<newline], as: UTF8.self)))
                        pending.removeSubrange(...newline)
                    }
                } else {
                    descriptors[3].fd = -1
                }
            }
        }
    }
}

/// SIGWINCH, SIGTERM, SIGINT and SIGHUP, as bytes on a pipe the input thread reads: a
/// handler may only do async-signal-safe things, and writing one byte is one. A handler
/// that was there before (the CLI's, which tells its stuck-host watchdog) still runs.
enum SignalPipe {
    nonisolated(unsafe) static var writeEnd: Int32 = -1
    /// The handlers before, by signal number (a plain buffer: a handler reads it).
    nonisolated(unsafe) static let previous = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
    static let handled = [SIGWINCH, SIGTERM, SIGINT, SIGHUP]

    /// Installs the handlers; returns the pipe's read end.
    static func install() -> Int32 {
        var ends: [Int32] = [-1, -1]
        pipe(&ends)
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        writeEnd = ends[1]
        for signal in handled {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = Glibc.write(SignalPipe.writeEnd, &byte, 1)
                if let handler = SignalPipe.previous[Int(number)].__sigaction_handler.sa_handler,
                   unsafeBitCast(handler, to: Int.self) > 1 {
                    handler(number)
                }
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signal, &action, previous + Int(signal))
        }
        return ends[0]
    }

    static func uninstall() {
        for signal in handled { sigaction(signal, previous + Int(signal), nil) }
    }
}

/// The restore a crashing process still gets: the bytes and modes are saved before the
/// front end starts, and a handler for the fatal signals writes them back, then lets the
/// signal do what it did before (the Swift runtime's backtrace, a core dump).
enum EmergencyRestore {
    nonisolated(unsafe) static var terminal: Int32 = -1
    nonisolated(unsafe) static var modes = termios()
    nonisolated(unsafe) static var bytes: UnsafeMutableBufferPointer<UInt8>?
    nonisolated(unsafe) static let previous = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
    nonisolated(unsafe) static var armed = false
    static let fatal = [SIGSEGV, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE]

    static func arm(terminal descriptor: Int32, modes saved: termios, bytes leave: [UInt8]) {
        terminal = descriptor
        modes = saved
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: leave.count)
        _ = buffer.initialize(from: leave)
        bytes = buffer
        for signal in fatal {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                EmergencyRestore.restoreNow()
                sigaction(number, EmergencyRestore.previous + Int(number), nil)
                raise(number)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = Int32(bitPattern: UInt32(SA_RESETHAND))
            sigaction(signal, &action, previous + Int(signal))
        }
        armed = true
    }

    /// stdout and stderr as they were before the capture (-1: not captured).
    nonisolated(unsafe) static var standardStreams: (output: Int32, error: Int32) = (-1, -1)

    /// Writes the saved bytes and modes back, and points stdout and stderr at the terminal
    /// again, so a crash report or the stuck-host line is seen (async-signal-safe: write,
    /// tcsetattr, dup2).
    static func restoreNow() {
        guard terminal >= 0, let bytes else { return }
        _ = Glibc.write(terminal, bytes.baseAddress, bytes.count)
        tcsetattr(terminal, TCSAFLUSH, &modes)
        if standardStreams.output >= 0 { dup2(standardStreams.output, STDOUT_FILENO) }
        if standardStreams.error >= 0 { dup2(standardStreams.error, STDERR_FILENO) }
    }

    static func disarm() {
        guard armed else { return }
        armed = false
        standardStreams = (-1, -1)
        for signal in fatal { sigaction(signal, previous + Int(signal), nil) }
        terminal = -1
    }
}
