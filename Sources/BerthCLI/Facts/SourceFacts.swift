@_spi(Engine) import BerthRuntime
import Foundation

/// The `@Persisted` keys a Swift package's sources state, read from the text.
///
/// `berth_describe_v1` learns keys by creating each screen and rendering its body once,
/// which reaches only the branches taken with no state and no rows: a `@Persisted` in a
/// view behind `if` or in a `ForEach` row is never created there. Swift cannot list the
/// views a branch might show without running it, and a macro would make every plugin
/// build swift-syntax, so `pack` also reads each `@Persisted("key")` literal from the
/// package's `Sources/`: the key is written there whatever branch its view sits in. A key
/// built at run time (not a literal) is still found only by the render.
enum SourceFacts {
    /// The literal keys of `@Persisted("…")` in the `.swift` files under `package/Sources`
    /// (only `Sources/<Name>/` for `libName.so` when that folder exists, so one plugin of a
    /// package of several does not list another's keys), sorted, outside `//` comments;
    /// empty when the package has no such folder.
    static func persistedKeys(inPackage package: String, library: String) -> [String] {
        var keys: Set<String> = []
        for text in sourceTexts(inPackage: package, library: library) { keys.formUnion(persistedKeys(inSource: text)) }
        return keys.sorted()
    }

    /// The capabilities the sources plainly use, each with the first use that shows it as
    /// a verb phrase: `context.run(` (tasks), `.push("other.plugin/…")` or `.present(` of
    /// another plugin's route (navigate.any), `.resolveService("other.plugin/…")`
    /// (services.consume; a plugin's own services need none), and sending or observing a
    /// route context (context). A hint for `pack`'s warnings, not a proof: a use it does
    /// not see is refused at run time.
    static func usedCapabilities(inPackage package: String, library: String, pluginID: String) -> [(capability: Capability, use: String)] {
        var found: [Capability: String] = [:]
        for text in sourceTexts(inPackage: package, library: library) {
            for line in text.split(separator: "\n") {
                let code = line.range(of: "//").map { line[..<$0.lowerBound] } ?? line[...]
                if code.contains("context.run(") { found[.tasks] = found[.tasks] ?? "calls context.run" }
                for (call, capability, verb) in [(".push(\"", Capability.navigateAny, "opens"), (".present(\"", .navigateAny, "opens"),
                                                 (".resolveService(\"", .servicesConsume, "resolves")] {
                    guard let start = code.range(of: call) else { continue }
                    let target = code[start.upperBound...].prefix { $0 != "\"" }
                    if let slash = target.firstIndex(of: "/"), target[..<slash] != pluginID {
                        found[capability] = found[capability] ?? "\(verb) \(target)"
                    }
                }
                for call in [".terminate(", ".context(", ".routerContext(", ".addContext("] where code.contains(call) {
                    found[.context] = found[.context] ?? "uses route context (\(call.dropFirst().dropLast()))"
                }
            }
        }
        return found.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The text of each `.swift` file of the library's target (see `persistedKeys`).
    private static func sourceTexts(inPackage package: String, library: String) -> [String] {
        var sources = (package as NSString).appendingPathComponent("Sources")
        var name = ((library as NSString).lastPathComponent as NSString).deletingPathExtension
        if name.hasPrefix("lib") { name.removeFirst(3) }
        let target = (sources as NSString).appendingPathComponent(name)
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: target, isDirectory: &isFolder), isFolder.boolValue { sources = target }
        guard let files = FileManager.default.enumerator(atPath: sources) else { return [] }
        return files.compactMap { file in
            guard let file = file as? String, file.hasSuffix(".swift") else { return nil }
            return try? String(contentsOfFile: (sources as NSString).appendingPathComponent(file), encoding: .utf8)
        }
    }

    /// The literal keys of `@Persisted("…")` (with or without `wrappedValue:` first) in one
    /// file's text, skipping `//` comment lines and interpolated keys.
    static func persistedKeys(inSource text: String) -> Set<String> {
        var keys: Set<String> = []
        for line in text.split(separator: "\n") {
            let code = line.range(of: "//").map { line[..<$0.lowerBound] } ?? line[...]
            var rest = code
            while let found = rest.range(of: "@Persisted") {
                rest = rest[found.upperBound...]
                guard let key = literalArgument(after: rest) else { continue }
                keys.insert(key)
            }
        }
        return keys
    }

    /// The key argument's literal: the last string literal among the arguments that
    /// follow (`("key")`, or `(wrappedValue: "a", "key")`), unless it interpolates or
    /// escapes; nil without one.
    private static func literalArgument(after text: Substring) -> String? {
        let trimmed = text.drop { $0 == " " }
        guard trimmed.first == "(" else { return nil }
        var depth = 0
        var literal: String?
        var last: String?
        for character in trimmed {
            if var current = literal {
                if character == "\"" {
                    last = depth == 1 ? current : last
                    literal = nil
                } else {
                    current.append(character)
                    literal = current
                }
                continue
            }
            switch character {
            case "(": depth += 1
            case ")":
                depth -= 1
                if depth == 0 { return last.flatMap { $0.isEmpty || $0.contains("\\") ? nil : $0 } }
            case "\"": literal = ""
            default: break
            }
        }
        return nil
    }
}
