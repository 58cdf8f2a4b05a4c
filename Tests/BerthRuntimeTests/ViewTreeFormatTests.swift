import Testing
@_spi(Engine) @testable import BerthRuntime
import CBerth

/// berth.h's binary view tree and the v1.0 JSON tree, read by the host (no plugin).
@Suite("View tree formats (host)") @MainActor
struct ViewTreeFormatTests {
    /// Builds a binary tree by hand, as a plugin would write it.
    private struct Tree {
        var definitions: [(UInt32, String)] = []
        var alive: [UInt8] = []
        var nodes: [UInt8] = []
        var nodeCount = 0
        var version = UInt32(BERTH_VIEW_TREE_VERSION)
        var flags: UInt32 = 0

        mutating func node(_ kind: Int, identity: UInt32, children: UInt32 = 0, label: String? = nil, branch: Bool? = nil) {
            nodes += [UInt8(kind), (label != nil ? 2 : 0) | (branch != nil ? 16 : 0), 0, 0]
            nodes += Self.u32(identity) + Self.u32(children)
            if let label { nodes += Self.u32(UInt32(label.utf8.count)) + Array(label.utf8) }
            if let branch { nodes.append(branch ? 1 : 0) }
            nodeCount += 1
        }

        var bytes: [UInt8] {
            var out = Self.u32(BERTH_VIEW_TREE_MAGIC) + Self.u32(version) + Self.u32(24) + Self.u32(flags)
            out += Self.u32(UInt32(definitions.count)) + Self.u32(UInt32(nodeCount))
            for (id, path) in definitions { out += Self.u32(id) + Self.u32(UInt32(path.utf8.count)) + Array(path.utf8) }
            return out + Self.u32(UInt32(alive.count)) + alive + nodes
        }

        static func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
    }

    private func reason(_ storage: StateStorage, _ bytes: [UInt8]) -> String? {
        storage.beginRenderPass()
        do {
            _ = try storage.endRenderPass(with: .binary(bytes))
            return nil
        } catch {
            storage.abandonRenderPass()
            return error.message
        }
    }

    @Test("identities are defined once; later trees name them by number")
    func internedIdentities() throws {
        let storage = StateStorage()
        var first = Tree(definitions: [(0, "S/VStack"), (1, "S/VStack.0/Button")])
        first.node(BERTH_VIEW_VSTACK, identity: 0, children: 1)
        first.node(BERTH_VIEW_BUTTON, identity: 1, label: "tap")
        storage.beginRenderPass()
        let one = try #require(try storage.endRenderPass(with: .binary(first.bytes))?.root)
        var second = Tree()
        second.node(BERTH_VIEW_VSTACK, identity: 0, children: 1)
        second.node(BERTH_VIEW_BUTTON, identity: 1, label: "tapped")
        storage.beginRenderPass()
        let two = try #require(try storage.endRenderPass(with: .binary(second.bytes))?.root)
        #expect(one.children.map(\.id) == ["S/VStack.0/Button"])
        #expect(two.children.map(\.id) == ["S/VStack.0/Button"])
        #expect(two.children.first?.fields["label"] == "tapped")
        #expect(two.type == "VStack" && two.children.first?.type == "Button")
    }

    @Test("the slots a pass did not use are dropped; slots written during it stay")
    func usedSlotsBitmap() throws {
        let storage = StateStorage()
        for path in ["A", "B", "C"] { storage.write(identity: path, index: 0, fingerprint: 1, bytes: [1]) }
        storage.beginRenderPass()
        let batch = storage.renderSlots()
        let keep = try #require(batch.firstIndex { $0.identity == "B" })
        storage.write(identity: "D", index: 0, fingerprint: 1, bytes: [4])
        var tree = Tree(definitions: [(0, "S/Text")], alive: [1 << UInt8(keep)])
        tree.node(BERTH_VIEW_TEXT, identity: 0)
        _ = try storage.endRenderPass(with: .binary(tree.bytes))
        #expect(Set(storage.slots.keys.map(\.identity)) == ["B", "D"])
        // A slot of an identity a tree defined goes out by number; the others by path.
        storage.write(identity: "S/Text", index: 0, fingerprint: 1, bytes: [5])
        let named = storage.renderSlots()
        #expect(named.first { $0.identityID == 0 }?.identity == nil)
        #expect(named.filter { $0.identityID == RenderSlot.unknownIdentity }.compactMap(\.identity).sorted() == ["B", "D"])
    }

