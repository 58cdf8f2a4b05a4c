@_spi(Engine) import BerthCore
import Foundation

/// Field-by-field reader that records a problem for each broken rule and keeps going, so one
/// `validate` run lists everything wrong with a manifest.
struct ManifestReader {
    let path: String
    var problems: [PluginProblem] = []

    init(path: String) { self.path = path }

    /// A value as a problem line quotes it: in single quotes, cut to a readable length.
    func quoted(_ value: Any) -> String {
        let text = "\(value)"
        let limit = PluginManifest.Limits.quotedCharacters
        guard text.count > limit else { return "'\(text)'" }
        return "'\(text.prefix(limit))…' (\(text.count) characters)"
    }

    mutating func fail(_ field: String, _ message: String) {
        problems.append(PluginProblem(path: path, field: field, message: message))
    }

    mutating func warn(_ field: String, _ message: String) {
        problems.append(PluginProblem(path: path, field: field, message: message, severity: .warning))
    }

    mutating func read(_ fields: [String: Any]) -> PluginManifest? {
        let id = requiredString(fields, "id", rule: ManifestNames.isReverseDNS, expected: "a reverse-DNS id such as com.example.counter")
        let name = requiredString(fields, "name", rule: { !$0.isEmpty }, expected: "a non-empty name")
        let versionText = requiredString(fields, "version", rule: { _ in true }, expected: "")
        var version: SemanticVersion?
        if let versionText {
            version = SemanticVersion(versionText)
            if version == nil { fail("version", "\(quoted(versionText)) is not a semantic version (MAJOR.MINOR.PATCH)") }
        }
        let abi = readABI(fields)
        let library = readLibrary(fields)
        let entry = requiredString(fields, "entry", rule: ManifestNames.isCIdentifier, expected: "a C symbol name")
        let runtime = readRuntime(fields)
        let exports = readExports(fields)
        let routes = readStringList(fields, "routes", rule: ManifestNames.isRouteName, expected: "a route name of letters, digits, '-', '_' or '.'")
        let persist = readStringList(fields, "persist", rule: { !$0.isEmpty }, expected: "a non-empty key")
        let requires = readRequires(fields)
        let sha256 = readSHA256(fields)
        let description = optionalString(fields, "description")
        let (isolation, isolationGroup) = readIsolation(fields)
        let capabilities = readCapabilities(fields)
        let files = readFiles(fields, capabilities: capabilities ?? Capability.undeclaredDefault)
        if isolation == .inProcess, let capabilities {
            for grant in capabilities.sorted() where grant.isSandboxGrant {
                warn("capabilities", "'\(grant.rawValue)' cannot be enforced for a plugin that runs in-process (it has the host's own file and network access); run it with \"isolation\": \"process\"")
            }
        }
        let activation = readActivation(fields)
        let actions = readActions(fields, routes: routes)
        let limits = readLimits(fields)
        let environment = readEnvironment(fields)
        let contracts = readContracts(fields)
        if isolation == .inProcess, limits.memory != nil {
            warn("limits.memory", "cannot be enforced for a plugin that runs in-process (it shares the host's memory); run it with \"isolation\": \"process\"")
        }

        guard let id, let name, let version, let abi, let library, let entry, let runtime else { return nil }
        var manifest = PluginManifest(
            id: id, name: name, version: version, abi: abi, library: library, entry: entry,
            runtime: runtime, exports: exports, routes: routes, requires: requires,
            persist: persist, sha256: sha256, description: description, isolation: isolation, isolationGroup: isolationGroup,
            capabilities: capabilities, files: files, activation: activation, actions: actions
        )
        manifest.limits = limits
        manifest.environment = environment
        manifest.contracts = contracts
        return manifest
    }

    // MARK: Fields

    private mutating func readABI(_ fields: [String: Any]) -> ABIVersion? {
        guard let text = requiredString(fields, "abi", rule: { _ in true }, expected: "") else { return nil }
        guard let abi = ABIVersion(text) else {
            fail("abi", "\(quoted(text)) is not an ABI version (MAJOR.MINOR, such as \"1.0\")")
            return nil
        }
        guard abi.major == HostABI.version.major else {
            let relation = abi.major > HostABI.version.major ? "newer" : "older"
            fail("abi", "ABI \(abi) is \(relation) than this host supports (\(HostABI.supportedRange))")
            return nil
        }
        return abi
    }

    private mutating func readLibrary(_ fields: [String: Any]) -> String? {
        guard let library = requiredString(fields, "library", rule: { !$0.isEmpty }, expected: "a library file name") else {
            return nil
        }
        if library.hasPrefix("/") {
            fail("library", "\(quoted(library)) is an absolute path; it must be relative to the plugin folder")
            return nil
        }
        if library.split(separator: "/").contains("..") {
            fail("library", "\(quoted(library)) leaves the plugin folder ('..' is not allowed)")
            return nil
        }
        return library
    }

