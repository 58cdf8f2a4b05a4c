import BerthSDK
import FoundationEssentials
import ReminderContract

// Test fixture: the consumer of the Habits/Reminders shape (issue 41). One screen whose
// actions call the Reminders plugin's contracts and show the result, or the ServiceError's
// line, as "result: …" (and log it as "habits: …"); begin/end run the session.

final class HabitsScreen: Screen {
    static let route = "habits"
    static let actions: [ScreenAction] = [
        ScreenAction("next", summary: "The reminder after the payload's second (since 1970)"),
        ScreenAction("fail", summary: "A call the provider fails with the payload"),
        ScreenAction("crash", summary: "A call that crashes the provider"),
        ScreenAction("slow", summary: "A call the provider sleeps through (payload: milliseconds)"),
        ScreenAction("hold", summary: "A call the provider holds until a file exists (payload: its path)"),
        ScreenAction("instance", summary: "The session's clock instance and its call count"),
        ScreenAction("generation", summary: "The provider generation's token"),
        ScreenAction("tally", summary: "Adds 1 twice to this action's own tally"),
        ScreenAction("c-next", summary: "Calls the C fixture's clock (org.berth.Clock)"),
        ScreenAction("begin", summary: "Begins the session named by the payload"),
        ScreenAction("end", summary: "Ends the session"),
    ]

    private let context: ScreenContext
    private var result = "none"

    init(context: ScreenContext) {
        self.context = context
    }

    var body: some View {
        VStack {
            Text("result: \(result)")
        }
    }

    func handle(action: String, payload: [UInt8]) throws {
        let text = String(decoding: payload, as: UTF8.self)
        switch action {
        case "begin": return try context.beginSession(text)
        case "end": return try context.endSession()
        default: break
        }
        do {
            result = try call(action, text)
        } catch let error as ServiceError {
            result = "\(error.reason.rawValue): \(error)"
        }
        context.log("habits: \(result)")
    }

    private func call(_ action: String, _ text: String) throws -> String {
        if action == "c-next" {
            let clock = try context.service(CClockContract.self)
            let reading = try context.awaiting { try await clock.next() }
            return "C #\(reading.instance) calls \(reading.calls)"
        }
        if action == "tally" {
            let tally = try context.service(TallyContract.self)
            return try context.awaiting {
                let first = try await tally.add(1)
                return "\(first); \(try await tally.add(1))"
            }
        }
        let clock = try context.service(ReminderClockContract.self)
        return try context.awaiting {
            switch action {
            case "next":
                let after = Date(timeIntervalSince1970: Double(text) ?? 0)
                return "\(Int(try await clock.next(after: after).timeIntervalSince1970))"
            case "fail": return "\(try await clock.fail(reason: text))"
            case "crash":
                try await clock.crash()
                return "survived"
            case "slow": return "slept \(try await clock.sleep(milliseconds: Int(text) ?? 0))"
            case "hold": return try await clock.hold(untilFileAt: text)
            case "instance": return try await clock.instance()
            case "generation": return try await clock.generation()
            default: throw BerthError(code: .notFound, message: "habits has no action '\(action)'")
            }
        }
    }
}

@_cdecl("berth_habits_entry_v1")
public func berthHabitsEntry(_ host: UnsafeRawPointer?, _ plugin: UnsafeRawPointer?) -> UnsafeRawPointer? {
    Plugin(id: "org.berth.habits", screens: [HabitsScreen.self], consumes: [ReminderClockContract.self, TallyContract.self, CClockContract.self], capabilities: [.servicesConsume, .session])
        .export(host, plugin)
}

/// The same consumer as a second plugin (`org.berth.habits-other`): two consumers in two
/// workers calling one provider at once.
@_cdecl("berth_habits_other_entry_v1")
public func berthHabitsOtherEntry(_ host: UnsafeRawPointer?, _ plugin: UnsafeRawPointer?) -> UnsafeRawPointer? {
    Plugin(id: "org.berth.habits-other", screens: [HabitsScreen.self], consumes: [ReminderClockContract.self, TallyContract.self], capabilities: [.servicesConsume, .session])
        .export(host, plugin)
}
