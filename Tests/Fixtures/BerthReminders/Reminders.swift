import BerthSDK
import FoundationEssentials
import ReminderContract
import Synchronization

// Test fixture: the provider of the Habits/Reminders shape (issue 41). No screens; a
// session-scoped ReminderClock and a request-scoped Tally for every plugin. Each instance
// logs when it is made and released, with its number ("clock #N").

/// Instances made by this generation (a reload loads a fresh image: numbering restarts).
private let made = Atomic<Int>(0)
/// Names this generation.
private let generationToken = String(UInt64.random(in: 1...UInt64.max), radix: 36)

final class SystemClock: ReminderClock {
    private let number = made.add(1, ordering: .relaxed).newValue
    private let calls = Mutex(0)

    init() { Plugin.log("made clock #\(number)") }
    deinit { Plugin.log("released clock #\(number)") }

    func next(after: Date) async throws -> Date { after.addingTimeInterval(60) }

    func fail(reason: String) async throws -> Int {
        struct ClockStopped: Error, CustomStringConvertible { let description: String }
        throw ClockStopped(description: "the clock refuses: \(reason)")
    }

    func crash() async throws { fatalError("reminders crashes on purpose") }

    func sleep(milliseconds: Int) async throws -> Int {
        Plugin.log("clock #\(number) sleeps \(milliseconds) ms")
        try await Task.sleep(for: .milliseconds(milliseconds))
        return milliseconds
    }

    func hold(untilFileAt path: String) async throws -> String {
        Plugin.log("clock #\(number) holds")
        for _ in 0..<60_000 where !FileManager.default.fileExists(atPath: path) {
            try await Task.sleep(for: .milliseconds(10))
        }
        return FileManager.default.fileExists(atPath: path) ? "released" : "never released"
    }

    func instance() async throws -> String {
        let count = calls.withLock { calls in
            calls += 1
            return calls
        }
        Plugin.log("clock #\(number) call \(count)")
        return "#\(number) call \(count)"
    }

    func generation() async throws -> String { generationToken }
}

final class RunningTally: Tally {
    private let number = made.add(1, ordering: .relaxed).newValue
    private let total = Mutex(0)

    init() { Plugin.log("made tally #\(number)") }
    deinit { Plugin.log("released tally #\(number)") }

    func add(_ amount: Int) async throws -> String {
        let total = total.withLock { total in
            total += amount
            return total
        }
        return "#\(number) total \(total)"
    }
}

@_cdecl("berth_reminders_entry_v1")
public func berthRemindersEntry(_ host: UnsafeRawPointer?, _ plugin: UnsafeRawPointer?) -> UnsafeRawPointer? {
    Plugin(id: "org.berth.reminders", screens: [],
           services: [.provides(ReminderClockContract.self, .session) { SystemClock() },
                      .provides(TallyContract.self, .request) { RunningTally() }],
           capabilities: [.servicesProvide])
        .export(host, plugin)
}
