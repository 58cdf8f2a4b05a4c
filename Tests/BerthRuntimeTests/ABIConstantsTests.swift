import CBerth
import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// berth.h defines the status codes, capability names and view-input actions once; every
/// other place that spells them (the host, the Swift SDK, the manifest schema, the docs)
/// must agree with it.
@Suite("berth.h's status codes, capability names and view-input actions, as every other place spells them")
struct ABIConstantsTests {
    /// berth.h's capability names, in the header's order.
    private let headerCapabilities = [
        BERTH_CAPABILITY_NAVIGATE, BERTH_CAPABILITY_NAVIGATE_ANY, BERTH_CAPABILITY_CONTEXT, BERTH_CAPABILITY_DELEGATE,
        BERTH_CAPABILITY_STATE_PERSIST, BERTH_CAPABILITY_SESSION, BERTH_CAPABILITY_SERVICES_PROVIDE,
        BERTH_CAPABILITY_SERVICES_CONSUME, BERTH_CAPABILITY_TASKS, BERTH_CAPABILITY_FILES_READ,
        BERTH_CAPABILITY_FILES_WRITE, BERTH_CAPABILITY_NETWORK,
    ]

    @Test("the host's refusal codes are berth.h's status codes")
    func refusalCodes() {
        let codes: [(HostRefusal.Code, Int32)] = [
            (.invalidArgument, Int32(BERTH_ERR_INVALID_ARGUMENT)), (.notFound, Int32(BERTH_ERR_NOT_FOUND)),
            (.unsupported, Int32(BERTH_ERR_UNSUPPORTED)), (.state, Int32(BERTH_ERR_STATE)), (.failed, Int32(BERTH_ERR_FAILED)),
            (.cancelled, Int32(BERTH_ERR_CANCELLED)), (.decode, Int32(BERTH_ERR_DECODE)), (.denied, Int32(BERTH_ERR_DENIED)),
        ]
        for (code, header) in codes { #expect(code.rawValue == header, "\(code)") }
    }

    @Test("the SDK's BerthError.Code cases follow berth.h's codes from 1, in order")
    func sdkCodes() throws {
        let source = try String(contentsOfFile: BuildProducts.packageRoot + "/BerthSDK/Sources/BerthSDK/Screen.swift", encoding: .utf8)
        let body = try #require(source.components(separatedBy: "public enum Code: Int32, Sendable {").dropFirst().first)
        let declared = body.prefix { $0 != "}" }.split(separator: "\n")
            .filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("case ") }
            .flatMap { $0.trimmingCharacters(in: .whitespaces).dropFirst(5).split(separator: ",") }
            .map { $0.split(separator: "=").first!.trimmingCharacters(in: .whitespaces) }
        #expect(declared == ["invalidArgument", "notFound", "unsupported", "state", "failed", "cancelled", "decode", "denied"])
        #expect(body.contains("case invalidArgument = 1,"), "the SDK's codes must start at berth.h's 1")
        #expect(Int32(BERTH_ERR_DENIED) == Int32(declared.count))
    }

    @Test("the host's capabilities are berth.h's names")
    func hostCapabilities() {
        #expect(Capability.allCases.map(\.rawValue) == headerCapabilities)
    }

