import Foundation
import Synchronization

/// Ctrl-C at the REPL: it cancels the line being typed or the running command, never the
/// host. The signal handler only counts and writes a byte to a pipe; the main actor reads
/// the pipe and acts. Ctrl-C presses the main actor does not take (it is stuck in a plugin
/// call) add up: the second says so, the third asks the host to stop: it raises SIGTERM,
/// the host's graceful shutdown (which arms the stuck-host watchdog).
enum InterruptSignal {
    /// Presses not yet taken by the main actor.
    static let pending = Atomic<Int>(0)
    /// The pipe's write end, for the handler (-1 until installed).
    private static let wakeDescriptor = Atomic<Int32>(-1)

    /// Installs the handler; `onInterrupt` runs on the main actor once per batch of presses.
    @MainActor
    static func install(_ onInterrupt: @escaping @MainActor () -> Void) -> DispatchSourceRead? {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        wakeDescriptor.store(ends[1], ordering: .relaxed)
        let source = DispatchSource.makeReadSource(fileDescriptor: ends[0], queue: .main)
        source.setEventHandler {
            var drain = [UInt8](repeating: 0, count: 64)
            while read(ends[0], &drain, drain.count) > 0 {}
            pending.store(0, ordering: .relaxed)
            MainActor.assumeIsolated { onInterrupt() }
        }
        source.resume()
        // A parent may have started us with SIGINT blocked; Ctrl-C must arrive.
        var interrupt = sigset_t()
        sigemptyset(&interrupt)
        sigaddset(&interrupt, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &interrupt, nil)
        signal(SIGINT) { _ in
            let presses = InterruptSignal.pending.add(1, ordering: .relaxed).newValue
            if presses == 2 {
                // No allocation in a signal handler: a static string's bytes.
                let note: StaticString = "\nberth: the host is busy in a plugin call; press Ctrl-C again to stop the host\n"
                _ = Glibc.write(STDERR_FILENO, note.utf8Start, note.utf8CodeUnitCount)
            } else if presses >= 3 {
                // kill(2) is async-signal-safe; the service group takes SIGTERM off the handler.
                kill(getpid(), SIGTERM)
            }
            var byte: UInt8 = 1
            _ = Glibc.write(InterruptSignal.wakeDescriptor.load(ordering: .relaxed), &byte, 1)
        }
        return source
    }
}
