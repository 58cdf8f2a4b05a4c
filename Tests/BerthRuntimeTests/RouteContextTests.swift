import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

private let selection = "com.example.users.UserSelection"
private let grace = Array(#"{"id":"grace","name":"Grace Hopper"}"#.utf8)

/// Route-context helpers over the example plugins with UserPicker and Profile added.
extension ExamplePlugins {
    static func withRouteContext() async throws -> ExamplePlugins { try await ExamplePlugins(adding: routeContext) }

    /// A host-side observer of `type` on `router` that records where it ran.
    func observe(_ type: String = selection, on router: Router, into log: Log) {
        host.addContextObserver(type, on: router) { _, payload in log.entries.append("\(router.id):\(String(decoding: payload, as: UTF8.self))") }
    }

    func terminateLines() -> [String] {
        host.events.filter { $0.message.hasPrefix("terminate ") }.map(\.message)
    }
}

/// Where observers ran, in order.
@MainActor
final class Log {
    var entries: [String] = []
    var screens: [String] { entries.map { String($0.prefix { $0 != ":" }) } }
}

@Suite("Route context: terminate") @MainActor
struct TerminateTests {
    @Test("context exists in a previous route: terminate pops back to it, exact back count, logged once")
    func popsToAnchor() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let profile = try host.push("profile")
        try host.sendBlocking(screen: profile.id, action: "pick-inline", payload: [])
        let users = try #require(host.visibleRouter)
        try host.sendBlocking(screen: users.id, action: "open", payload: Array("grace".utf8))
        let detail = try #require(host.visibleRouter)
        try host.sendBlocking(screen: detail.id, action: "choose", payload: [])
        #expect(host.visibleRouter === profile)
        #expect(users.isReleased && detail.isReleased)
        #expect(plugins.recorder.matching("profile shows Grace Hopper").count == 1)
        #expect(plugins.terminateLines() == ["terminate \(selection): poppedToAnchor, 2 screen(s) closed"])
    }

    @Test("no context and presented: terminate closes the modal, and every screen of it is released")
    func closesModal() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let base = try host.push("counter")
        let modalRoot = try host.present("com.example.users/users")
        let inside = try host.push("counter")
        let delivery = host.terminate(selection, payload: grace, from: inside)
        #expect(delivery.navigation == .dismissed)
        #expect(delivery.closed == [modalRoot.id, inside.id])
        #expect(host.visibleRouter === base)
    }

    @Test("no context and a non-empty stack: terminate goes back one screen")
    func backOne() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let first = try host.push("counter")
        _ = try host.push("counter")
        let top = try host.push("counter")
        let delivery = host.terminate(selection, payload: grace, from: top)
        #expect(delivery.navigation == .back)
        #expect(delivery.closed == [top.id])
        #expect(host.openRouters.count == 2)
        _ = first
    }

    @Test("an empty, non-presented stack: terminate changes nothing")
    func emptyStack() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let root = try plugins.host.push("counter")
        let delivery = plugins.host.terminate(selection, payload: grace, from: root)
        #expect(delivery.navigation == TerminateNavigation.none)
        #expect(delivery.closed.isEmpty)
        #expect(plugins.host.openRouters.map(\.id) == [root.id])
    }

    @Test("pop-to-anchor removes several screens with the full close sequence")
    func removesSeveral() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let anchor = try host.push("counter")
        let log = Log()
        plugins.observe(on: anchor, into: log)
        let middle = [try host.push("counter"), try host.push("inbox"), try host.push("counter")]
        let top = try host.push("counter")
        let delivery = host.terminate(selection, payload: grace, from: top)
        #expect(delivery.closed == (middle + [top]).map(\.id).sorted())
        #expect(host.events.filter { $0.kind == .deactivated }.suffix(4).map(\.subject) == ([top] + middle.reversed()).map { HostEvent.Subject.screen($0.id) })
        #expect(log.screens == ["\(anchor.id)"])
    }

    @Test("two anchors of one type: the nearest wins, every time")
    func nearestAnchor() async throws {
        for _ in 0..<5 {
            let plugins = try await ExamplePlugins.withRouteContext()
            let host = plugins.host
            let far = try host.push("counter")
            let near = try host.push("counter")
            let log = Log()
            plugins.observe(on: far, into: log)
            plugins.observe(on: near, into: log)
            let top = try host.push("counter")
            _ = host.terminate(selection, payload: grace, from: top)
            #expect(host.visibleRouter === near)
            #expect(log.screens == ["\(near.id)", "\(far.id)"], "both observers run, nearest first")
        }
    }

    @Test("across a modal boundary the presenter receives; the modal is closed")
    func acrossModal() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let profile = try host.push("profile")
        try host.sendBlocking(screen: profile.id, action: "pick", payload: [])
        let users = try #require(host.visibleRouter)
        #expect(users.stack?.isPresented == true)
        try host.sendBlocking(screen: users.id, action: "open", payload: Array("ada".utf8))
        try host.sendBlocking(screen: try #require(host.visibleRouter).id, action: "choose", payload: [])
        #expect(host.visibleRouter === profile)
        #expect(plugins.recorder.matching("profile shows Ada Lovelace").count == 1)
        #expect(plugins.terminateLines() == ["terminate \(selection): dismissed, 2 screen(s) closed"])
    }
}

