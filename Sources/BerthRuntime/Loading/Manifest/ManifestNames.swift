@_spi(Engine) import BerthCore
/// The manifest's rules for names: plugin ids, C symbols, route and contract names, worker groups and
/// environment variables, and which variables the host never passes to a worker. Pure
/// predicates, used by `ManifestReader` (and anything else that must accept the same names).
enum ManifestNames {
    /// `com.example.counter`: at least two dot-separated labels of lower-case letters, digits
    /// and '-', each starting with a letter.
    static func isReverseDNS(_ text: String) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        return labels.allSatisfy { label in
            guard let first = label.first, first.isASCII, first.isLowercase else { return false }
            return label.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }
        }
    }

    /// A C identifier: `[A-Za-z_][A-Za-z0-9_]*`.
    static func isCIdentifier(_ text: String) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter || first == "_" else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }

    /// A route name: starts with a letter; letters, digits, '-', '_' and '.'.
    static func isRouteName(_ text: String) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
    }

    /// A contract name (`org.berth.Clock`): a route name of at most `contractNameBytes` bytes.
    static func isContractName(_ text: String) -> Bool {
        text.utf8.count <= contractNameBytes && isRouteName(text)
    }

    static let contractNameBytes = 255

    /// A worker group name: 1 to 64 ASCII letters, digits, '-', '_' and '.'.
    static func isGroupName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x5F || byte == 0x2E
        }
    }

    /// An environment variable name: ASCII letters, digits and '_', not starting with a
    /// digit, at most 128 bytes.
    static func isVariableName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(0x30...0x39).contains(first), name.utf8.count <= 128 else { return false }
        return name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F }
    }

    /// Why the host never passes `name` to a worker, or nil when it may.
    static func withheldVariable(_ name: String) -> String? {
        let upper = name.uppercased()
        if ["XDG_RUNTIME_DIR", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS"].contains(upper) {
            return "it leads to the user's sockets (the host's control socket, agents, the session bus)"
        }
        if upper.hasPrefix("BERTH_") { return "BERTH_ variables are the host's own (its control socket and token among them)" }
        if upper.hasPrefix("LD_") || upper == "GLIBC_TUNABLES" || upper.hasPrefix("MALLOC_") || upper.hasPrefix("SWIFT_") {
            return "it changes how the worker's own libraries load and run"
        }
        return nil
    }
}
