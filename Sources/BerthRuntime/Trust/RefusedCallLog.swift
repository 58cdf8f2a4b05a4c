@_spi(Engine) import BerthCore
private import CBerthSystem
/// The host's side of `denied` events for a worker's refused system calls
/// (`IsolationNotification.refusedSystemCall`): which it reports. The worker's counts are
/// only its claims (the plugin runs in that process and can write to the channel), so the
/// host admits a count only at 1, 10, 100, … and above the last one it reported for that
/// call, and at most `distinctCalls` different calls per worker, each name printable and
/// short: a plugin cannot flood the event log through it.
struct RefusedCallLog {
    /// Different calls reported for one worker; more are dropped.
    static let distinctCalls = 16
    /// The longest call description reported.
    static let callCharacters = 64

    private var reported: [String: UInt64] = [:]

    /// Whether `count` refusals of `call` make an event; records it when they do.
    mutating func admit(call: String, count: UInt64) -> Bool {
        guard !call.isEmpty, call.count <= Self.callCharacters, call.allSatisfy({ $0.isASCII && !$0.isNewline && $0 != "\u{1B}" }),
              RefusalCount.isReported(count), count > reported[call, default: 0],
              reported[call] != nil || reported.count < Self.distinctCalls else { return false }
        reported[call] = count
        return true
    }

    /// The event's message.
    @MainActor
    static func message(call: String, count: UInt64) -> String {
        let times = count == 1 ? "" : " (\(count) times so far)"
        return "\(named(call)) refused by the system-call filter: EPERM\(times)"
    }

    /// The worker names the calls it describes itself ("socket(AF_UNIX)") and sends the rest as
    /// "system call 425", which the host names through libseccomp (`berth_seccomp_call_name`,
    /// whose answer is static storage: hence the main actor).
    @MainActor
    static func named(_ call: String) -> String {
        guard call.hasPrefix("system call "), let number = Int32(call.dropFirst(12)), let name = berth_seccomp_call_name(number) else { return call }
        return String(cString: name)
    }
}