    private mutating func readRuntime(_ fields: [String: Any]) -> PluginRuntimeKind? {
        guard let text = requiredString(fields, "runtime", rule: { _ in true }, expected: "") else { return nil }
        guard let runtime = PluginRuntimeKind(rawValue: text) else {
            fail("runtime", "\(quoted(text)) is not a runtime (expected \"swift\" or \"c\")")
            return nil
        }
        return runtime
    }

    /// `"process"`, `"in-process"`, or `{"group": NAME}` (a worker shared with the group's
    /// other members; the mode stays the host's default). Returns the mode and the group.
    private mutating func readIsolation(_ fields: [String: Any]) -> (mode: IsolationMode?, group: String?) {
        guard let value = fields["isolation"] else { return (nil, nil) }
        if let object = value as? [String: Any] {
            for key in object.keys.sorted() where key != "group" {
                fail("isolation", "unknown field \(quoted(key)) (expected only \"group\")")
            }
            guard let group = object["group"] as? String, ManifestNames.isGroupName(group) else {
                fail("isolation", "group must be a name of 1 to 64 letters, digits, '-', '_' or '.', such as {\"group\": \"greeter-family\"}")
                return (nil, nil)
            }
            return (nil, group)
        }
        guard let text = value as? String, let mode = IsolationMode(rawValue: text) else {
            fail("isolation", "\(value) is not an isolation mode (expected \"process\", \"in-process\" or {\"group\": NAME})")
            return (nil, nil)
        }
        return (mode, nil)
    }

    private mutating func readCapabilities(_ fields: [String: Any]) -> Set<Capability>? {
        guard fields["capabilities"] != nil else { return nil }
        let names = readStringList(fields, "capabilities", rule: { Capability(rawValue: $0) != nil },
                                   expected: "a capability (\(Capability.allCases.map(\.rawValue).joined(separator: ", ")))")
        return Set(names.compactMap(Capability.init(rawValue:)))
    }

    /// `files.read` / `files.write`: each list needs its capability, or it is ignored.
    private mutating func readFiles(_ fields: [String: Any], capabilities: Set<Capability>) -> FileGrants {
        guard let value = fields["files"] else { return FileGrants() }
        guard let object = value as? [String: Any] else {
            fail("files", "must be an object with \"read\" and \"write\" lists of paths")
            return FileGrants()
        }
        for unknown in object.keys.filter({ !["read", "write"].contains($0) }).sorted() {
            warn("files.\(unknown)", "unknown field (expected \"read\" or \"write\")")
        }
        let expected = "an absolute path or one starting with ~/ (no '..')"
        var grants = FileGrants(read: readStringList(object, "read", rule: FileGrants.isValidPath, expected: expected, prefix: "files."),
                                write: readStringList(object, "write", rule: FileGrants.isValidPath, expected: expected, prefix: "files."))
        if !grants.read.isEmpty && !capabilities.contains(.filesRead) {
            warn("files.read", "ignored: the capabilities do not include 'files.read'")
            grants.read = []
        }
        if !grants.write.isEmpty && !capabilities.contains(.filesWrite) {
            warn("files.write", "ignored: the capabilities do not include 'files.write'")
            grants.write = []
        }
        return grants
    }

    private mutating func readActivation(_ fields: [String: Any]) -> PluginActivation? {
        guard let value = fields["activation"] else { return nil }
        guard let text = value as? String, let activation = PluginActivation(rawValue: text) else {
            fail("activation", "\(quoted("\(value)")) is not an activation (expected \"eager\" or \"lazy\")")
            return nil
        }
        return activation
    }