@Suite("Route context: observers and dispatch") @MainActor
struct ContextDispatchTests {
    @Test("matching observers in the parent and the current route both run: ancestors nearest first, then current")
    func parentThenCurrent() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let grandparent = try host.push("counter")
        let parent = try host.push("counter")
        let current = try host.push("counter")
        let log = Log()
        plugins.observe(on: current, into: log)
        plugins.observe(on: grandparent, into: log)
        plugins.observe(on: parent, into: log)
        let delivery = host.sendContext(selection, payload: grace, from: current)
        #expect(log.screens == [parent, grandparent, current].map { "\($0.id)" })
        #expect(delivery.receivers == [parent.id, grandparent.id, current.id])
        #expect(host.openRouters.count == 3, "context does not navigate")
    }

    @Test("six observers up the tree all receive, nearest first, and the log names each one")
    func sixObservers() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        var screens: [Router] = []
        for _ in 0..<7 { screens.append(try host.push("counter")) }
        let log = Log()
        for screen in screens.dropFirst() { plugins.observe(on: screen, into: log) }
        let sender = try #require(screens.last)
        let delivery = host.sendContext(selection, payload: grace, from: sender)
        // Past the four receivers kept inline, in order: ancestors nearest first, then the sender.
        let expected = screens[1..<6].reversed().map(\.id) + [sender.id]
        #expect(delivery.receivers == expected)
        #expect(log.screens == expected.map(String.init))
        let event = try #require(host.events.last { $0.message.hasPrefix("context \(selection)") })
        #expect(event.subject == .screen(sender.id))
        #expect(event.message == "context \(selection) → screen(s) " + expected.map(String.init).joined(separator: ", "))
    }

    @Test("only the parent observes: it alone receives")
    func onlyParent() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let parent = try host.push("counter")
        let child = try host.push("counter")
        let log = Log()
        plugins.observe(on: parent, into: log)
        host.sendContext(selection, payload: grace, from: child)
        #expect(log.entries == ["\(parent.id):{\"id\":\"grace\",\"name\":\"Grace Hopper\"}"])
    }

    @Test("a duplicate add on the same screen is ignored")
    func duplicateAdd() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let profile = try plugins.host.push("profile")
        #expect(plugins.host.routeContext.addScreenObserver(selection, on: profile) == false)
        #expect(profile.contextObservers.count == 1)
    }

    @Test("remove on a route that did not register is a no-op")
    func removeUnregistered() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let counter = try plugins.host.push("counter")
        plugins.host.removeContextObservers(selection, on: counter)
        #expect(counter.contextObservers.isEmpty)
        let profile = try plugins.host.push("profile")
        try plugins.host.sendBlocking(screen: profile.id, action: "forget", payload: [])
        try plugins.host.sendBlocking(screen: profile.id, action: "forget", payload: [])
        #expect(profile.contextObservers.isEmpty)
    }

    @Test("a popped route's observers are gone")
    func poppedObserversGone() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let root = try host.push("counter")
        let profile = try host.push("profile")
        let log = Log()
        plugins.observe(on: profile, into: log)
        host.close(profile)
        #expect(profile.contextObservers.isEmpty)
        host.sendContext(selection, payload: grace, from: root)
        #expect(log.entries.isEmpty)
        #expect(plugins.recorder.matching("profile shows").isEmpty)
    }

    @Test("across two plugins: the Profile (Swift) and Greeter (C) screens receive a picker's context")
    func acrossPlugins() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        _ = try host.push("profile")
        _ = try host.push("hello")
        _ = try host.push("com.example.users/users")
        try host.sendBlocking(screen: try #require(host.visibleRouter).id, action: "open", payload: Array("linus".utf8))
        try host.sendBlocking(screen: try #require(host.visibleRouter).id, action: "preview", payload: [])
        #expect(plugins.recorder.matching("hello got com.example.users.UserSelection: {\"id\":\"linus\",\"name\":\"Linus Torvalds\"}").count == 1)
        #expect(plugins.recorder.matching("profile shows Linus Torvalds").count == 1)
    }

    @Test("after the observing plugin is unloaded nothing of it is called")
    func unloadedObserver() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let root = try host.push("counter")
        _ = try host.present("profile")
        try host.unload("com.example.profile")
        #expect(host.contextObserverLines.isEmpty)
        let delivery = host.sendContext(selection, payload: grace, from: root)
        #expect(delivery.receivers.isEmpty)
        #expect(plugins.recorder.matching("profile shows").isEmpty)
    }

    @Test("a context no one observes is logged by type and changes nothing")
    func nobodyObserves() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let root = try host.push("counter")
        let top = try host.push("counter")
        let delivery = host.sendContext("com.example.nobody.Cares", payload: [], from: top)
        #expect(delivery.receivers.isEmpty)
        #expect(host.events.last?.message == "context com.example.nobody.Cares has no observer")
        #expect(host.openRouters.map(\.id) == [root.id, top.id])
    }

    @Test("types match as strings: another ASCII name never matches, a canonically equal one of other bytes does")
    func typeMatching() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let root = try host.push("counter")
        let log = Log()
        // Dispatch tells ASCII names of different lengths apart without comparing them; a
        // name with other characters still compares as a String: "é" (one scalar, 2 bytes)
        // equals "e" + U+0301 (3 bytes), and the Kelvin sign (3 bytes) equals "K".
        for type in ["com.nu.Long.Selection", "caf\u{E9}.Choice", "\u{212A}elvin"] {
            host.addContextObserver(type, on: root) { type, _ in log.entries.append(type) }
        }
        let top = try host.push("counter")
        for type in ["com.nu.Short", "cafe\u{301}.Choice", "Kelvin", "com.nu.Long.Selectio", "com.nu.Long.Selection"] {
            host.sendContext(type, payload: [], from: top)
        }
        #expect(log.entries == ["cafe\u{301}.Choice", "Kelvin", "com.nu.Long.Selection"])
    }

    @Test("a payload the receiver cannot decode: a log line naming the type, other observers still run")
    func undecodable() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let profile = try host.push("profile")
        let log = Log()
        plugins.observe(on: profile, into: log)
        let top = try host.push("counter")
        let delivery = host.sendContext(selection, payload: Array("not json".utf8), from: top)
        #expect(delivery.receivers == [profile.id], "the host observer ran; the screen refused")
        #expect(host.events.contains { $0.kind == .failed && $0.message.hasSuffix("cannot decode \(selection): the payload is not JSON") },
                "\(host.events.map(\.description))")
        try host.sendBlocking(screen: profile.id, action: "show", payload: [])
        #expect(plugins.recorder.matching("profile: nobody selected").count == 1)
    }

    @Test("a payload with another key than the receiver's type: one line naming the type, the missing key and the keys that arrived")
    func missingKey() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        _ = try host.push("profile")
        let top = try host.push("counter")
        _ = host.sendContext(selection, payload: Array(#"{"id":"grace","label":"Grace Hopper"}"#.utf8), from: top)
        let failed = try #require(host.events.last { $0.kind == .failed && $0.message.contains("profile could not take it") }, "\(host.events.map(\.description))")
        #expect(failed.message.hasSuffix("cannot decode \(selection): key 'name' is missing; the sender sent {id, label}"), "\(failed.message)")
        _ = host.sendContext(selection, payload: Array(#"{"id":7,"name":"Grace Hopper"}"#.utf8), from: top)
        let mismatch = try #require(host.events.last { $0.kind == .failed && $0.message.contains("profile could not take it") })
        #expect(mismatch.message.hasSuffix("cannot decode \(selection): key 'id' is not a String; the sender sent {id, name}"), "\(mismatch.message)")
        #expect(!mismatch.message.contains("DecodingError") && !mismatch.message.contains("\n"))
    }

    @Test("a screen that is being closed cannot send: logged, nothing happens")
    func closingSender() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let profile = try host.push("profile")
        let sender = try host.push("counter")
        sender.interactor?.deactivate()
        let delivery = host.terminate(selection, payload: grace, from: sender)
        #expect(delivery.receivers.isEmpty)
        #expect(delivery.navigation == TerminateNavigation.none)
        #expect(host.events.contains { $0.message.contains("context \(selection) not sent: the sending screen is inactive") })
        #expect(plugins.recorder.matching("profile shows").isEmpty)
        _ = profile
    }
}

@Suite("Route context: canTerminate") @MainActor
struct CanTerminateTests {
    @Test("true with an anchor, with an ancestor across a modal, and with an observer on the sender itself")
    func trueCases() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let profile = try host.push("profile")
        let pushed = try host.push("counter")
        #expect(host.canTerminate(selection, from: pushed))
        let modal = try host.present("counter")
        #expect(host.canTerminate(selection, from: modal))
        let log = Log()
        let lone = try await ExamplePlugins.withRouteContext()
        let only = try lone.host.push("counter")
        lone.observe(on: only, into: log)
        #expect(lone.host.canTerminate(selection, from: only))
        _ = profile
    }

    @Test("false with no observer anywhere up the hierarchy, and after the observer is removed")
    func falseCases() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let root = try host.push("counter")
        let top = try host.push("counter")
        #expect(!host.canTerminate(selection, from: top))
        let log = Log()
        plugins.observe(on: root, into: log)
        #expect(host.canTerminate(selection, from: top))
        host.removeContextObservers(selection, on: root)
        #expect(!host.canTerminate(selection, from: top))
        #expect(!host.canTerminate("com.example.Other", from: top))
    }

    @Test("the picker asks the host before terminating, through the ABI")
    func throughTheABI() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        _ = try host.push("com.example.users/users")
        try host.sendBlocking(screen: try #require(host.visibleRouter).id, action: "open", payload: Array("ada".utf8))
        try host.sendBlocking(screen: try #require(host.visibleRouter).id, action: "choose", payload: [])
        #expect(plugins.recorder.matching("picker: Ada Lovelace chosen (receiver found: false)").count == 1)
    }
}

@Suite("Route context: the view-level form") @MainActor
struct ViewLevelContextTests {
    @Test(".routerContext registers while rendered, receives the picker's selection, and goes away when no longer rendered")
    func viewLevelForm() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let card = try host.push("profile-card")
        #expect(host.contextObserverLines == ["screen \(card.id) com.example.profile/profile-card: \(selection)"])
        try host.sendBlocking(screen: card.id, action: "pick", payload: [])
        try host.sendBlocking(screen: try #require(host.visibleRouter).id, action: "open", payload: Array("grace".utf8))
        try host.sendBlocking(screen: try #require(host.visibleRouter).id, action: "choose", payload: [])
        #expect(host.visibleRouter === card)
        #expect(plugins.recorder.matching("card shows Grace Hopper").count == 1)
        let tree = try host.render()
        #expect(tree?.allNodes.contains { $0.fields["text"] == "Card: Grace Hopper" } == true)

        try host.sendBlocking(screen: card.id, action: "mute", payload: [])
        #expect(host.contextObserverLines.isEmpty, "the modifier left the tree, so the observer went away")
        #expect(!host.canTerminate(selection, from: card))
    }
}
