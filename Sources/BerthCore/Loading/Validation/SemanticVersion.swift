/// A version number as defined by Semantic Versioning 2.0.0, such as `1.4.0-beta.2+build.7`.
///
/// Plugins declare their own version and the host versions they accept, and the host must order
/// and match those versions exactly as the specification says, so parsing is strict: no leading
/// `v`, no missing components, no leading zeros in numbers.
///
/// Equality and ordering deliberately differ in one respect:
/// - `==` and hashing include the build metadata, so `1.0.0+a` and `1.0.0+b` stay distinct values
///   (for example two entries in a `Set`), because they are different artefacts;
/// - `<` follows semver precedence, which ignores build metadata, because ordering is what range
///   matching and "newest version" choices depend on, and the specification says build metadata
///   must not influence it.
///
/// The consequence is that for two versions differing only in build metadata neither `<`, `>`
/// nor `==` holds. Sorting, `min`, `max` and binary search only need the strict weak order that
/// `<` still is, so they behave well; code that infers `a == b` from `a <= b && b <= a` must not
/// be used with build metadata.
public struct SemanticVersion: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Incremented for incompatible API changes.
    public let major: Int

    /// Incremented for backwards-compatible additions.
    public let minor: Int

    /// Incremented for backwards-compatible fixes.
    public let patch: Int

    /// The dot-separated identifiers after `-`; empty for a release.
    public let prerelease: [String]

    /// The dot-separated identifiers after `+`; empty when there is no build metadata.
    public let build: [String]

    /// Parses a complete semantic version, or returns nil if `text` does not follow the specification.
    ///
    /// Components that do not fit in `Int` are rejected rather than wrapped, since no real
    /// version needs them and wrapping would reorder versions.
    public init?(_ text: String) {
        var core = Array(text.utf8)[...]
        var build: [String] = []
        var prerelease: [String] = []

        // Build metadata may contain '-', so it is split off first; the core cannot contain
        // '-', so the first one left starts the prerelease.
        if let plus = core.firstIndex(of: UInt8(ascii: "+")) {
            guard let identifiers = Self.identifiers(core[(plus + 1)...], numbersMayHaveLeadingZeros: true) else {
                return nil
            }
            build = identifiers
            core = core[..<plus]
        }
        if let hyphen = core.firstIndex(of: UInt8(ascii: "-")) {
            guard let identifiers = Self.identifiers(core[(hyphen + 1)...], numbersMayHaveLeadingZeros: false) else {
                return nil
            }
            prerelease = identifiers
            core = core[..<hyphen]
        }

        let numbers = core.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard numbers.count == 3,
            let major = Self.number(numbers[0]),
            let minor = Self.number(numbers[1]),
            let patch = Self.number(numbers[2])
        else {
            return nil
        }
        self.init(major: major, minor: minor, patch: patch, prerelease: prerelease, build: build)
    }

    /// Creates a version from its parts.
    ///
    /// Passing a negative number or an identifier that ``init(_:)`` would reject is a programming
    /// error and stops the program, because such a value could not be printed and parsed back.
    public init(major: Int, minor: Int, patch: Int, prerelease: [String] = [], build: [String] = []) {
        precondition(major >= 0 && minor >= 0 && patch >= 0, "version components must not be negative")
        precondition(
            prerelease.allSatisfy { Self.isValidIdentifier($0.utf8, numbersMayHaveLeadingZeros: false) },
            "invalid prerelease identifier in \(prerelease)")
        precondition(
            build.allSatisfy { Self.isValidIdentifier($0.utf8, numbersMayHaveLeadingZeros: true) },
            "invalid build identifier in \(build)")
        self.major = major
        self.minor = minor
        self.patch = patch
        self.prerelease = prerelease
        self.build = build
    }

    /// The canonical text, which ``init(_:)`` parses back to an equal value.
    public var description: String {
        var text = "\(major).\(minor).\(patch)"
        if !prerelease.isEmpty {
            text += "-" + prerelease.joined(separator: ".")
        }
        if !build.isEmpty {
            text += "+" + build.joined(separator: ".")
        }
        return text
    }

    /// Whether `lhs` has lower precedence than `rhs` under semver 2.0.0 rule 11; build metadata is ignored.
    public static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        if lhs.major != rhs.major { return lhs.major < rhs.major }
        if lhs.minor != rhs.minor { return lhs.minor < rhs.minor }
        if lhs.patch != rhs.patch { return lhs.patch < rhs.patch }

        // A prerelease comes before the release it leads up to.
        switch (lhs.prerelease.isEmpty, rhs.prerelease.isEmpty) {
        case (true, _):
            return false
        case (false, true):
            return true
        case (false, false):
            break
        }
        for (left, right) in zip(lhs.prerelease, rhs.prerelease) where left != right {
            return identifierPrecedes(left, right)
        }
        return lhs.prerelease.count < rhs.prerelease.count
    }

    /// Orders two different prerelease identifiers: numbers numerically, numbers before
    /// alphanumerics, alphanumerics by ASCII.
    private static func identifierPrecedes(_ left: String, _ right: String) -> Bool {
        switch (isNumeric(left.utf8), isNumeric(right.utf8)) {
        case (true, true):
            // Without leading zeros a longer number is larger, and comparing lengths first
            // handles numbers of any size without converting them.
            if left.utf8.count != right.utf8.count { return left.utf8.count < right.utf8.count }
            return left.utf8.lexicographicallyPrecedes(right.utf8)
        case (true, false):
            return true
        case (false, true):
            return false
        case (false, false):
            // Bytes rather than `String` comparison, because the specification orders by ASCII
            // and `String` orders by Unicode canonical equivalence.
            return left.utf8.lexicographicallyPrecedes(right.utf8)
        }
    }

    /// Parses a major, minor or patch number: ASCII digits, no leading zero, fits in `Int`.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        guard isNumeric(digits), digits.count == 1 || digits.first != UInt8(ascii: "0") else { return nil }
        var value = 0
        for digit in digits {
            let (shifted, shiftOverflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, sumOverflow) = shifted.addingReportingOverflow(Int(digit - UInt8(ascii: "0")))
            guard !shiftOverflow, !sumOverflow else { return nil }
            value = sum
        }
        return value
    }

    /// Splits a prerelease or build section into identifiers, or returns nil if any is invalid.
    private static func identifiers(_ text: ArraySlice<UInt8>, numbersMayHaveLeadingZeros: Bool) -> [String]? {
        let parts = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        var identifiers: [String] = []
        for part in parts {
            guard isValidIdentifier(part, numbersMayHaveLeadingZeros: numbersMayHaveLeadingZeros) else { return nil }
            identifiers.append(String(decoding: part, as: UTF8.self))
        }
        return identifiers
    }

    /// Whether `identifier` is non-empty, made of `[0-9A-Za-z-]`, and, when numeric and the rules
    /// require it, free of leading zeros.
    private static func isValidIdentifier<Bytes: Collection<UInt8>>(
        _ identifier: Bytes, numbersMayHaveLeadingZeros: Bool
    ) -> Bool {
        guard !identifier.isEmpty else { return false }
        let allowed = identifier.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || byte == UInt8(ascii: "-")
        }
        guard allowed else { return false }
        if !numbersMayHaveLeadingZeros, isNumeric(identifier), identifier.count > 1, identifier.first == UInt8(ascii: "0") {
            return false
        }
        return true
    }

    /// Whether `text` is non-empty and only ASCII digits.
    private static func isNumeric<Bytes: Collection<UInt8>>(_ text: Bytes) -> Bool {
        !text.isEmpty && text.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
