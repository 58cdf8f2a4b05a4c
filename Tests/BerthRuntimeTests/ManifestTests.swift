import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// A valid manifest to break one field at a time.
private var validManifest: [String: Any] { [
    "id": "com.example.sample", "name": "Sample", "version": "1.2.3", "abi": "1.0",
    "library": "libSample.so", "entry": "sample_entry_v1", "runtime": "c",
    "routes": ["main"],
    "exports": [["symbol": "sample_add", "params": ["int32", "int32"], "returns": "int32"]],
    "requires": ["com.example.base": "^1.0.0"],
    "sha256": String(repeating: "ab", count: 32),
] }

private func decode(_ fields: [String: Any]) -> (PluginManifest?, [PluginProblem]) {
    let data = try! JSONSerialization.data(withJSONObject: fields)
    return PluginManifest.decode(data, path: "x/plugin.json")
}

/// One broken rule: what to change, which field must be named, what the message says.
struct BrokenRule: CustomTestStringConvertible, Sendable {
    let name: String
    let field: String
    let message: String
    let edit: @Sendable (inout [String: Any]) -> Void
    var testDescription: String { name }
}

private let brokenRules: [BrokenRule] = [
    BrokenRule(name: "missing id", field: "id", message: "is required") { $0["id"] = nil },
    BrokenRule(name: "id not reverse-DNS", field: "id", message: "is not a reverse-DNS id") { $0["id"] = "Counter" },
    BrokenRule(name: "id not a string", field: "id", message: "must be a string") { $0["id"] = 7 },
    BrokenRule(name: "empty name", field: "name", message: "is not a non-empty name") { $0["name"] = "" },
    BrokenRule(name: "version not semver", field: "version", message: "'1.2' is not a semantic version") { $0["version"] = "1.2" },
    BrokenRule(name: "abi malformed", field: "abi", message: "'one' is not an ABI version") { $0["abi"] = "one" },
    BrokenRule(name: "abi too new", field: "abi", message: "ABI 2.0 is newer than this host supports (1.x)") { $0["abi"] = "2.0" },
    BrokenRule(name: "abi too old", field: "abi", message: "ABI 0.9 is older than this host supports (1.x)") { $0["abi"] = "0.9" },
    BrokenRule(name: "library absolute", field: "library", message: "is an absolute path") { $0["library"] = "/usr/lib/libx.so" },
    BrokenRule(name: "library escapes", field: "library", message: "leaves the plugin folder") { $0["library"] = "../other/libx.so" },
    BrokenRule(name: "entry not a symbol", field: "entry", message: "is not a C symbol name") { $0["entry"] = "9entry" },
    BrokenRule(name: "unknown runtime", field: "runtime", message: "'rust' is not a runtime") { $0["runtime"] = "rust" },
    BrokenRule(name: "exports not an array", field: "exports", message: "must be an array") { $0["exports"] = "sample_add" },
    BrokenRule(name: "export symbol invalid", field: "exports[0].symbol", message: "must be a C symbol name") {
        $0["exports"] = [["symbol": "bad symbol", "returns": "void"]]
    },
    BrokenRule(name: "export param void", field: "exports[0].params[0]", message: "'void' is not a parameter type") {
        $0["exports"] = [["symbol": "f", "params": ["void"], "returns": "void"]]
    },
    BrokenRule(name: "export param unknown", field: "exports[0].params[1]", message: "'int128' is not a parameter type") {
        $0["exports"] = [["symbol": "f", "params": ["int8", "int128"], "returns": "void"]]
    },
    BrokenRule(name: "export result unknown", field: "exports[0].returns", message: "'char' is not a result type") {
        $0["exports"] = [["symbol": "f", "params": [], "returns": "char"]]
    },
    BrokenRule(name: "export declared twice", field: "exports[1].symbol", message: "'f' is declared twice") {
        $0["exports"] = [["symbol": "f", "returns": "void"], ["symbol": "f", "returns": "void"]]
    },
    BrokenRule(name: "route name invalid", field: "routes[0]", message: "is not a route name") { $0["routes"] = ["has space"] },
    BrokenRule(name: "route listed twice", field: "routes[1]", message: "'main' is listed twice") { $0["routes"] = ["main", "main"] },
    BrokenRule(name: "requires not an object", field: "requires", message: "must be an object") { $0["requires"] = ["com.a.b"] },
    BrokenRule(name: "requires bad id", field: "requires.Base", message: "is not a reverse-DNS plugin id") { $0["requires"] = ["Base": "^1.0.0"] },
    BrokenRule(name: "requires bad range", field: "requires.com.example.base", message: "invalid version range") {
        $0["requires"] = ["com.example.base": "about one"]
    },
    BrokenRule(name: "sha256 not hex", field: "sha256", message: "64 lower-case hexadecimal digits") { $0["sha256"] = "XYZ" },
    BrokenRule(name: "persist not strings", field: "persist[0]", message: "is not a non-empty key") { $0["persist"] = [""] },
    BrokenRule(name: "actions not an object", field: "actions", message: "must be an object mapping routes") { $0["actions"] = ["go"] },
    BrokenRule(name: "actions for a route not listed", field: "actions.other",
               message: "'other' is not a route this manifest lists (routes: main)") { $0["actions"] = ["other": ["go"]] },
    BrokenRule(name: "actions of a route not a list", field: "actions.main", message: "must be an array") { $0["actions"] = ["main": "go"] },
    BrokenRule(name: "action name invalid", field: "actions.main[1]", message: "'#go' is not an action name") {
        $0["actions"] = ["main": ["stop", "#go"]]
    },
    BrokenRule(name: "action listed twice", field: "actions.main[1]", message: "'go' is listed twice") {
        $0["actions"] = ["main": ["go", ["name": "go", "summary": "again"]]]
    },
    BrokenRule(name: "action object without a name", field: "actions.main[0].name", message: "(missing) is not an action name") {
        $0["actions"] = ["main": [["summary": "nameless"]]]
    },
    BrokenRule(name: "action summary of two lines", field: "actions.main[0].summary", message: "must be one line of text") {
        $0["actions"] = ["main": [["name": "go", "summary": "one\ntwo"]]]
    },
]

