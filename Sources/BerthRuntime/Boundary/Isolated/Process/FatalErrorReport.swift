@_spi(Engine) import BerthCore
import Foundation

/// A Swift runtime fatal error as a worker printed it: the line
/// ("Swift/Array.swift:1350: Fatal error: Index out of range") and the stack frames of its
/// "Current stack trace:". A trap inside the standard library names the library's file, and
/// one inside a call the SDK made names nothing of the author's; `located(in:)` names the
/// plugin's own code instead: its frames that its debug information places in a source file
/// outside BerthSDK, innermost first, with the SDK's and the runtime's frames between them folded.
struct FatalErrorReport: Sendable, Equatable {
    var line: String
    var stackTrace: [String]

    /// One frame of a plugin image, as its debug information places it.
    struct SourceFrame: Sendable, Equatable {
        /// The function, readable ("TrapScreen.handle(action:payload:)"); empty when unknown.
        var function: String
        /// The source file's path as the compiler saw it.
        var file: String
        var line: Int

        /// "TrapScreen.handle(action:payload:) at TrapScreen.swift:40".
        var description: String {
            let place = "\(FatalErrorReport.fileName(file)):\(line)"
            return function.isEmpty ? place : "\(function) at \(place)"
        }
    }

    /// Looks up the frames at offsets into an image (one result per offset, nil where the
    /// image has no line for it). `addr2line` by default.
    typealias Symbolizer = (_ image: String, _ offsets: [UInt64]) -> [SourceFrame?]

    /// What a crash report says of a fatal error.
    struct Located: Sendable, Equatable {
        /// The fatal line, at the plugin's own line when the reported one is not the author's:
        /// "TrapScreen.swift:39: Fatal error: Index out of range".
        var line: String
        /// The plugin's own frames (up to `FatalErrorReport.shownFrames`), innermost first.
        var frames: [SourceFrame]
        /// How many SDK and runtime frames lie between them (or before the first, from the
        /// frame that called into the plugin's code): `folded[i]` before `frames[i]`.
        var folded: [Int]

        /// "TrapScreen.handle(action:payload:) at TrapScreen.swift:40 ← 3 SDK/runtime frames ← …";
        /// nil without frames.
        var stack: String? {
            guard !frames.isEmpty else { return nil }
            var parts: [String] = []
            for (index, frame) in frames.enumerated() {
                if index > 0, folded[index] > 0 { parts.append("\(folded[index]) SDK/runtime frame\(folded[index] == 1 ? "" : "s")") }
                parts.append(frame.description)
            }
            return parts.joined(separator: " ← ")
        }

        /// The line, then "; stack: …" when there are plugin frames.
        var text: String { line + (stack.map { "; stack: \($0)" } ?? "") }
    }

    /// How many of the plugin's own frames a report shows.
    static let shownFrames = 3

    /// The fatal line located at the plugin's own code, with its frames. `images` are the
    /// plugin images the worker loaded (their frames are looked up); the line is unchanged
    /// and there are no frames when none has line information (a release build, no `addr2line`).
    func located(in images: [String], symbolizer: Symbolizer = Self.addr2line) -> Located {
        let own = ownFrames(images: images, symbolizer: symbolizer)
        guard let marker = line.range(of: "Fatal error"), let site = own.frames.first else {
            return Located(line: line, frames: own.frames, folded: own.folded)
        }
        let message = line[marker.lowerBound...]
        let reportedFile = line[..<marker.lowerBound].split(separator: ":").first.map { Self.fileName(String($0)) }
        // The plugin's own fatalError keeps its line; anything else is named at the author's frame.
        let located = Self.fileName(site.file) == reportedFile ? line : "\(Self.fileName(site.file)):\(site.line): \(message)"
        return Located(line: located, frames: own.frames, folded: own.folded)
    }

    /// The frames of `images` that have a source line outside BerthSDK, innermost first (at
    /// most `shownFrames`), and how many other frames precede each since the one before.
    private func ownFrames(images: [String], symbolizer: Symbolizer) -> (frames: [SourceFrame], folded: [Int]) {
        let frames = stackTrace.compactMap(StackFrame.init(line:))
        var located: [Int: SourceFrame] = [:]
        for image in images {
            let name = Self.fileName(image)
            let inImage = frames.filter { $0.image == name }
            // The runtime prints "<unavailable> + offset" from the image's start for a frame
            // without a dynamic symbol: any such frame gives the image's load address.
            guard let anchor = inImage.first(where: { $0.symbol == "<unavailable>" }), anchor.address >= anchor.offset else { continue }
            let base = anchor.address - anchor.offset
            // A return address points after the call: one byte back is the call's line.
            let offsets = inImage.map { $0.programCounter - base - ($0.index > 0 ? 1 : 0) }
            for (frame, source) in zip(inImage, symbolizer(image, offsets)) {
                if let source, source.line > 0, !Self.isSDKFile(source.file) { located[frame.index] = source }
            }
        }
        var own: [SourceFrame] = []
        var folded: [Int] = []
        var skipped = 0
        for frame in frames {
            guard own.count < Self.shownFrames else { break }
            if let source = located[frame.index] {
                own.append(source)
                folded.append(skipped)
                skipped = 0
            } else {
                skipped += 1
            }
        }
        return (own, folded)
    }

