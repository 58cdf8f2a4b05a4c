import Foundation

/// A stored frame: `Frames/<name>.txt` in the folder of the test file, in `Frame.golden`'s
/// format (the text, `--- styles`, the style mask).
struct GoldenFrame {
    let path: String
    /// The path as an error names it, from the test file's folder (the error names the test
    /// file and line first).
    let shown: String

    init(name: String, besides testFile: String) {
        shown = "Frames/\(name).txt"
        path = ((testFile as NSString).deletingLastPathComponent as NSString).appendingPathComponent(shown)
    }

    /// Passes when `frame` matches the file; else throws naming the first line that differs.
    /// Records the frame (and fails) when the file is missing or recording is asked for.
    func check(_ frame: Frame) throws(BerthTestingError) {
        let recording = ProcessInfo.processInfo.environment["BERTH_UPDATE_FRAMES"] == "1"
        guard !recording, let stored = try? String(contentsOfFile: path, encoding: .utf8) else {
            do {
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try frame.golden.write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                throw BerthTestingError("\(path): cannot write the golden frame: \(error)")
            }
            throw BerthTestingError("recorded this frame in \(shown) (\(recording ? "BERTH_UPDATE_FRAMES=1" : "there was none")); look at it, then run again")
        }
        guard stored != frame.golden else { return }
        let expected = stored.components(separatedBy: "\n")
        let actual = frame.golden.components(separatedBy: "\n")
        let line = (0..<min(expected.count, actual.count)).first { expected[$0] != actual[$0] } ?? min(expected.count, actual.count)
        let want = expected.indices.contains(line) ? expected[line] : "(end of file)"
        let got = actual.indices.contains(line) ? actual[line] : "(end of frame)"
        throw BerthTestingError("the frame differs from \(shown), line \(line + 1): expected '\(want)', got '\(got)' (BERTH_UPDATE_FRAMES=1 rewrites it)")
    }
}