@Suite("Manifest v1")
struct ManifestTests {
    @Test("a valid manifest decodes every field")
    func validManifestDecodes() throws {
        let (manifest, problems) = decode(validManifest)
        #expect(problems.isEmpty)
        let decoded = try #require(manifest)
        #expect(decoded.id == "com.example.sample")
        #expect(decoded.version == SemanticVersion("1.2.3"))
        #expect(decoded.abi == ABIVersion(major: 1, minor: 0))
        #expect(decoded.runtime == .c)
        #expect(decoded.exports == [ExportSignature(symbol: "sample_add", params: [.int32, .int32], returns: .int32)])
        #expect(decoded.requires.map(\.id) == ["com.example.base"])
        #expect(decoded.requires.first?.range.contains(SemanticVersion("1.4.0")!) == true)
        #expect(decoded.routes == ["main"])
    }

    @Test("each broken rule is reported with its field and message", arguments: brokenRules)
    func brokenRuleIsReported(_ rule: BrokenRule) {
        var fields = validManifest
        rule.edit(&fields)
        let (manifest, problems) = decode(fields)
        #expect(manifest == nil)
        let errors = problems.filter { $0.severity == .error }
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?.field == rule.field)
        #expect(errors.first?.message.contains(rule.message) == true, "\(errors.first?.message ?? "none")")
        #expect(errors.first?.description.hasPrefix("x/plugin.json: \(rule.field): ") == true)
    }

    @Test("actions decode per route, as names or {name, summary}; a route without them declares none")
    func actionsDecode() throws {
        var fields = validManifest
        fields["routes"] = ["main", "about"]
        fields["actions"] = ["main": ["go", ["name": "stop", "summary": "Stops it"]]]
        let (manifest, problems) = decode(fields)
        #expect(problems.isEmpty, "\(problems)")
        let decoded = try #require(manifest)
        #expect(decoded.declaredActions(of: "main") == [DeclaredAction(name: "go"), DeclaredAction(name: "stop", summary: "Stops it")])
        #expect(decoded.declaredActions(of: "about").isEmpty)
    }

    @Test("invalid JSON is one error naming the file")
    func invalidJSON() {
        let (manifest, problems) = PluginManifest.decode(Data("{\"id\": ".utf8), path: "p/plugin.json")
        #expect(manifest == nil)
        #expect(problems.count == 1)
        #expect(problems.first?.field == "json")
        #expect(problems.first?.description.hasPrefix("p/plugin.json: json: invalid JSON") == true)
    }

    @Test("invalid JSON names the line and column where the parser stopped")
    func invalidJSONPosition() {
        let text = "{\n  \"id\": \"com.x.y\",\n  \"name\": oops\n}\n"
        let (_, problems) = PluginManifest.decode(Data(text.utf8), path: "p/plugin.json")
        #expect(problems.first?.message.hasPrefix("invalid JSON: line 3, column 11: ") == true, "\(problems)")
        let (_, truncated) = PluginManifest.decode(Data("{\"id\": \"é\",\n \"a\": [1,".utf8), path: "p/plugin.json")
        #expect(truncated.first?.message.hasPrefix("invalid JSON: line 2, column 10: ") == true, "\(truncated)")
    }

    @Test("a JSON array is not a manifest")
    func notAnObject() {
        let (manifest, problems) = PluginManifest.decode(Data("[1]".utf8), path: "p/plugin.json")
        #expect(manifest == nil)
        #expect(problems.map(\.message) == ["the manifest must be a JSON object"])
    }

    @Test("unknown fields are warnings and the manifest still decodes")
    func unknownFieldsWarn() throws {
        var fields = validManifest
        fields["colour"] = "blue"
        fields["exports"] = [["symbol": "f", "returns": "void", "doc": "x"]]
        let (manifest, problems) = decode(fields)
        #expect(manifest != nil)
        #expect(problems.map(\.field) == ["colour", "exports[0].doc"])
        #expect(problems.allSatisfy { $0.severity == .warning })
        #expect(problems.first?.description == "x/plugin.json: colour: warning: unknown field (ignored by manifest v1)")
    }

    @Test("several broken rules are all reported in one pass")
    func severalProblems() {
        var fields = validManifest
        fields["id"] = "x"
        fields["version"] = "one"
        fields["runtime"] = "go"
        let (_, problems) = decode(fields)
        #expect(problems.map(\.field) == ["id", "version", "runtime"])
    }

    @Test("the published JSON Schema names every field the decoder knows")
    func schemaMatchesDecoder() throws {
        let data = try #require(FileManager.default.contents(atPath: BuildProducts.manifest("berth-manifest.schema.json")))
        let schema = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let properties = try #require(schema["properties"] as? [String: Any])
        #expect(Set(properties.keys) == PluginManifest.knownFields)
        let required = try #require(schema["required"] as? [String])
        #expect(Set(required) == ["id", "name", "version", "abi", "library", "entry", "runtime"])
    }
}

