import BerthTestSupport
import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime

/// The embedding API of values (Docs/embedding.md): screen and plugin snapshots read after
/// each operation on real example plugins (in process, or in workers under
/// `BERTH_TEST_ISOLATION=process`), and `changes`, the one sequence of events and changes.
@Suite("Host value API") @MainActor
struct HostValueAPITests {
    private let processMode = ProcessInfo.processInfo.environment["BERTH_TEST_ISOLATION"] == "process"

    @Test("screen snapshots follow open, tap, push, present, dismiss, back, reload and close")
    func screenSnapshots() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        #expect(host.screens.isEmpty && host.visibleScreen == nil && host.visibleScreens.isEmpty)

        let counter = try await host.openScreen("counter")
        #expect(counter.route == Route(plugin: "com.example.counter", name: "counter") && counter.plugin == "com.example.counter")
        #expect(counter.state == .active && counter.parent == nil && !counter.presented && counter.rendersViews && !counter.busy)
        #expect(counter.actions == host.declaredActions(screen: counter.id) && counter.actions.contains { $0.name == "report" })
        #expect(counter.generation != nil && counter.generation == host.pluginSnapshot("com.example.counter")?.generation)
        try host.render(screen: counter.id)
        let drawn = try #require(host.visibleScreen)
        #expect(drawn.id == counter.id && drawn.tree != nil && drawn.title == drawn.tree?.screenTitle)
        let badge = try #require(drawn.tree?.firstNode { $0.type == "Button" && $0.fields["label"]?.hasPrefix("taps:") == true })
        #expect(badge.fields["label"] == "taps: 0")

        try await host.input(.tap, view: badge.id, screen: counter.id)
        #expect(host.screen(counter.id)?.tree?.firstNode { $0.id == badge.id }?.fields["label"] == "taps: 1")
        // A snapshot is a value: the one read before the tap still says 0.
        #expect(drawn.tree?.firstNode { $0.id == badge.id }?.fields["label"] == "taps: 0")

        let hello = try await host.openScreen("hello")
        let compose = try await host.openScreen("compose", presented: true)
        #expect(hello.parent == counter.id && !hello.presented && compose.parent == hello.id && compose.presented)
        #expect(host.visibleScreens.map(\.id) == [counter.id, hello.id, compose.id])
        #expect(host.screens.map(\.id) == [counter.id, hello.id, compose.id])
        #expect(host.visibleScreen?.id == compose.id, "\(host.screens.map { ($0.id, $0.state) })")
        // A covered screen stays attached and active (its tasks tick on).
        #expect(host.screens.allSatisfy { $0.state == .active })

        try host.userDismiss()
        #expect(host.visibleScreens.map(\.id) == [counter.id, hello.id] && host.screen(compose.id) == nil)
        try host.userBack()
        #expect(host.visibleScreens.map(\.id) == [counter.id] && host.visibleScreen?.state == .active)

        let before = try #require(host.pluginSnapshot("com.example.counter")?.generation)
        try await host.reloadOffMain("com.example.counter")
        #expect(host.pluginSnapshot("com.example.counter")?.generation == before + 1)
        let reopened = try #require(host.visibleScreen)
        #expect(reopened.id == counter.id && reopened.route == counter.route && reopened.state == .active)
        #expect(reopened.generation == before + 1, "the reopened screen's instance is the new generation's")

