import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// `@State` keyed by each view's own position (type + child index, branch, ForEach id),
/// through the real Stress plugin's identity screens (Tests/Fixtures/BerthStress).
@Suite("Structural identity") @MainActor
struct StructuralIdentityTests {
    private func plugins() async throws -> ExamplePlugins {
        try await ExamplePlugins(adding: ["stress.json"])
    }

    /// The labels of the Button nodes of the visible screen, in tree order.
    private func buttons(_ host: BerthHost) throws -> [String] {
        try host.render()?.allNodes.filter { $0.type == "Button" }.compactMap { $0.fields["label"] } ?? []
    }

    /// Taps the button whose label is `label`.
    private func tap(_ host: BerthHost, _ label: String) throws {
        let tree = try host.render()
        let node = try #require(tree?.allNodes.first { $0.type == "Button" && $0.fields["label"] == label }, "no button '\(label)'")
        try host.inputBlocking(.tap, view: node.id)
    }

    private func slotIdentities(_ router: Router) -> Set<String> {
        Set(router.module?.stateStorage.slots.keys.map { "\($0.identity)[\($0.index)]" } ?? [])
    }

    @Test("a stateful view keeps its state while conditional stateful views before it come and go")
    func conditionalsBefore() async throws {
        let plugins = try await plugins()
        let host = plugins.host
        let screen = try host.push("org.berth.stress/shift")
        for taps in 0..<3 { try tap(host, "taps: \(taps)") }
        #expect(try buttons(host) == ["taps: 3"])
        try host.sendBlocking(screen: screen.id, action: "banner", payload: [])
        #expect(try buttons(host) == ["banner seen 0", "taps: 3"], "the banner starts fresh; the badge keeps its taps")
        try tap(host, "banner seen 0")
        try host.sendBlocking(screen: screen.id, action: "note", payload: [])
        #expect(try buttons(host) == ["banner seen 1", "note seen 0", "taps: 3"])
        try host.sendBlocking(screen: screen.id, action: "banner", payload: [])
        #expect(try buttons(host) == ["note seen 0", "taps: 3"])
        try host.sendBlocking(screen: screen.id, action: "banner", payload: [])
        #expect(try buttons(host) == ["banner seen 0", "note seen 0", "taps: 3"], "the hidden branch's state was dropped")
        #expect(slotIdentities(screen) == ["ShiftScreen/VStack.2/Badge[0]"])
    }

