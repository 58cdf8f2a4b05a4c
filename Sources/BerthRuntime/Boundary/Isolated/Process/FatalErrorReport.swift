import Foundation

/// A Swift runtime fatal error as a worker printed it: the line
/// ("Swift/Array.swift:1350: Fatal error: Index out of range") and the stack frames of its
/// "Current stack trace:". A trap inside the standard library names the library's file;
/// `located(in:)` names the plugin's own line instead, found from the first frame in a
/// plugin image that its debug information places in a source file.
struct FatalErrorReport: Sendable, Equatable {
    var line: String
    var stackTrace: [String]

    /// Looks up "file:line" for offsets into an image (one result per offset, nil where
    /// the image has no line for it). `addr2line` by default.
    typealias Symbolizer = (_ image: String, _ offsets: [UInt64]) -> [String?]

    /// The fatal line, or, when its file is not the plugin's, the plugin's file and line
    /// before the message: "TrapScreen.swift:39: Fatal error: Index out of range".
    /// `images` are the plugin images the worker loaded (their frames are looked up);
    /// the line is unchanged when none has line information (a release build, no
    /// `addr2line`).
    func located(in images: [String], symbolizer: Symbolizer = Self.addr2line) -> String {
        guard let marker = line.range(of: "Fatal error") else { return line }
        let message = line[marker.lowerBound...]
        let reportedFile = line[..<marker.lowerBound].split(separator: ":").first.map { Self.fileName(String($0)) }
        guard let site = pluginSite(images: images, symbolizer: symbolizer), Self.fileName(site.file) != reportedFile else {
            return line
        }
        return "\(Self.fileName(site.file)):\(site.line): \(message)"
    }

    /// The first frame in one of `images` that has a source line.
    private func pluginSite(images: [String], symbolizer: Symbolizer) -> (file: String, line: Int)? {
        let frames = stackTrace.compactMap(StackFrame.init(line:))
        for image in images {
            let name = Self.fileName(image)
            let inImage = frames.filter { $0.image == name }
            // The runtime prints "<unavailable> + offset" from the image's start for a frame
            // without a dynamic symbol: any such frame gives the image's load address.
            guard let anchor = inImage.first(where: { $0.symbol == "<unavailable>" }), anchor.address >= anchor.offset else { continue }
            let base = anchor.address - anchor.offset
            // A return address points after the call: one byte back is the call's line.
            let offsets = inImage.map { $0.address - base - ($0.index > 0 ? 1 : 0) }
            let found = symbolizer(image, offsets).compactMap { $0.flatMap(Self.sourceLine) }
            if let first = found.first { return first }
        }
        return nil
    }

    /// "/path/TrapScreen.swift:39 (discriminator 2)" → its path and line; nil for "??:0"
    /// and line 0.
    private static func sourceLine(_ located: String) -> (file: String, line: Int)? {
        let text = located.split(separator: " ").first.map(String.init) ?? located
        guard let colon = text.lastIndex(of: ":"), let number = Int(text[text.index(after: colon)...]), number > 0 else { return nil }
        let file = String(text[..<colon])
        return file.hasPrefix("??") ? nil : (file, number)
    }

    private static func fileName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// Runs `addr2line -a -i` on the image and keeps, for each offset, the outermost
    /// location: the function the frame belongs to, not code inlined into it.
    static func addr2line(image: String, offsets: [UInt64]) -> [String?] {
        guard !offsets.isEmpty, let tool = ["/usr/bin/addr2line", "/bin/addr2line"].first(where: FileManager.default.isExecutableFile) else {
            return offsets.map { _ in nil }
        }
        guard let text = runCapturingOutput(tool, ["-a", "-i", "-e", image] + offsets.map { "0x" + String($0, radix: 16) }) else {
            return offsets.map { _ in nil }
        }
        // Each offset: its "0x…" line, then its locations, innermost first.
        var results: [String?] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("0x") {
                results.append(nil)
            } else if !results.isEmpty {
                results[results.count - 1] = String(line)
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
