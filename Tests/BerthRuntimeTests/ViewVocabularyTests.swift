import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport
import CBerth

/// View-tree version 2 (berth.h): a screen title, Spacer, Divider, padding, a border,
/// emphasis, a foreground colour and a Picker, from Inbox's screen and from hand-made
/// trees; and what a plugin writes for a host that reads only version 1.
@Suite("View vocabulary (tree version 2)") @MainActor
struct ViewVocabularyTests {
    private func node(_ tree: ViewTree?, _ type: String) throws -> ViewNode {
        try #require(tree?.allNodes.first { $0.type == type })
    }

    @Test("Inbox's title, styles, Divider, Spacer and Picker reach the host as fields, without changing identities")
    func inboxVocabulary() async throws {
        let plugins = try await ExamplePlugins()
        try plugins.host.push("inbox")
        let tree = try plugins.host.render()
        #expect(tree?.root?.screenTitle == "Inbox")
        // The tree knows its title from the check, without building nodes; the same title.
        #expect(tree?.screenTitle == "Inbox")
        let count = try #require(tree?.allNodes.first { $0.fields["text"]?.hasPrefix("Inbox ·") == true })
        #expect(count.id == "InboxScreen/VStack.0/Text")
        #expect(count.style.bold && count.style.foreground == "cyan" && !count.style.italic)
        #expect(try node(tree, "Divider").id == "InboxScreen/VStack.3/Divider")
        #expect(try node(tree, "Spacer").children.isEmpty)
        let panel = try #require(tree?.allNodes.first { $0.id == "InboxScreen/VStack.4/FilingPanel/VStack" })
        #expect(panel.style.border && panel.style.padding == 1)
        let picker = try node(tree, "Picker")
        #expect(picker.isInteractive)
        #expect(picker.fields["label"] == "File new mail in" && picker.fields["value"] == "0")
        #expect(picker.children.map { $0.fields["text"] } == ["Inbox", "Archive", "Spam"])
    }

    @Test("a Picker takes step (clamped to its options) and select (an index), and refuses an index out of range")
    func pickerInput() async throws {
        let plugins = try await ExamplePlugins()
        try plugins.host.push("inbox")
        let id = try node(try plugins.host.render(), "Picker").id
        for _ in 0..<4 { try plugins.host.inputBlocking(.step(.up), view: id) }
        #expect(try node(try plugins.host.render(), "Picker").fields["value"] == "2")
        try plugins.host.inputBlocking(.select(0), view: id)
        #expect(try node(try plugins.host.render(), "Picker").fields["value"] == "0")
        try plugins.host.inputBlocking(.step(.down), view: id)
        #expect(try node(try plugins.host.render(), "Picker").fields["value"] == "0")
        #expect(throws: ScreenError.self) { try plugins.host.inputBlocking(.select(3), view: id) }
        #expect(try node(try plugins.host.render(), "Text").fields["text"] == "Inbox · 0 message(s)")
        #expect(try plugins.host.render()?.allNodes.contains { $0.fields["text"] == "filed in Inbox" } == true)
    }

    @Test("for a host that reads version 1, the SDK writes version 1: no styles or title, a Picker as a Stepper that still steps")
    func versionOneHost() async throws {
        // In process: the announced version is this process's (a worker announces its own).
        let plugins = try await ExamplePlugins(isolation: .inProcessOnly)
        RenderInput.announcedTreeVersion = 1
        defer { RenderInput.announcedTreeVersion = UInt32(BERTH_VIEW_TREE_VERSION) }
        try plugins.host.push("inbox")
        let tree = try plugins.host.render()
        let nodes = tree?.allNodes ?? []
        #expect(!nodes.isEmpty)
        #expect(nodes.allSatisfy { ["Spacer", "Divider", "Picker"].contains($0.type) == false })
        #expect(nodes.allSatisfy { $0.style.isPlain && $0.fields["title"] == nil })
        #expect(tree?.screenTitle == nil)
        let stepper = try #require(nodes.first { $0.type == "Stepper" })
        #expect(stepper.fields["label"] == "File new mail in: Inbox" && stepper.children.isEmpty)
        #expect(nodes.contains { $0.id == "InboxScreen/VStack.3/Divider" && $0.type == "Text" })
        try plugins.host.inputBlocking(.step(.up), view: stepper.id)
        #expect(try node(try plugins.host.render(), "Stepper").fields["label"] == "File new mail in: Archive")
    }

    @Test("the decoders read version-2 style and title fields in both forms, and refuse a kind past Picker")
    func decoders() throws {
        // VStack (style: bold, red, padding 2, border; title "T") with one Picker and its option.
        var tree: [UInt8] = []
        func u32(_ value: UInt32) { tree += withUnsafeBytes(of: value.littleEndian, Array.init) }
        func string(_ text: String) { u32(UInt32(text.utf8.count)); tree += Array(text.utf8) }
        func nodes(firstKind: UInt8) -> [UInt8] {
            tree = []
            tree += [firstKind, UInt8(BERTH_VIEW_FIELD_STYLE | BERTH_VIEW_FIELD_TITLE), 0, 0]; u32(0); u32(1)
            u32(UInt32(BERTH_VIEW_STYLE_BOLD | BERTH_VIEW_STYLE_BORDER) | UInt32(BERTH_VIEW_COLOR_RED) << 8 | 2 << 16); string("T")
            tree += [UInt8(BERTH_VIEW_PICKER), UInt8(BERTH_VIEW_FIELD_LABEL | BERTH_VIEW_FIELD_VALUE), 0, 0]; u32(1); u32(1)
            string("Pick"); tree += withUnsafeBytes(of: Int64(0).littleEndian, Array.init)
            tree += [UInt8(BERTH_VIEW_TEXT), UInt8(BERTH_VIEW_FIELD_TEXT), 0, 0]; u32(2); u32(0); string("one")
            let body = tree
            tree = []
            u32(BERTH_VIEW_TREE_MAGIC); u32(2); u32(24); u32(0); u32(3); u32(3)
            for (id, path) in ["S/VStack", "S/VStack.0/Picker", "S/VStack.0/Picker.0/Text"].enumerated() { u32(UInt32(id)); string(path) }
            u32(0)
            return tree + body
        }
        let root = try #require(try ViewTreeDecoder.decode(nodes(firstKind: UInt8(BERTH_VIEW_VSTACK))))
        #expect(root.fields == ["emphasis": "bold", "foreground": "red", "padding": "2", "border": "true", "title": "T"])
        #expect(root.children.first?.type == "Picker" && root.children.first?.children.first?.fields["text"] == "one")
        #expect(throws: ViewTreeDecodingError.self) { try ViewTreeDecoder.decode(nodes(firstKind: UInt8(BERTH_VIEW_PICKER) + 1)) }

        let json = #"{"type":"VStack","id":"S","title":"T","emphasis":"italic dim","foreground":"green","padding":1,"border":true,"children":[{"type":"Spacer","id":"S.0"}]}"#
        let parsed = try #require(try ViewTreeDecoder.decode(Array(json.utf8)))
        #expect(parsed.screenTitle == "T" && parsed.style.italic && parsed.style.dim && parsed.style.foreground == "green")
        #expect(parsed.style.padding == 1 && parsed.style.border && parsed.children.first?.type == "Spacer")
        #expect(throws: ViewTreeDecodingError.self) { try ViewTreeDecoder.decode(Array(#"{"type":"Text","id":"S","padding":"wide"}"#.utf8)) }
    }
}
