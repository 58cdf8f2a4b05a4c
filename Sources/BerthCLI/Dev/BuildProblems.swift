import BerthRuntime
import Foundation

/// What `berth dev`'s last build left to fix, for a front end that shows it in place
/// (`berth dev --tui`'s problems panel): the compiler's errors, each with its file and
/// line, or nothing after a good build. The dev loop posts from its thread; the front end
/// is told on the main actor.
final class BuildProblems: Sendable {
    private let state = Locked<(lines: [String]?, observer: (@MainActor @Sendable ([String]?) -> Void)?)>((nil, nil))

    /// Calls `observer` on the main actor with the problems now and at every change.
    func observe(_ observer: @escaping @MainActor @Sendable ([String]?) -> Void) {
        let now = state.withLock { state in
            state.observer = observer
            return state.lines
        }
        Task { @MainActor in observer(now) }
    }

    /// A build of the package in `folder` failed with `output` (`build` the command that
    /// ran, as shown).
    func buildFailed(output: String, build: String, folder: String) {
        post(Self.lines(output: output, build: build, folder: folder))
    }

    /// A build succeeded: the panel goes.
    func buildSucceeded() {
        post(nil)
    }

    private func post(_ lines: [String]?) {
        let observer = state.withLock { state in
            state.lines = lines
            return state.observer
        }
        guard let observer else { return }
        Task { @MainActor in observer(lines) }
    }

    /// The heading, then the compiler's error lines ("Sources/Hello/Hello.swift:12:5: error: …",
    /// each once, paths from the package's `folder`); when it wrote none that names a file (a
    /// linker's failure, a missing tool), its last lines.
    static func lines(output: String, build: String, folder: String) -> [String] {
        let prefix = URL(fileURLWithPath: folder).standardizedFileURL.path + "/"
        let all = output.split(separator: "\n", omittingEmptySubsequences: true).map { line in
            line.hasPrefix(prefix) ? String(line.dropFirst(prefix.count)) : String(line)
        }
        var errors: [String] = []
        for line in all where isLocatedError(line) && !errors.contains(line) { errors.append(line) }
        let heading = errors.isEmpty
            ? "build failed (\(build))"
            : "build failed (\(build)): \(errors.count) error\(errors.count == 1 ? "" : "s")"
        return [heading] + (errors.isEmpty ? Array(all.suffix(8)) : errors)
    }

    /// "FILE:LINE:COLUMN: error: MESSAGE" (swiftc, clang, gcc).
    static func isLocatedError(_ line: String) -> Bool {
        guard let marker = line.range(of: ": error: ") else { return false }
        let location = line[..<marker.lowerBound].split(separator: ":")
        return location.count >= 3 && location.suffix(2).allSatisfy { Int($0) != nil }
    }
}