    @Test("a malformed tree is refused with one line and costs no state")
    func malformedTrees() throws {
        let storage = StateStorage()
        storage.write(identity: "A", index: 0, fingerprint: 1, bytes: [1])
        var undefined = Tree()
        undefined.node(BERTH_VIEW_TEXT, identity: 3)
        #expect(reason(storage, undefined.bytes) == "node 0 names identity 3, which no tree defined")
        #expect(reason(storage, [1, 2, 3, 4, 5]) == "it does not start with the view-tree magic \"BVTR\"")
        var newer = Tree()
        newer.version = 9
        #expect(reason(storage, newer.bytes)?.hasPrefix("view-tree version 9 is not one this host reads") == true)
        var short = Tree(definitions: [(0, "S/VStack")])
        short.node(BERTH_VIEW_VSTACK, identity: 0, children: 2)
        #expect(reason(storage, short.bytes) == "the child counts announce more nodes than the tree holds")
        var truncated = Tree(definitions: [(0, "S/Button")])
        truncated.node(BERTH_VIEW_BUTTON, identity: 0, label: "a long label")
        #expect(reason(storage, Array(truncated.bytes.dropLast(3)))?.hasPrefix("it ends inside the label") == true)
        var unknownKind = Tree(definitions: [(0, "S/X")])
        unknownKind.node(42, identity: 0)
        #expect(reason(storage, unknownKind.bytes) == "node 0 has unknown kind 42")
        #expect(storage.slots.count == 1, "no failed pass dropped anything")
    }

    @Test("an if node's branch is read for branch invalidation")
    func branches() throws {
        let storage = StateStorage()
        var tree = Tree(definitions: [(0, "S/VStack"), (1, "S/VStack.0/if")])
        tree.node(BERTH_VIEW_VSTACK, identity: 0, children: 1)
        tree.node(BERTH_VIEW_IF, identity: 1, branch: false)
        storage.beginRenderPass()
        let decoded = try #require(try storage.endRenderPass(with: .binary(tree.bytes)))
        #expect(decoded.branches == ["S/VStack.0/if": false])
        #expect(decoded.root?.children.first?.fields["branch"] == "false")
    }

    @Test("a v1.0 JSON tree is parsed by hand: escapes, unknown fields ignored, wrong types refused")
    func legacyJSON() throws {
        let text = #"{"type":"VStack","id":"S","extra":[1,{"a":null}],"children":[{"type":"Text","id":"S.0/Text","text":"caf\u00e9 \"x\"\n"},{"type":"Stepper","id":"S.1/Stepper","label":"n","value":-3}]}"#
        let root = try #require(try LegacyJSONTree.parse(Array(text.utf8)))
        #expect(root.children.map { $0.fields } == [["text": "café \"x\"\n"], ["label": "n", "value": "-3"]])
        #expect(throws: ViewTreeError.self) { try LegacyJSONTree.parse(Array(#"{"type":1,"id":"S"}"#.utf8)) }
        do {
            _ = try LegacyJSONTree.parse(Array("{not json".utf8))
            Issue.record("not JSON was accepted")
        } catch {
            #expect(error.message.hasPrefix("the text is not JSON"))
        }
        #expect(try LegacyJSONTree.parse([]) == nil)
    }

    @Test("a JSON tree is refused for its views or its tokens before it is parsed; braces in strings are not views")
    func legacyJSONViewLimit() throws {
        // Not JSON after the views: only a count made before the parse names them all.
        let over = Array(("[" + String(repeating: "{},", count: 200_001) + "oops").utf8)
        #expect { try LegacyJSONTree.parse(over) } throws: { ($0 as? ViewTreeError)?.message == "the tree has 200001 views, over the limit of 200000" }
        let braces = String(repeating: "{", count: 300_000)
        let text = #"{"type":"Text","id":"S","text":"\\\"\#(braces)"}"#
        let root = try #require(try LegacyJSONTree.parse(Array(text.utf8)))
        #expect(root.fields["text"] == #"\""# + braces)
        // One view, seven tokens of its own ({, five strings, [) and 1,999,994 numbers.
        let numbers = Array((#"{"type":"VStack","id":"S","x":["# + String(repeating: "1,", count: 1_999_993) + "1]}").utf8)
        #expect { try LegacyJSONTree.parse(numbers) } throws: {
            ($0 as? ViewTreeError)?.message == "the JSON has 2000001 values and member names, over the limit of 2000000"
        }
    }
}