        try host.closeScreen(counter.id)
        #expect(host.screens.isEmpty && host.visibleScreen == nil)
        let refusal = try #require(throws: ScreenError.self) { try host.closeScreen(counter.id) }
        #expect(refusal.code == .noSuchScreen && refusal.message == "no open screen \(counter.id)")
    }

    @Test("plugin snapshots say version, generation, where each runs, limits, use and crashes")
    func pluginSnapshots() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let snapshots = host.pluginSnapshots(measuringUse: true)
        #expect(snapshots.map(\.id) == ["com.example.counter", "com.example.greeter", "com.example.inbox"])
        for snapshot in snapshots {
            let record = try #require(host.plugins[snapshot.id])
            #expect(snapshot.state == "loaded" && snapshot.generation == record.generation?.number && snapshot.crashes == 0)
            #expect(snapshot.version == record.source.manifest.version && snapshot.limits == record.source.manifest.limits)
            #expect(snapshot.routes == record.source.manifest.routes.map { Route(plugin: snapshot.id, name: $0) })
            #expect(snapshot.isolation == (processMode ? .process : .inProcess))
            #expect(snapshot.loadTimings == record.generation?.loadTimings && snapshot.loadedAt == record.generation?.loadedAt)
            #expect(snapshot.loadTimings?.total ?? .zero > .zero && snapshot.loadedAt.map { $0 >= host.startedAt } == true)
            if processMode {
                let pid = try #require(record.generation?.workerPID)
                let group: String? = snapshot.id == "com.example.greeter" ? "greeter-family" : nil
                #expect(snapshot.placement == .worker(pid: pid, group: group), "\(snapshot.id)")
                #expect(snapshot.use?.memoryBytes ?? 0 > 0 && snapshot.processorTime != nil, "\(snapshot.id)")
                #expect(snapshot.residentMemory ?? 0 > 0, "\(snapshot.id)")
            } else {
                #expect(snapshot.placement == .inProcess && snapshot.use == nil && snapshot.processorTime == nil, "\(snapshot.id)")
                #expect(snapshot.residentMemory == nil, "\(snapshot.id)")
            }
        }
        #expect(host.pluginSnapshots().allSatisfy { $0.use == nil && $0.processorTime == nil && $0.residentMemory == nil })
        try host.unload("com.example.inbox")
        let unloaded = try #require(host.pluginSnapshot("com.example.inbox"))
        #expect(unloaded.state == "discovered" && unloaded.generation == nil && unloaded.placement == nil)
        #expect(unloaded.loadTimings == nil && unloaded.loadedAt == nil)
        #expect(host.pluginSnapshot("org.example.absent") == nil)
    }

    @Test("call(_:of:arguments:) calls a C export by plugin id and names what it cannot call")
    func callExportByPluginID() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        #expect(try host.call("greeter_add", of: "com.example.greeter", arguments: [.int32(2), .int32(40)]) == .int32(42))
        #expect(try host.call("greeter_greet", of: "com.example.greeter", arguments: [.string("Ada")]).description.contains("Ada"))
        let unknownSymbol = try #require(throws: FFIError.self) {
            try host.call("greeter_missing", of: "com.example.greeter", arguments: [])
        }
        #expect(unknownSymbol.code == .unknownSymbol && unknownSymbol.message.contains("greeter_add"))
        let arity = try #require(throws: FFIError.self) { try host.call("greeter_add", of: "com.example.greeter", arguments: [.int32(1)]) }
        #expect(arity.code == .arity)
        let notLoaded = try #require(throws: FFIError.self) { try host.call("greeter_add", of: "com.example.nowhere", arguments: []) }
        #expect(notLoaded.code == .pluginFailed && notLoaded.message == "com.example.nowhere is not loaded; nothing is called")
    }

    @Test("changes gives every event in log order and a change after each operation, to each consumer, and ends at shutdown")
    func changesInOrder() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let first = host.events.last?.sequence ?? 0
        let changedBefore = host.changeCount
        let consumers = [host.changes, host.changes].map { stream in
            Task { @MainActor in
                var seen: [HostChange] = []
                for await change in stream { seen.append(change) }
                return seen
            }
        }
        let hello = try await host.openScreen("hello")
        try host.closeScreen(hello.id)
        try await host.reloadOffMain("com.example.inbox")
        host.shutdown()
        let logged = host.events.map(\.sequence).filter { $0 > first }
        for consumer in consumers {
            let seen = await consumer.value
            let events = seen.compactMap { change -> HostEvent? in if case .event(let event) = change { event } else { nil } }
            #expect(events.map(\.sequence) == logged)
            // The screen's opening is logged before the change its operation ends with.
            let activated = try #require(seen.firstIndex { change in
                if case .event(let event) = change { event.kind == .activated && event.subject == .screen(hello.id) } else { false }
            })
            #expect(seen[activated...].contains { if case .changed = $0 { true } else { false } })
            #expect(events.contains { $0.kind == .reloaded && $0.subject == .plugin("com.example.inbox") })
            // `changeCount` counts the `.changed` elements sent.
            let changed = seen.filter { if case .changed = $0 { true } else { false } }.count
            #expect(changed > 0 && changed == host.changeCount - changedBefore, "\(changed) of \(host.changeCount - changedBefore)")
        }
        #expect(host.changeFeeds.count == 0)
        var afterShutdown = 0
        for await _ in host.changes { afterShutdown += 1 }
        #expect(afterShutdown == 0)
    }

    @Test("a consumer whose task is cancelled stops being fed")
    func cancelledConsumer() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let stream = host.changes
        #expect(host.changeFeeds.count == 1)
        let consumer = Task { @MainActor in
            for await _ in stream {}
        }
        consumer.cancel()
        await consumer.value
        let gone = await eventuallyAsync { host.changeFeeds.count == 0 }
        #expect(gone)
        try host.push("hello")
        host.shutdown()
    }
}
