import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// The fuzz harnesses' inputs run through the same decoders in the normal suite: the seed
/// corpus (Tests/Fuzz/corpus/HARNESS) and every input a fuzzer crashed on
/// (Tests/Fuzz/regressions/HARNESS), so a fixed crash stays fixed (Docs/fuzzing.md).
@Suite("Fuzz corpus replay")
struct FuzzCorpusTests {
    @Test("manifest inputs decode, or are refused with problems naming a field")
    func manifests() throws {
        let inputs = FuzzCorpus.inputs("manifest")
        #expect(inputs.count >= 7)
        for (name, bytes) in inputs {
            let (manifest, problems) = PluginManifest.decode(Data(bytes), path: name)
            #expect(manifest != nil || problems.contains { $0.severity == .error }, "\(name)")
            #expect(problems.allSatisfy { !$0.field.isEmpty && !$0.description.contains("\n") }, "\(name)")
        }
        #expect(PluginManifest.decode(Data(try #require(inputs["corpus/counter.json"])), path: "counter").manifest?.id == "com.example.counter")
    }

    @Test("ELF inputs parse or throw a typed error")
    func elfImages() throws {
        let inputs = FuzzCorpus.inputs("elf")
        #expect(inputs.count >= 4)
        for (name, bytes) in inputs {
            do {
                _ = try ELFImage(bytes: bytes, path: name).exports("plugin_add")
            } catch {
                #expect(!error.detail.isEmpty)
            }
        }
        let image = try ELFImage(bytes: try #require(inputs["corpus/x86_64-two-exports.so"]), path: "seed")
        #expect(image.exports("plugin_add") && image.exports("berth_plugin_entry_v1"))
        let truncated = try #require(inputs["corpus/x86_64-truncated.so"])
        #expect(throws: ELFImageError.self) { try ELFImage(bytes: truncated, path: "seed") }
    }

    @Test("view-tree inputs decode to a tree, or throw")
    func viewTrees() throws {
        let inputs = FuzzCorpus.inputs("view-tree")
        #expect(inputs.count >= 4)
        for (name, bytes) in inputs {
            if let tree = try? ViewTreeDecoder.decode(bytes) {
                #expect(!tree.allNodes.isEmpty, "\(name)")
                #expect(ViewTree(root: tree).nodeCount == tree.allNodes.count, "\(name)")
            }
        }
        let counterBytes = try #require(inputs["corpus/counter.json"])
        let counter = try #require(try ViewTreeDecoder.decode(counterBytes))
        #expect(counter.allNodes.filter(\.isInteractive).map(\.type) == ["Stepper", "Toggle", "Button"])
        // Binary seeds: the first render_tree pass of Counter (identity definitions included)
        // and of the Stress grid with 3 rows, as the plugins wrote them.
        let binaryCounterBytes = try #require(inputs["corpus/counter-binary.bin"])
        let binaryCounter = try #require(try ViewTreeDecoder.decode(binaryCounterBytes))
        #expect(binaryCounter.allNodes.filter(\.isInteractive).map(\.type) == ["Stepper", "Button", "Toggle", "Button"])
        let gridBytes = try #require(inputs["corpus/grid-binary.bin"])
        let grid = try #require(try ViewTreeDecoder.decode(gridBytes))
        #expect(grid.allNodes.filter(\.isInteractive).count == 3)
        let wrongTypes = try #require(inputs["corpus/wrong-types.json"])
        #expect(throws: ViewTreeDecodingError.self) { try ViewTreeDecoder.decode(wrongTypes) }
    }

    @Test("regression: a high surrogate followed by a \\u escape that is not a low surrogate is an error, not a trap")
    func unpairedSurrogate() throws {
        let input = try #require(FuzzCorpus.inputs("view-tree")["regressions/unpaired-surrogate.json"])
        #expect { try ViewTreeDecoder.decode(input) } throws: { error in
            (error as? ViewTreeDecodingError)?.message.contains("unpaired surrogate") == true
        }
    }
}
