@_spi(Engine) import BerthCore
internal import Glibc

/// How a worker process ended, as `waitpid` reported it.
/// `package`: the CLI names the signal that ended its child `berth` the same way.
package enum WorkerTermination: Sendable, Equatable, CustomStringConvertible {
    /// It called exit (or returned from main) with `status`.
    case exited(status: Int32)
    /// A signal killed it: a crash (SIGSEGV, SIGBUS, SIGILL, SIGTRAP for a Swift trap,
    /// SIGABRT) or a kill (SIGKILL, SIGTERM).
    case signaled(signal: Int32, coreDumped: Bool)

    /// Decodes a `waitpid` status word (what the WIFEXITED family of macros read).
    init(waitStatus: Int32) {
        let low = waitStatus & 0x7f
        if low == 0 {
            self = .exited(status: (waitStatus >> 8) & 0xff)
        } else {
            self = .signaled(signal: low, coreDumped: waitStatus & 0x80 != 0)
        }
    }

    /// The signal's name ("SIGSEGV") when a signal ended it.
    package var signalName: String? {
        guard case .signaled(let signal, _) = self else { return nil }
        return Self.name(ofSignal: signal)
    }

    /// True for an exit with status 0.
    package var isCleanExit: Bool { self == .exited(status: 0) }

    /// "exited with status 3", "killed by SIGSEGV (signal 11)".
    package var description: String {
        switch self {
        case .exited(let status): "exited with status \(status)"
        case .signaled(let signal, let core): "killed by \(Self.name(ofSignal: signal)) (signal \(signal))\(core ? ", core dumped" : "")"
        }
    }

    /// The conventional name of a Linux signal number ("SIGNAL 40" for one without).
    package static func name(ofSignal signal: Int32) -> String {
        names[signal] ?? "SIGNAL \(signal)"
    }

    private static let names: [Int32: String] = [
        SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL", SIGTRAP: "SIGTRAP",
        SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGUSR1: "SIGUSR1",
        SIGSEGV: "SIGSEGV", SIGUSR2: "SIGUSR2", SIGPIPE: "SIGPIPE", SIGALRM: "SIGALRM", SIGTERM: "SIGTERM",
        SIGSTKFLT: "SIGSTKFLT", SIGCHLD: "SIGCHLD", SIGCONT: "SIGCONT", SIGSTOP: "SIGSTOP", SIGTSTP: "SIGTSTP",
        SIGTTIN: "SIGTTIN", SIGTTOU: "SIGTTOU", SIGURG: "SIGURG", SIGXCPU: "SIGXCPU", SIGXFSZ: "SIGXFSZ",
        SIGVTALRM: "SIGVTALRM", SIGPROF: "SIGPROF", SIGWINCH: "SIGWINCH", SIGIO: "SIGIO", SIGPWR: "SIGPWR",
        SIGSYS: "SIGSYS",
    ]
}
