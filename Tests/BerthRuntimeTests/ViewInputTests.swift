import BerthTestSupport
import CBerth
import Testing
@_spi(Engine) @testable import BerthRuntime

/// `ViewInput`: every kind of input reaches a real Swift plugin's views through berth.h's
/// view-input action (in process, or in a worker under `BERTH_TEST_ISOLATION=process`),
/// and the encoding the host writes is the one berth.h's `berth_input_split` reads.
@Suite("View input") @MainActor
struct ViewInputTests {
    private func node(_ tree: ViewTree?, _ type: String, label: String? = nil) throws -> ViewNode {
        try #require(tree?.allNodes.first { $0.type == type && (label == nil || $0.fields["label"] == label) })
    }

    @Test("tap, toggle, type and step reach Counter's views and change what it renders")
    func counterKinds() async throws {
        let plugins = try await ExamplePlugins()
        try plugins.host.push("counter")
        let host = plugins.host
        let stepper = try node(try host.render(), "Stepper").id
        try host.inputBlocking(.step(.up), view: stepper)
        try host.inputBlocking(.step(.up), view: stepper)
        try host.inputBlocking(.step(.down), view: stepper)
        #expect(try node(try host.render(), "Stepper").fields["value"] == "1")
        let badge = try #require(try host.render()?.allNodes.first { $0.type == "Button" && $0.fields["label"]?.hasPrefix("taps:") == true })
        let tapped = try host.inputBlocking(.tap, view: badge.id)
        #expect(tapped?.allNodes.first { $0.id == badge.id }?.fields["label"] == "taps: 1")
        let opened = try host.inputBlocking(.toggle, view: try node(try host.render(), "Toggle").id)
        #expect(try node(opened, "Toggle").fields["isOn"] == "true")
        let typed = try host.inputBlocking(.type("a note, with spaces"), view: try node(opened, "TextField").id)
        #expect(try node(typed, "TextField").fields["text"] == "a note, with spaces")
    }

    @Test("select and step reach Inbox's picker; an index out of range is the plugin's one-line refusal")
    func pickerKinds() async throws {
        let plugins = try await ExamplePlugins()
        try plugins.host.push("inbox")
        let picker = try node(try plugins.host.render(), "Picker").id
        #expect(try node(try plugins.host.inputBlocking(.select(2), view: picker), "Picker").fields["value"] == "2")
        #expect(try node(try plugins.host.inputBlocking(.step(.down), view: picker), "Picker").fields["value"] == "1")
        #expect { try plugins.host.inputBlocking(.select(7), view: picker) } throws: { error in
            guard let error = error as? ScreenError else { return false }
            return error.pluginStatus == .invalidArgument && error.message.contains("select takes an option index from 0 to 2, got '7'")
        }
    }

    @Test("input of a kind the view does not take is refused by the plugin, naming the view and the kind, as a person gave it")
    func wrongKind() async throws {
        let plugins = try await ExamplePlugins()
        try plugins.host.push("counter")
        let stepper = try node(try plugins.host.render(), "Stepper")
        let refusal = try #require(throws: ScreenError.self) { try plugins.host.inputBlocking(.toggle, view: stepper.id) }
        // berth.h's action name (`berth.toggle`) is the plugin's business, not the reader's.
        let label = try #require(stepper.fields["label"])
        #expect(refusal.message.hasPrefix("com.example.counter/counter toggle on the Stepper '\(label)' failed: "), "\(refusal.message)")
        #expect(refusal.message.contains("\(stepper.id) does not take toggle") && !refusal.message.contains("berth."), "\(refusal.message)")
    }

    @Test("an input is described by the shell's word and the view's type and label, or its identity without one")
    func describedAsGiven() {
        let button = ViewNode(type: "Button", id: "S/VStack.1/Button", fields: ["label": "Wave"], children: [])
        let field = ViewNode(type: "TextField", id: "S/VStack.2/TextField", fields: ["label": "", "text": "x"], children: [])
        #expect(ViewInput.tap.described(on: button) == "tap on the Button 'Wave'")
        #expect(ViewInput.step(.down).described(on: button) == "step - on the Button 'Wave'")
        #expect(ViewInput.select(2).described(on: button) == "select 2 on the Button 'Wave'")
        #expect(ViewInput.type("secret words").described(on: field) == "type into the TextField S/VStack.2/TextField")
    }

    @Test("each input's action name and payload are berth.h's, and berth_input_split gives back the view and the value")
    func encodingIsBerthH() {
        let view = "CounterScreen/VStack.1/CounterPanel/VStack.0/Stepper"
        let cases: [(ViewInput, String, String)] = [
            (.tap, BERTH_INPUT_TAP, ""), (.toggle, BERTH_INPUT_TOGGLE, ""), (.type("héllo wörld"), BERTH_INPUT_TYPE, "héllo wörld"),
            (.step(.up), BERTH_INPUT_STEP, BERTH_INPUT_STEP_UP), (.step(.down), BERTH_INPUT_STEP, BERTH_INPUT_STEP_DOWN),
            (.select(12), BERTH_INPUT_SELECT, "12"),
        ]
        for (input, name, value) in cases {
            #expect(input.actionName == name && name.hasPrefix(BERTH_INPUT_PREFIX), "\(input)")
            let payload = input.payload(view: view)
            payload.withUnsafeBufferPointer { buffer in
                var identity = berth_bytes()
                var split = berth_bytes()
                berth_input_split(berth_bytes(data: buffer.baseAddress, length: UInt64(buffer.count)), &identity, &split)
                #expect(String(decoding: UnsafeBufferPointer(start: identity.data, count: Int(identity.length)), as: UTF8.self) == view)
                #expect(String(decoding: UnsafeBufferPointer(start: split.data, count: Int(split.length)), as: UTF8.self) == value, "\(input)")
            }
        }
    }
}
