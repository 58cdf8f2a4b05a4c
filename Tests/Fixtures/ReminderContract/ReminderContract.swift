import BerthSDK
import FoundationEssentials

// The contract package of the Habits/Reminders shape (issue 41): the two contracts the
// Reminders fixture provides and the Habits fixture calls. Provider and consumer depend on
// this target and BerthSDK, and on nothing of each other.

/// When to remind, and the means to show how calls fare across workers.
public protocol ReminderClock {
    /// The next reminder after `after` (a minute later).
    func next(after: Date) async throws -> Date
    /// Throws the provider's own error, `reason`.
    func fail(reason: String) async throws -> Int
    /// Ends the provider's process (fatalError).
    func crash() async throws
    /// Sleeps `milliseconds` on the provider's lane, then answers them.
    func sleep(milliseconds: Int) async throws -> Int
    /// Waits on the provider's lane until a file exists at `path` (at most ten minutes), then
    /// answers "released": a call that stays in flight for as long as a test needs.
    func hold(untilFileAt path: String) async throws -> String
    /// The number of this instance (counted per provider generation) and how many calls it
    /// has answered, this one included: "#N call C".
    func instance() async throws -> String
    /// A token made when the provider's image loaded: another after a reload.
    func generation() async throws -> String
}

/// The contract of `ReminderClock`.
public enum ReminderClockContract: ServiceContract {
    public static let name = "org.berth.reminders.ReminderClock"
    public static func client(_ link: ServiceLink) -> any ReminderClock { Client(link: link) }
    public static func serve(_ service: any ReminderClock, _ call: inout ServiceCall) async throws {
        switch call.method {
        case "next": try call.reply(await service.next(after: call.argument()))
        case "fail": try call.reply(await service.fail(reason: call.argument()))
        case "crash": call.reply(try await service.crash())
        case "sleep": try call.reply(await service.sleep(milliseconds: call.argument()))
        case "hold": try call.reply(await service.hold(untilFileAt: call.argument()))
        case "instance": try call.reply(await service.instance())
        case "generation": try call.reply(await service.generation())
        default: throw call.unknownMethod()
        }
    }

    struct Client: ReminderClock {
        let link: ServiceLink
        func next(after: Date) async throws -> Date { try await link.call("next", after) }
        func fail(reason: String) async throws -> Int { try await link.call("fail", reason) }
        func crash() async throws { try await link.call("crash") }
        func sleep(milliseconds: Int) async throws -> Int { try await link.call("sleep", milliseconds) }
        func hold(untilFileAt path: String) async throws -> String { try await link.call("hold", path) }
        func instance() async throws -> String { try await link.call("instance") }
        func generation() async throws -> String { try await link.call("generation") }
    }
}

/// A running total, request-scoped in the fixture: each action its own.
public protocol Tally {
    /// Adds `amount` and answers "#N total T".
    func add(_ amount: Int) async throws -> String
}

/// The contract of `Tally`.
public enum TallyContract: ServiceContract {
    public static let name = "org.berth.reminders.Tally"
    public static func client(_ link: ServiceLink) -> any Tally { Client(link: link) }
    public static func serve(_ service: any Tally, _ call: inout ServiceCall) async throws {
        switch call.method {
        case "add": try call.reply(await service.add(call.argument()))
        default: throw call.unknownMethod()
        }
    }

    struct Client: Tally {
        let link: ServiceLink
        func add(_ amount: Int) async throws -> String { try await link.call("add", amount) }
    }
}

/// The contract of the C fixture's clock (Tests/Fixtures/BerthFixtures/contract.c,
/// "org.berth.Clock"): a Swift client of a provider written in C.
public protocol CClock {
    /// The provider instance's number and how often it was called.
    func next() async throws -> CClockReading
}

/// What the C clock's `next` answers: `{"instance":N,"calls":C}`.
public struct CClockReading: Codable, Sendable {
    public var instance: Int
    public var calls: Int
}

/// The contract of `CClock`.
public enum CClockContract: ServiceContract {
    public static let name = "org.berth.Clock"
    public static func client(_ link: ServiceLink) -> any CClock { Client(link: link) }
    public static func serve(_ service: any CClock, _ call: inout ServiceCall) async throws {
        switch call.method {
        case "next": try call.reply(await service.next())
        default: throw call.unknownMethod()
        }
    }

    struct Client: CClock {
        let link: ServiceLink
        func next() async throws -> CClockReading { try await link.call("next") }
    }
}
