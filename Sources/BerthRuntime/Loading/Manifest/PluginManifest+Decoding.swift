@_spi(Engine) import BerthCore
import Foundation

extension PluginManifest {
    /// The fields manifest v1 knows; anything else is a warning.
    static let knownFields: Set<String> = [
        "$schema", "id", "name", "version", "abi", "library", "entry", "runtime", "exports",
        "routes", "requires", "persist", "sha256", "description", "isolation",
        "capabilities", "files", "activation", "actions", "limits", "environment", "contracts",
    ]

    /// The sizes a manifest may have (Docs/manifest-errors.md): larger ones are refused with one
    /// line, before any list is walked.
    package enum Limits {
        /// Bytes of `plugin.json`.
        package static let fileBytes = 1_048_576
        /// Entries in one list (`routes`, `persist`, `exports`, `requires`).
        package static let listEntries = 4_096
        /// Characters of a quoted value in a problem line.
        static let quotedCharacters = 80
    }

    /// Decodes and checks a manifest, collecting one problem per broken rule.
    ///
    /// Returns the manifest when no rule is broken (warnings may still be present), else nil.
    /// Every problem names `path` and the field, so `berth validate` can print it as is.
    package static func decode(_ data: Data, path: String) -> (manifest: PluginManifest?, problems: [PluginProblem]) {
        var reader = ManifestReader(path: path)
        guard data.count <= Limits.fileBytes else {
            reader.fail("file", "is \(data.count) bytes; a manifest may have at most \(Limits.fileBytes)")
            return (nil, reader.problems)
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            reader.fail("json", "invalid JSON: \(jsonErrorText(error, in: data))")
            return (nil, reader.problems)
        }
        guard let fields = object as? [String: Any] else {
            reader.fail("json", "the manifest must be a JSON object")
            return (nil, reader.problems)
        }
        for unknown in fields.keys.filter({ !knownFields.contains($0) }).sorted() {
            reader.warn(unknown, "unknown field (ignored by manifest v1)")
        }
        let manifest = reader.read(fields)
        return (reader.problems.hasErrors ? nil : manifest, reader.problems)
    }

    /// The parser's message, with its byte offset ("around character 31") given as the
    /// line and column an editor shows.
    private static func jsonErrorText(_ error: Error, in data: Data) -> String {
        let nsError = error as NSError
        var detail = nsError.userInfo[NSDebugDescriptionErrorKey] as? String ?? nsError.localizedDescription
        let offsetText = #/ around character (\d+)/#
        let offset = (nsError.userInfo["NSJSONSerializationErrorIndex"] as? Int)
            ?? detail.firstMatch(of: offsetText).flatMap { Int($0.1) }
            ?? (detail.contains("end of file") ? data.count : nil)
        guard let offset else { return detail }
        detail = detail.replacing(offsetText, with: "")
        if detail.hasSuffix(".") { detail.removeLast() }
        let (line, column) = lineAndColumn(of: offset, in: data)
        return "line \(line), column \(column): \(detail)"
    }

    /// 1-based line and column (in characters) of byte `offset` in UTF-8 `data`.
    static func lineAndColumn(of offset: Int, in data: Data) -> (line: Int, column: Int) {
        let before = data.prefix(max(0, min(offset, data.count)))
        let line = before.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { before.index(after: $0) } ?? before.startIndex
        return (line, String(decoding: before[lineStart...], as: UTF8.self).count + 1)
    }
}
