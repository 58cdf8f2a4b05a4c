import CBerthSystem
import Foundation

/// The built `berth` binary in a real pseudo-terminal, as a person at a terminal runs it:
/// the terminal is its controlling terminal (Ctrl-C is a signal from the terminal), keys
/// are written to the master side, and the screen's bytes are read from it.
public final class TerminalSession {
    public let pid: pid_t
    private let master: Int32
    private var bytes: [UInt8] = []
    /// Everything the program has written to the terminal so far.
    public var screen: String { String(decoding: bytes, as: UTF8.self) }

    /// What it wrote since `mark`.
    public func text(since mark: Int) -> String { String(decoding: bytes[mark...], as: UTF8.self) }

    /// Starts `berth ARGUMENTS` in `directory` (HOME, XDG_STATE_HOME and XDG_RUNTIME_DIR
    /// inside it, TERM=xterm; NO_COLOR set unless `colour`), with `environment` on top.
    public init(_ arguments: [String], in directory: String, colour: Bool = false, environment extra: [String: String] = [:]) throws {
        master = PseudoTerminalCalls.openMaster(O_RDWR | O_NOCTTY | O_CLOEXEC)
        // ptsname_r, not ptsname: ptsname returns a buffer shared by every thread, so two
        // sessions started at once (tests run in parallel) could read each other's path, and
        // one berth would then run in the other test's terminal, leaving its own silent.
        var name = [CChar](repeating: 0, count: 128)
        guard master >= 0, PseudoTerminalCalls.grant(master) == 0, PseudoTerminalCalls.unlock(master) == 0,
              PseudoTerminalCalls.terminalName(master, &name, name.count) == 0 else {
            throw TerminalError("cannot open a pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        let terminalPath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var size = winsize(ws_row: 40, ws_col: 120, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Opened after setsid: the terminal becomes the child's controlling terminal.
        posix_spawn_file_actions_addopen(&actions, 0, terminalPath, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)
        posix_spawn_file_actions_addclose(&actions, master)
        _ = PseudoTerminalCalls.addChangeDirectory(&actions, directory)
        // No signal blocked or ignored (a test thread's mask would be inherited), and a session
        // of its own, so the terminal opened above can be its controlling one.
        var attributes = posix_spawnattr_t()
        let prepared = berth_spawn_attributes_init(&attributes)
        guard prepared == 0 else { throw TerminalError("cannot prepare to start berth: \(String(cString: strerror(prepared)))") }
        defer { posix_spawnattr_destroy(&attributes) }

        var environment = ProcessInfo.processInfo.environment
        environment["TERM"] = "xterm"
        environment["HOME"] = directory
        environment["XDG_STATE_HOME"] = (directory as NSString).appendingPathComponent("state")
        environment["XDG_RUNTIME_DIR"] = (directory as NSString).appendingPathComponent("run")
        environment["LANG"] = "C.UTF-8"
        environment["NO_COLOR"] = colour ? nil : "1"
        environment.merge(extra) { _, new in new }
        let argv = ([BuildProducts.berth] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, BuildProducts.berth, &actions, &attributes, argv, envp)
        guard status == 0 else { throw TerminalError("cannot start berth: \(String(cString: strerror(status)))") }
        pid = child
    }

    deinit {
        if waitForExit(timeout: .zero) == nil {
            kill(pid, SIGKILL)
            _ = waitForExit(timeout: .seconds(5))
        }
        close(master)
    }

    /// Types `keys` (escape sequences and control characters as they are).
    public func type(_ keys: String) {
        let bytes = Array(keys.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Reads the terminal until its text since `mark` contains `text`; false on timeout.
    @discardableResult
    public func waitFor(_ text: String, since mark: Int = 0, timeout: Duration = .seconds(120)) -> Bool {
        eventually(timeout: timeout, every: .zero) {
            if self.text(since: mark).contains(text) { return true }
            readAvailable(waiting: 100)
            return self.text(since: mark).contains(text)
        }
    }

    /// What the program is doing, for a failure message when it printed nothing expected:
    /// each thread's state and kernel wait channel, and, where gdb is installed, each
    /// thread's stack (a program that never reaches its prompt says where it stopped).
    public func diagnosis() -> String {
        var lines = ["berth pid \(pid):"]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks.sorted() {
            let folder = "/proc/\(pid)/task/\(task)"
            let stat = (try? String(contentsOfFile: folder + "/stat", encoding: .utf8)) ?? "?"
            // The state is the field after the parenthesised command name.
            let state = stat.split(separator: ")").last?.split(separator: " ").first.map(String.init) ?? "?"
            let channel = (try? String(contentsOfFile: folder + "/wchan", encoding: .utf8)) ?? "?"
            lines.append("  thread \(task) state \(state) waiting in \(channel)")
        }
        let gdb = "/usr/bin/gdb"
        guard FileManager.default.isExecutableFile(atPath: gdb) else { return lines.joined(separator: "\n") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: gdb)
        process.arguments = ["-p", "\(pid)", "-batch", "-ex", "thread apply all bt 30"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        if (try? process.run()) != nil {
            let text = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            // Only the stacks: gdb's complaints about debug info are dropped.
            lines += String(decoding: text, as: UTF8.self).split(separator: "\n")
                .filter { $0.hasPrefix("Thread ") || $0.hasPrefix("#") }.map(String.init)
        }
        return lines.joined(separator: "\n")
    }

    /// Everything written so far, as bytes (for a `ScreenEmulator`).
    public var output: [UInt8] { bytes }

    /// Reads the terminal until `condition` holds for everything written so far; false on timeout.
    @discardableResult
    public func waitUntil(timeout: Duration = .seconds(120), _ condition: ([UInt8]) -> Bool) -> Bool {
        eventually(timeout: timeout, every: .zero) {
            if condition(bytes) { return true }
            readAvailable(waiting: 100)
            return condition(bytes)
        }
    }

    /// Resizes the terminal (the program gets SIGWINCH).
    public func resize(columns: Int, rows: Int) {
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
    }

    /// The terminal's local modes now (ECHO, ICANON, ISIG …), read through the master side.
    public var localModes: tcflag_t? {
        var modes = termios()
        guard tcgetattr(master, &modes) == 0 else { return nil }
        return modes.c_lflag
    }

    /// Where the screen's text ends now (for `waitFor(_:since:)`).
    public var mark: Int { bytes.count }

    /// The exit status once the program has exited, or nil after `timeout` (a deadline: a
    /// crashed host's backtrace takes long on a loaded machine, and CI's lost one at 20 s).
    public func waitForExit(timeout: Duration = .seconds(120)) -> Int32? {
        var exited: Int32?
        eventually(timeout: timeout, every: .zero) {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                // What it wrote last (a terminal restored on its way out) may still be unread.
                while readAvailable(waiting: 50) {}
                exited = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
                return true
            }
            if result < 0 { return true }
            readAvailable(waiting: 50)
            return false
        }
        return exited
    }

    /// Reads what is there, waiting up to `milliseconds`; false when nothing came.
    @discardableResult
    private func readAvailable(waiting milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, milliseconds) > 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(master, &buffer, buffer.count)
        guard count > 0 else { return false }
        bytes += buffer[..<count]
        return true
    }
}

/// glibc calls Swift's Glibc module does not declare (they need _XOPEN_SOURCE or
/// _GNU_SOURCE), looked up by name in the C library already loaded.
private enum PseudoTerminalCalls {
    private static func function<T>(_ name: String, as type: T.Type) -> T {
        guard let symbol = dlsym(nil, name) else { fatalError("\(name) is not in the C library") }
        return unsafeBitCast(symbol, to: type)
    }

    static let openMaster = function("posix_openpt", as: (@convention(c) (Int32) -> Int32).self)
    static let grant = function("grantpt", as: (@convention(c) (Int32) -> Int32).self)
    static let unlock = function("unlockpt", as: (@convention(c) (Int32) -> Int32).self)
    static let terminalName = function("ptsname_r", as: (@convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32).self)
    static let addChangeDirectory = function("posix_spawn_file_actions_addchdir_np",
                                             as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32).self)
}

/// A pseudo-terminal could not be set up.
public struct TerminalError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
