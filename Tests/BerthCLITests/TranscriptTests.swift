import Foundation
import Testing
import BerthTestSupport

/// The tutorial's host transcripts stay true: a fenced block whose info string carries
/// `transcript=GROUP` is replayed against the real binary. Its `> COMMAND` lines are the
/// script; every other line must appear in the output, in order, except `…`, which stands
/// for lines left out. GROUP's `file=` blocks (see `TutorialTests`) are built, one package
/// per `Sources/<Target>/`, and each library is packed into one plugins folder first.
@Suite("Docs transcripts replayed against the built berth", .serialized)
struct TranscriptTests {
    @Test("every transcript block of the tutorial pages prints what the page shows", arguments: TranscriptBlocks.groups)
    func transcriptHolds(_ group: String) throws {
        let transcripts = try TranscriptBlocks.load().filter { $0.group == group }
        let sources = try TutorialBlocks.load().filter { $0.group == group && $0.language == "swift" }
        try #require(!transcripts.isEmpty && !sources.isEmpty, "group \(group): \(transcripts.count) transcript(s), \(sources.count) source(s)")
        let workspace = PluginWorkspace()
        let targets = Dictionary(grouping: sources) { $0.path.split(separator: "/").dropFirst().first.map(String.init) ?? "" }
        for (target, files) in targets.sorted(by: { $0.key < $1.key }) {
            let package = workspace.root + "/" + target
            for file in files {
                let path = package + "/" + file.path
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try file.contents.write(toFile: path, atomically: true, encoding: .utf8)
            }
            try TutorialBlocks.generatedPackage(for: files.map(\.path)).write(toFile: package + "/Package.swift", atomically: true, encoding: .utf8)
            let (status, log) = try ToolProcess.run("/usr/bin/env", ["swift", "build", "--package-path", target], in: workspace.root)
            try #require(status == 0, "swift build of \(target) failed:\n\(log)")
            let packed = try BerthProcess.run(["pack", target, "--out", "plugins"], in: workspace.root)
            try #require(packed.status == 0, "pack \(target): \(packed.standardError)")
        }
        for transcript in transcripts {
            let script = transcript.lines.filter { $0.hasPrefix("> ") }.map { String($0.dropFirst(2)) }.joined(separator: "\n") + "\n"
            // One pipe for stdout and stderr, so plugin log lines keep their place.
            try script.write(toFile: workspace.root + "/script.berth", atomically: true, encoding: .utf8)
            let (_, printed) = try ToolProcess.run(BuildProducts.berth, ["run", "--plugins", "plugins", "--state-dir", "state", "--script", "script.berth"],
                                                   in: workspace.root)
            let output = printed.components(separatedBy: "\n")
            var position = output.startIndex
            for expected in transcript.lines where expected.trimmingCharacters(in: .whitespaces) != "…" {
                guard let found = output[position...].firstIndex(of: expected) else {
                    Issue.record("group \(group): the page shows '\(expected)', berth printed (from there):\n\(output[position...].joined(separator: "\n"))")
                    break
                }
                position = output.index(after: found)
            }
        }
    }
}

/// A `transcript=GROUP` block: its lines, without the fences.
struct TranscriptBlock {
    var group: String
    var lines: [String]
}

enum TranscriptBlocks {
    /// The groups that have a transcript (empty when the pages cannot be read).
    static var groups: [String] {
        var names: [String] = []
        for block in (try? load()) ?? [] where !names.contains(block.group) { names.append(block.group) }
        return names
    }

    static func load() throws -> [TranscriptBlock] {
        var blocks: [TranscriptBlock] = []
        for path in TutorialBlocks.documentPaths {
            var current: TranscriptBlock?
            var inFence = false
            for line in try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\n") {
                guard line.trimmingCharacters(in: .whitespaces).hasPrefix("```") else {
                    current?.lines.append(line)
                    continue
                }
                if inFence, let block = current { blocks.append(block) }
                if inFence {
                    current = nil
                    inFence = false
                    continue
                }
                inFence = true
                let group = line.split(separator: " ").first { $0.hasPrefix("transcript=") }.map { String($0.dropFirst("transcript=".count)) }
                current = group.map { TranscriptBlock(group: $0, lines: []) }
            }
        }
        return blocks
    }
}