@Suite("Manifest limits")
struct ManifestLimitTests {
    @Test("a list over the limit is one problem naming the field and both counts")
    func longList() {
        var fields = validManifest
        fields["routes"] = (0..<5_000).map { "r\($0)" }
        let (manifest, problems) = decode(fields)
        #expect(manifest == nil)
        #expect(problems.map(\.description) == ["x/plugin.json: routes: has 5000 entries; at most 4096 are allowed"])
    }

    @Test("4,096 routes and keys decode, and a repeated one is found")
    func manyEntries() throws {
        var fields = validManifest
        fields["routes"] = (0..<4_096).map { "r\($0)" }
        fields["persist"] = (0..<4_095).map { "k\($0)" } + ["k7"]
        let (manifest, problems) = decode(fields)
        #expect(manifest == nil)
        #expect(problems.map(\.description) == ["x/plugin.json: persist[4095]: 'k7' is listed twice"])
    }

    @Test("a huge quoted value is cut to a readable length")
    func hugeValue() {
        var fields = validManifest
        fields["id"] = String(repeating: "X", count: 1_000_000)
        let (_, problems) = decode(fields)
        let line = problems.first?.description ?? ""
        #expect(line.count < 300, "\(line.count) characters")
        #expect(line.contains("(1000000 characters)"))
    }

    @Test("a manifest file over 1 MiB is refused before it is parsed")
    func hugeFile() {
        let data = Data(repeating: UInt8(ascii: " "), count: PluginManifest.Limits.fileBytes + 1)
        let (manifest, problems) = PluginManifest.decode(data, path: "x/plugin.json")
        #expect(manifest == nil)
        #expect(problems.map(\.description) == ["x/plugin.json: file: is 1048577 bytes; a manifest may have at most 1048576"])
    }
}