    private mutating func readExports(_ fields: [String: Any]) -> [ExportSignature] {
        guard let value = fields["exports"] else { return [] }
        guard let list = value as? [Any] else {
            fail("exports", "must be an array of {symbol, params, returns}")
            return []
        }
        guard list.count <= PluginManifest.Limits.listEntries else {
            fail("exports", "has \(list.count) entries; at most \(PluginManifest.Limits.listEntries) are allowed")
            return []
        }
        var exports: [ExportSignature] = []
        var seen: Set<String> = []
        for (index, item) in list.enumerated() {
            let field = "exports[\(index)]"
            guard let object = item as? [String: Any] else {
                fail(field, "must be an object with symbol, params and returns")
                continue
            }
            for unknown in object.keys.filter({ !["symbol", "params", "returns"].contains($0) }).sorted() {
                warn("\(field).\(unknown)", "unknown field (ignored by manifest v1)")
            }
            guard let symbol = object["symbol"] as? String, ManifestNames.isCIdentifier(symbol) else {
                fail("\(field).symbol", "must be a C symbol name")
                continue
            }
            guard seen.insert(symbol).inserted else {
                fail("\(field).symbol", "\(quoted(symbol)) is declared twice")
                continue
            }
            var params: [ValueType] = []
            var valid = true
            if let rawParams = object["params"] {
                guard let names = rawParams as? [Any] else {
                    fail("\(field).params", "must be an array of type names")
                    continue
                }
                for (position, raw) in names.enumerated() {
                    let name = raw as? String ?? "\(raw)"
                    guard let type = ValueType(rawValue: name), type != .void else {
                        fail("\(field).params[\(position)]", "\(quoted(name)) is not a parameter type (\(Self.typeList(ValueType.parameterTypes)))")
                        valid = false
                        continue
                    }
                    params.append(type)
                }
            }
            if let rawReturns = object["returns"], !(rawReturns is String) {
                fail("\(field).returns", "must be a type name string")
                continue
            }
            let returnName = object["returns"] as? String ?? "void"
            guard let returns = ValueType(rawValue: returnName) else {
                fail("\(field).returns", "\(quoted(returnName)) is not a result type (\(Self.typeList(ValueType.allCases)))")
                continue
            }
            if valid { exports.append(ExportSignature(symbol: symbol, params: params, returns: returns)) }
        }
        return exports
    }

    private mutating func readRequires(_ fields: [String: Any]) -> [PluginManifest.Dependency] {
        guard let value = fields["requires"] else { return [] }
        guard let object = value as? [String: Any] else {
            fail("requires", "must be an object mapping plugin ids to version ranges")
            return []
        }
        guard object.count <= PluginManifest.Limits.listEntries else {
            fail("requires", "has \(object.count) entries; at most \(PluginManifest.Limits.listEntries) are allowed")
            return []
        }
        var dependencies: [PluginManifest.Dependency] = []
        for id in object.keys.sorted() {
            let field = "requires.\(id)"
            guard ManifestNames.isReverseDNS(id) else {
                fail(field, "\(quoted(id)) is not a reverse-DNS plugin id")
                continue
            }
            guard let text = object[id] as? String else {
                fail(field, "must be a version range string such as \"^1.0.0\"")
                continue
            }
            do {
                dependencies.append(.init(id: id, range: try VersionRange(text)))
            } catch {
                fail(field, error.description)
            }
        }
        return dependencies
    }

    private mutating func readSHA256(_ fields: [String: Any]) -> String? {
        guard let value = fields["sha256"] else { return nil }
        guard let text = value as? String, text.count == 64,
              text.allSatisfy({ $0.isHexDigit && !$0.isUppercase })
        else {
            fail("sha256", "must be 64 lower-case hexadecimal digits")
            return nil
        }
        return text
    }

    // MARK: Primitives

    private mutating func requiredString(
        _ fields: [String: Any], _ field: String, rule: (String) -> Bool, expected: String
    ) -> String? {
        guard let value = fields[field] else {
            fail(field, "is required")
            return nil
        }
        guard let text = value as? String else {
            fail(field, "must be a string")
            return nil
        }
        guard rule(text) else {
            fail(field, "\(quoted(text)) is not \(expected)")
            return nil
        }
        return text
    }

    private mutating func optionalString(_ fields: [String: Any], _ field: String) -> String? {
        guard let value = fields[field] else { return nil }
        guard let text = value as? String else {
            fail(field, "must be a string")
            return nil
        }
        return text
    }

    /// A list of unique strings; `prefix` names the enclosing object in problem lines.
    mutating func readStringList(
        _ fields: [String: Any], _ name: String, rule: (String) -> Bool, expected: String, prefix: String = ""
    ) -> [String] {
        let field = prefix + name
        guard let value = fields[name] else { return [] }
        guard let list = value as? [Any] else {
            fail(field, "must be an array of strings")
            return []
        }
        guard list.count <= PluginManifest.Limits.listEntries else {
            fail(field, "has \(list.count) entries; at most \(PluginManifest.Limits.listEntries) are allowed")
            return []
        }
        var result: [String] = []
        var seen: Set<String> = []
        for (index, item) in list.enumerated() {
            guard let text = item as? String, rule(text) else {
                fail("\(field)[\(index)]", "\(quoted(item)) is not \(expected)")
                continue
            }
            guard seen.insert(text).inserted else {
                fail("\(field)[\(index)]", "\(quoted(text)) is listed twice")
                continue
            }
            result.append(text)
        }
        return result
    }

    private static func typeList(_ types: [ValueType]) -> String {
        types.map(\.rawValue).joined(separator: ", ")
    }
}