    @Test("nested views, and two views of one type in one body, keep independent state")
    func nestedViews() async throws {
        let plugins = try await plugins()
        let host = plugins.host
        let screen = try host.push("org.berth.stress/nested")
        try tap(host, "outer 0")
        try tap(host, "left 0")
        try tap(host, "left 1")
        try tap(host, "right 0")
        let right = try #require(try host.render()?.allNodes.first { $0.type == "TextField" && $0.fields["label"] == "right" })
        try host.inputBlocking(.type("typed"), view: right.id)
        let badges = try #require(try host.render()?.allNodes.filter { $0.fields["label"] == "taps: 0" })
        try host.inputBlocking(.tap, view: badges[1].id)
        #expect(try buttons(host) == ["outer 1", "left 2", "taps: 0", "right 1", "taps: 1"])
        #expect(try host.render()?.allNodes.filter { $0.type == "TextField" }.map { $0.fields["text"] } == ["", "typed"])
        #expect(slotIdentities(screen) == [
            "NestedScreen/Outer[0]",
            "NestedScreen/Outer/VStack.1/Inner[0]",
            "NestedScreen/Outer/VStack.2/Inner[0]",
            "NestedScreen/Outer/VStack.2/Inner[1]",
            "NestedScreen/Outer/VStack.2/Inner/HStack.2/Badge[0]",
        ])
    }

    @Test("ForEach with duplicate ids renders deterministically and reports them once, naming the view and rows")
    func duplicateRowIDs() async throws {
        let plugins = try await plugins()
        let host = plugins.host
        let screen = try host.push("org.berth.stress/duplicates")
        let ids = try #require(try host.render()?.allNodes.filter { $0.type == "Button" }.map(\.id))
        #expect(ids == [
            "DuplicatesScreen/List.0/ForEach.a.0/Banner/Button",
            "DuplicatesScreen/List.0/ForEach.b.0/Banner/Button",
            "DuplicatesScreen/List.0/ForEach.a~1.0/Banner/Button",
            "DuplicatesScreen/List.0/ForEach.c.0/Banner/Button",
            "DuplicatesScreen/List.0/ForEach.b~1.0/Banner/Button",
            "DuplicatesScreen/List.0/ForEach.x%2Ey%2Fz.0/Banner/Button",
        ])
        try tap(host, "second a seen 0")
        try tap(host, "second b seen 0")
        try tap(host, "second b seen 1")
        for _ in 0..<3 { try host.render() }
        #expect(try buttons(host) == ["first a seen 0", "first b seen 0", "second a seen 1", "c seen 0", "second b seen 2", "dotted seen 0"])
        #expect(try host.render()?.allNodes.filter { $0.type == "Button" }.map(\.id) == ids)
        let reports = plugins.recorder.matching("ForEach DuplicatesScreen/List.0/ForEach has duplicate ids: 'a' at rows 0, 2; 'b' at rows 1, 4")
        #expect(reports.count == 1, "\(plugins.recorder.all)")
        #expect(slotIdentities(screen) == ["DuplicatesScreen/List.0/ForEach.a~1.0/Banner[0]", "DuplicatesScreen/List.0/ForEach.b~1.0/Banner[0]"])
    }

    @Test("ForEach rows keyed by Int ids keep their state by id: small, negative, large and repeated ids")
    func intRowIDs() async throws {
        let plugins = try await plugins()
        let host = plugins.host
        let screen = try host.push("org.berth.stress/int-rows")
        let row = "IntRowsScreen/List.0/ForEach"
        #expect(try host.render()?.allNodes.filter { $0.type == "Button" }.map(\.id) == [
            "\(row).5.0/Banner/Button", "\(row).-3.0/Banner/Button", "\(row).2000000.0/Banner/Button",
            "\(row).0.0/Banner/Button", "\(row).5~1.0/Banner/Button",
        ])
        try tap(host, "row -3 seen 0")
        try tap(host, "row 2000000 seen 0")
        try tap(host, "row 2000000 seen 1")
        try tap(host, "row 0 seen 0")
        #expect(try buttons(host) == ["row 5 seen 0", "row -3 seen 1", "row 2000000 seen 2", "row 0 seen 1", "row 5 seen 0"])
        try host.sendBlocking(screen: screen.id, action: "reverse", payload: [])
        #expect(try buttons(host) == ["row 5 seen 0", "row 0 seen 1", "row 2000000 seen 2", "row -3 seen 1", "row 5 seen 0"])
        #expect(slotIdentities(screen) == ["\(row).-3.0/Banner[0]", "\(row).2000000.0/Banner[0]", "\(row).0.0/Banner[0]"])
    }

    @Test("ForEach rows keyed by the plugin's own Hashable type keep their state by id; a repeat is reported once")
    func customRowIDs() async throws {
        let plugins = try await plugins()
        let host = plugins.host
        let screen = try host.push("org.berth.stress/keyed-rows")
        try tap(host, "a1 seen 0")
        try tap(host, "b2 seen 0")
        try tap(host, "b2 seen 1")
        #expect(try buttons(host) == ["a1 seen 1", "b2 seen 2", "a1 seen 0", "c3 seen 0"])
        try host.sendBlocking(screen: screen.id, action: "reverse", payload: [])
        // The first a1 in data order is the id's first occurrence, whichever element it is.
        #expect(try buttons(host) == ["c3 seen 0", "a1 seen 1", "b2 seen 2", "a1 seen 0"])
        let reports = plugins.recorder.matching("ForEach KeyedRowsScreen/List.0/ForEach has duplicate ids: 'Key(shelf: 1, name: \"a\")' at rows 0, 2")
        #expect(reports.count == 1, "\(plugins.recorder.all)")
    }

    @Test("a screen whose identity table starts over keeps its views' state and input (rows keyed by a key path)")
    func identitiesStartOver() async throws {
        let plugins = try await plugins()
        let host = plugins.host
        let screen = try host.push("org.berth.stress/churn")
        try tap(host, "taps: 0")
        try tap(host, "item 5 seen 0")
        var known = screen.module?.stateStorage.identityPaths.count ?? 0
        var startedOver = false
        for _ in 0..<8 {
            try host.sendBlocking(screen: screen.id, action: "shift", payload: [])
            _ = try host.render()
            let count = screen.module?.stateStorage.identityPaths.count ?? 0
            startedOver = startedOver || count < known
            known = count
        }
        #expect(startedOver, "the identity table never started over (\(known) identities)")
        #expect(try buttons(host).prefix(2) == ["taps: 1", "item 4800 seen 0"])
        try tap(host, "taps: 1")
        try tap(host, "item 4805 seen 0")
        #expect(try buttons(host).first == "taps: 2")
        #expect(try buttons(host).contains("item 4805 seen 1"))
        #expect(slotIdentities(screen) == ["ChurnScreen/VStack.0/Badge[0]", "ChurnScreen/VStack.1/List.0/ForEach.4805.0/Banner[0]"])
    }

    @Test("reload --keep-state keeps nested state at each view's own identity")
    func keepStateReload() async throws {
        let plugins = try await plugins()
        let host = plugins.host
        _ = try host.push("org.berth.stress/nested")
        try tap(host, "outer 0")
        try tap(host, "right 0")
        try tap(host, "right 1")
        try host.reload("org.berth.stress", keepState: true)
        #expect(try buttons(host) == ["outer 1", "left 0", "taps: 0", "right 2", "taps: 0"])
        try host.reload("org.berth.stress")
        #expect(try buttons(host) == ["outer 0", "left 0", "taps: 0", "right 0", "taps: 0"])
    }
}