    @Test("the SDK's capabilities and the manifest schema's are berth.h's names")
    func sdkAndSchemaCapabilities() throws {
        let source = try String(contentsOfFile: BuildProducts.packageRoot + "/BerthSDK/Sources/BerthSDK/Capability.swift", encoding: .utf8)
        let sdk = source.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("case ") }
            .map { line -> String in
                let parts = line.dropFirst(5).components(separatedBy: " = ")
                return parts.count == 2 ? parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : parts[0]
            }
        #expect(sdk == headerCapabilities)
        let schemaData = try Data(contentsOf: URL(fileURLWithPath: BuildProducts.packageRoot + "/manifests/berth-manifest.schema.json"))
        let schema = try #require(JSONSerialization.jsonObject(with: schemaData) as? [String: Any])
        let properties = try #require(schema["properties"] as? [String: Any])
        let capabilities = try #require(properties["capabilities"] as? [String: Any])
        let items = try #require(capabilities["items"] as? [String: Any])
        #expect(items["enum"] as? [String] == headerCapabilities)
    }

    @Test("the docs' status-code table and capability table are berth.h's")
    func docsTables() throws {
        let abi = try String(contentsOfFile: BuildProducts.packageRoot + "/Docs/abi.md", encoding: .utf8)
        let statusRows = Self.tableRows(of: abi, after: "## Status codes").map { "\($0[0]) \($0[1])" }
        let statuses: [(String, Int32)] = [
            ("BERTH_OK", Int32(BERTH_OK)), ("BERTH_ERR_INVALID_ARGUMENT", Int32(BERTH_ERR_INVALID_ARGUMENT)),
            ("BERTH_ERR_NOT_FOUND", Int32(BERTH_ERR_NOT_FOUND)), ("BERTH_ERR_UNSUPPORTED", Int32(BERTH_ERR_UNSUPPORTED)),
            ("BERTH_ERR_STATE", Int32(BERTH_ERR_STATE)), ("BERTH_ERR_FAILED", Int32(BERTH_ERR_FAILED)),
            ("BERTH_ERR_CANCELLED", Int32(BERTH_ERR_CANCELLED)), ("BERTH_ERR_DECODE", Int32(BERTH_ERR_DECODE)),
            ("BERTH_ERR_DENIED", Int32(BERTH_ERR_DENIED)), ("BERTH_ERR_UNAVAILABLE", Int32(BERTH_ERR_UNAVAILABLE)),
            ("BERTH_ERR_CRASHED", Int32(BERTH_ERR_CRASHED)), ("BERTH_ERR_TIMED_OUT", Int32(BERTH_ERR_TIMED_OUT)),
        ]
        #expect(statusRows == statuses.map { "\($0.1) `\($0.0)`" }, "Docs/abi.md's status table")
        let security = try String(contentsOfFile: BuildProducts.packageRoot + "/Docs/security.md", encoding: .utf8)
        let capabilityRows = Self.tableRows(of: security, after: "## Capabilities").map(\.[0])
        #expect(capabilityRows == headerCapabilities.map { "`\($0)`" }, "Docs/security.md's capability table")
    }

    /// berth.h's view-input actions, in the header's order, by constant name.
    private let headerInputs: [(constant: String, name: String)] = [
        ("BERTH_INPUT_TAP", BERTH_INPUT_TAP), ("BERTH_INPUT_TOGGLE", BERTH_INPUT_TOGGLE), ("BERTH_INPUT_TYPE", BERTH_INPUT_TYPE),
        ("BERTH_INPUT_STEP", BERTH_INPUT_STEP), ("BERTH_INPUT_SELECT", BERTH_INPUT_SELECT),
    ]

    @Test("the view-input actions agree across berth.h, the host's ViewInput, the SDK and Docs/view-tree-format.md")
    func viewInputKinds() throws {
        // The host: one ViewInput per kind (the switch makes a new case fail to compile here).
        let samples: [ViewInput] = [.tap, .toggle, .type(""), .step(.up), .select(0)]
        for sample in samples {
            switch sample { case .tap, .toggle, .type, .step, .select: break }
        }
        #expect(samples.map(\.actionName) == headerInputs.map(\.name))
        #expect(headerInputs.allSatisfy { $0.name.hasPrefix(BERTH_INPUT_PREFIX) })
        // The SDK decodes with berth.h's constants and spells no action name itself.
        let sdk = try String(contentsOfFile: BuildProducts.packageRoot + "/BerthSDK/Sources/BerthSDK/Views/ViewInputAction.swift", encoding: .utf8)
        for input in headerInputs { #expect(sdk.contains("case (\(input.constant),"), "the SDK handles \(input.constant)") }
        #expect(sdk.contains("berth_input_split(") && !sdk.contains("\"berth."), "the SDK splits with berth.h and spells no name")
        // The docs' table: constant, action name, in berth.h's order.
        let page = try String(contentsOfFile: BuildProducts.packageRoot + "/Docs/view-tree-format.md", encoding: .utf8)
        let rows = Self.tableRows(of: page, after: "## Input").map { "\($0[0]) \($0[1])" }
        #expect(rows == headerInputs.map { "`\($0.constant)` `\($0.name)`" }, "Docs/view-tree-format.md's input table")
    }

    /// The cells of the first Markdown table after the line starting with `heading`, header
    /// and rule rows left out.
    private static func tableRows(of page: String, after heading: String) -> [[String]] {
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasPrefix(heading) }) else { return [] }
        let table = lines[(start + 1)...].drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }
        return table.dropFirst(2).map { row in
            row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }
}