    /// A source file of BerthSDK, compiled into every Swift plugin (its package's
    /// `Sources/BerthSDK`, checked out by path or by URL).
    static func isSDKFile(_ path: String) -> Bool {
        path.contains("/Sources/BerthSDK/") || path.hasPrefix("Sources/BerthSDK/")
    }

    /// "/path/TrapScreen.swift:39 (discriminator 2)" → its path and line; nil for "??:0"
    /// and line 0.
    private static func sourceLine(_ located: String) -> (file: String, line: Int)? {
        let text = located.split(separator: " ").first.map(String.init) ?? located
        guard let colon = text.lastIndex(of: ":"), let number = Int(text[text.index(after: colon)...]), number > 0 else { return nil }
        let file = String(text[..<colon])
        return file.hasPrefix("??") ? nil : (file, number)
    }

    static func fileName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// Runs `addr2line -a -f -i` on the image and keeps, for each offset, the outermost
    /// location: the function the frame belongs to, not code inlined into it.
    static func addr2line(image: String, offsets: [UInt64]) -> [SourceFrame?] {
        guard !offsets.isEmpty, let tool = ["/usr/bin/addr2line", "/bin/addr2line"].first(where: FileManager.default.isExecutableFile) else {
            return offsets.map { _ in nil }
        }
        guard let text = runCapturingOutput(tool, ["-a", "-f", "-i", "-e", image] + offsets.map { "0x" + String($0, radix: 16) }) else {
            return offsets.map { _ in nil }
        }
        // Each offset: its "0x…" line, then a function and a location per inlining level,
        // innermost first.
        var results: [SourceFrame?] = []
        var function: String?
        for line in text.split(separator: "\n").map(String.init) {
            if line.hasPrefix("0x") {
                results.append(nil)
                function = nil
            } else if results.isEmpty {
                continue
            } else if let name = function {
                function = nil
                guard let place = sourceLine(line) else { continue }
                results[results.count - 1] = SourceFrame(function: name == "??" ? "" : SwiftSymbolName.readable(name), file: place.file, line: place.line)
            } else {
                function = line
            }
        }
        return results.count == offsets.count ? results : offsets.map { _ in nil }
    }

    /// Runs `tool` and returns its standard output. posix_spawn and waitpid, not
    /// Foundation's `Process`: its wait spins the run loop, and this runs on the main actor.
    private static func runCapturingOutput(_ tool: String, _ arguments: [String]) -> String? {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return nil }
        defer { close(pipeEnds[0]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        let argv = ([tool] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, tool, &actions, nil, argv, [nil])
        close(pipeEnds[1])
        guard spawned == 0 else { return nil }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
            if count > 0 { output += chunk[0..<count] } else if count < 0 && errno == EINTR { continue } else { break }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return String(decoding: output, as: UTF8.self)
    }
}

/// One line of the Swift runtime's "Current stack trace:":
/// "5    gen-1-libTasks.so    0x00007f0adb3cccae <unavailable> + 568494".
struct StackFrame: Equatable {
    var index: Int
    var image: String
    var address: UInt64
    var symbol: String
    var offset: UInt64

    /// Where the frame is: the runtime prints a frame it found a symbol for as the symbol's
    /// address plus the offset into it ("TrapScreen.handle(action:payload:) + 222"), and one
    /// without as the frame's own address ("<unavailable> + offset from the image's start").
    var programCounter: UInt64 { symbol == "<unavailable>" ? address : address + offset }

    init?(line: String) {
        let words = line.split(separator: " ", omittingEmptySubsequences: true)
        guard words.count >= 6, let index = Int(words[0]), words[2].hasPrefix("0x"),
              let address = UInt64(words[2].dropFirst(2), radix: 16),
              words[words.count - 2] == "+", let offset = UInt64(words[words.count - 1]) else { return nil }
        self.index = index
        image = String(words[1])
        self.address = address
        symbol = words[3..<(words.count - 2)].joined(separator: " ")
        self.offset = offset
    }
}
