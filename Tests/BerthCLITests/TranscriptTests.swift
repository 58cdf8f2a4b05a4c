import Foundation
import Testing
import BerthTestSupport

/// The tutorial's host transcripts stay true: a fenced block whose info string carries
/// `transcript=GROUP` is replayed against the real binary. Its `> COMMAND` lines are the
/// script; every other line must appear in the output, in order, except `…`, which stands
/// for lines left out. GROUP's `file=` blocks (see `TutorialTests`) are built, one package
/// per `Sources/<Target>/`, and each library is packed into one plugins folder first.
@Suite("Docs transcripts replayed against the built berth", .serialized, .blocking, .buildsPackages)
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
            expectTranscript(transcript.lines, in: printed.components(separatedBy: "\n"), "group \(group)")
        }
    }
}

/// Records an issue unless every line of `shown` but `…` appears in `printed`, in order.
func expectTranscript(_ shown: [String], in printed: [String], _ label: String) {
    var position = printed.startIndex
    for expected in shown where expected.trimmingCharacters(in: .whitespaces) != "…" {
        guard let found = printed[position...].firstIndex(of: expected) else {
            Issue.record("\(label): the page shows '\(expected)', berth printed (from there):\n\(printed[position...].joined(separator: "\n"))")
            return
        }
        position = printed.index(after: found)
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

/// Every transcript in Docs/ (a fenced block with a `$ berth …` command or a `> ` REPL
/// command) is kept true: replayed against the real binary, or excluded for a reason from a
/// short list, which the test checks the block really has. A new transcript without a
/// marker fails, so a stale one cannot slip in unreplayed.
@Suite("Docs transcripts: replayed or excluded for a reason", .serialized, .blocking)
struct DocsTranscriptTests {
    @Test("every transcript block in Docs is marked as replayed or excluded for a reason that holds")
    func everyTranscriptIsMarked() throws {
        let blocks = try DocsTranscript.loadAll()
        try #require(blocks.count > 20, "found only \(blocks.count) transcript blocks in Docs/")
        for block in blocks {
            switch block.marker {
            case .tutorial, .examples:
                continue
            case .excluded(let reason):
                let earlier = blocks.prefix { $0.location != block.location }.filter { $0.page == block.page }
                if let problem = reason.problem(with: block, earlier: earlier) { Issue.record("\(block.location): not-replayed=\(reason.rawValue): \(problem)") }
            case .unknownReason(let text):
                Issue.record("\(block.location): not-replayed=\(text) is not a reason; use one of \(DocsTranscript.Reason.allCases.map(\.rawValue))")
            case .none:
                Issue.record("\(block.location): a transcript without `replay=examples`, `transcript=GROUP` or `not-replayed=REASON` after its fence")
            }
        }
    }

    @Test("a transcript over the example plugins prints what the page shows", arguments: DocsTranscript.exampleLocations)
    func examplesTranscriptHolds(_ location: String) throws {
        let block = try #require(try DocsTranscript.loadAll().first { $0.location == location })
        let workspace = PluginWorkspace()
        let (staged, log) = try ToolProcess.run(BuildProducts.packageRoot + "/scripts/stage-plugins", [BuildProducts.directory, workspace.plugins], in: workspace.root)
        try #require(staged == 0, "stage-plugins: \(log)")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = workspace.root + "/run"
        environment["XDG_CONFIG_HOME"] = workspace.root + "/config"
        // The pages show the default mode: the CI's in-process pass over the CLI suites does not apply.
        environment["BERTH_ISOLATION"] = nil
        var output: [String] = []
        if block.replCommands.isEmpty {
            // `$ berth ARGS` lines, each run in turn; their outputs, with the command lines, in order.
            for line in block.lines where line.hasPrefix("$ berth ") {
                output.append(line)
                let arguments = try #require(DocsTranscript.words(String(line.dropFirst("$ berth ".count))), "\(location): cannot split '\(line)'")
                let (_, printed) = try ToolProcess.run(BuildProducts.berth, arguments, in: workspace.root, environment: environment)
                output += printed.components(separatedBy: "\n")
            }
        } else {
            try (block.replCommands.joined(separator: "\n") + "\n").write(toFile: workspace.root + "/script.berth", atomically: true, encoding: .utf8)
            // As scripts/demo runs the example plugins: consenting to the group Greeter and Profile name.
            let (_, printed) = try ToolProcess.run(BuildProducts.berth, ["run", "--plugins", "plugins", "--state-dir", "state",
                                                                         "--group", "greeter-family=com.example.greeter,com.example.profile",
                                                                         "--script", "script.berth"],
                                                   in: workspace.root, environment: environment)
            output = printed.components(separatedBy: "\n")
        }
        expectTranscript(block.lines, in: output, location)
    }
}

/// A fenced block of a Docs page that shows berth at work.
struct DocsTranscript {
    /// Why a transcript is not replayed. Each reason is checked against the block.
    enum Reason: String, CaseIterable {
        /// It talks to a host started elsewhere (`--socket`, `berth host`, a second terminal).
        case runningHost = "running-host"
        /// It continues a REPL session shown in an earlier block of the page.
        case sessionFragment = "session-fragment"
        /// It needs a Swift package built first (`new`, `pack`, `dev`, `keygen` keys).
        case packageBuild = "package-build"
        /// It shows what differs from run to run (timings, pids, generated keys).
        case variesByRun = "varies-by-run"
        /// A session typed at the `berth>` prompt of a host the page started by hand.
        case interactive = "interactive"
        /// It works on files the page makes (a broken manifest, a state folder), not on the
        /// example plugins' `plugins/` folder.
        case pageFiles = "page-files"

        /// Why the block does not fit the reason, or nil when it does.
        func problem(with block: DocsTranscript, earlier: [DocsTranscript]) -> String? {
            let text = block.lines.joined(separator: "\n")
            switch self {
            case .runningHost:
                let remote = text.contains("--socket") || text.contains("terminal") || block.commands.contains { $0.hasPrefix("berth host ") }
                return remote ? nil : "no --socket, no berth host and no second terminal in the block"
            case .sessionFragment:
                if block.replCommands.isEmpty { return "not a REPL session (no `> ` commands)" }
                return earlier.contains { !$0.replCommands.isEmpty } ? nil : "no earlier REPL block on the page to continue"
            case .packageBuild:
                let commands = ["new", "pack", "dev", "keygen", "run --watch"]
                if block.pageBuildsCode { return nil }
                return block.commands.contains { command in commands.contains { command.hasPrefix("berth " + $0) } } ? nil
                    : "no berth new, pack, dev, keygen or run --watch command, and the page has no `file=` code"
            case .variesByRun:
                return text.range(of: #"[0-9.]+ ?(ms|s)\b|pid [0-9]+|0x[0-9a-f]+|SHA-?256|[0-9a-f]{16}"#, options: .regularExpression) != nil ? nil
                    : "shows no timing, pid, address or key"
            case .interactive:
                return block.lines.contains { $0.hasPrefix("berth> ") } ? nil : "no `berth>` prompt in the block"
            case .pageFiles:
                return block.commands.contains { !Self.pathsOutsidePlugins(in: $0).isEmpty } ? nil
                    : "every path it names is in plugins/, where the example plugins are staged"
            }
        }

        /// The paths a command names (arguments with a slash, the values of --plugins,
        /// --trust and --state-dir, what validate, pack and load check) that are not in plugins/.
        private static func pathsOutsidePlugins(in command: String) -> [String] {
            let words = DocsTranscript.words(command) ?? []
            var paths: [String] = []
            for (index, word) in words.enumerated() where !word.hasPrefix("-") {
                let previous = index > 0 ? words[index - 1] : ""
                let positional = index >= 2 && ["validate", "pack", "load"].contains(words[1]) && !previous.hasPrefix("--socket")
                if word.contains("/") || ["--plugins", "--trust", "--state-dir"].contains(previous) || positional {
                    paths.append(word.hasPrefix("./") ? String(word.dropFirst(2)) : word)
                }
            }
            return paths.filter { $0 != "plugins" && !$0.hasPrefix("plugins/") }
        }
    }

    enum Marker {
        case tutorial(String), examples, excluded(Reason), unknownReason(String), none
    }

    var location: String
    var marker: Marker
    /// Whether its page has code blocks (`file=`) that the tutorial tests build.
    var pageBuildsCode = false
    /// The page's file name.
    var page: String { String(location.prefix { $0 != ":" }) }
    var lines: [String]

    /// The block's `$ berth …` commands, without the prompt.
    var commands: [String] { lines.filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("$ berth") }.map { String($0.trimmingCharacters(in: .whitespaces).dropFirst(2)) } }
    /// Its REPL commands (`> COMMAND` or `berth> COMMAND`), without the prompt.
    var replCommands: [String] {
        lines.compactMap { line in
            if line.hasPrefix("> ") { return String(line.dropFirst(2)) }
            if line.hasPrefix("berth> ") { return String(line.dropFirst(7)) }
            return nil
        }
    }

    /// The `replay=examples` blocks' locations (empty when Docs cannot be read).
    static var exampleLocations: [String] {
        ((try? loadAll()) ?? []).filter { if case .examples = $0.marker { true } else { false } }.map(\.location)
    }

    /// Every transcript block of Docs/*.md, as "page.md:LINE".
    static func loadAll() throws -> [DocsTranscript] {
        let folder = BuildProducts.packageRoot + "/Docs"
        var blocks: [DocsTranscript] = []
        for page in try FileManager.default.contentsOfDirectory(atPath: folder).filter({ $0.hasSuffix(".md") }).sorted() {
            var current: DocsTranscript?
            let text = try String(contentsOfFile: folder + "/" + page, encoding: .utf8)
            for (number, line) in text.components(separatedBy: "\n").enumerated() {
                guard line.trimmingCharacters(in: .whitespaces).hasPrefix("```") else {
                    current?.lines.append(line)
                    continue
                }
                if let block = current {
                    if !block.commands.isEmpty || !block.replCommands.isEmpty { blocks.append(block) }
                    current = nil
                } else {
                    current = DocsTranscript(location: "\(page):\(number + 1)", marker: marker(line), pageBuildsCode: text.contains(" file="), lines: [])
                }
            }
        }
        return blocks
    }

    private static func marker(_ fence: String) -> Marker {
        let words = fence.split(separator: " ")
        if let group = words.first(where: { $0.hasPrefix("transcript=") }) { return .tutorial(String(group.dropFirst("transcript=".count))) }
        if words.contains("replay=examples") { return .examples }
        if let excluded = words.first(where: { $0.hasPrefix("not-replayed=") }) {
            let text = String(excluded.dropFirst("not-replayed=".count))
            return Reason(rawValue: text).map(Marker.excluded) ?? .unknownReason(text)
        }
        return .none
    }

    /// A command line split as a shell would split it without expansions (quotes group
    /// words); nil when it uses anything more (pipes, redirections, variables).
    static func words(_ line: String) -> [String]? {
        var words: [String] = []
        var word = ""
        var inWord = false
        var quote: Character?
        for character in line {
            if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
                inWord = true
            } else if character == " " {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else if "|<>$;&`".contains(character) {
                return nil
            } else {
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        return quote == nil ? words : nil
    }
}
