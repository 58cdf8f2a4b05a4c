/// A set of acceptable versions written in the npm/Cargo style, such as `^1.2`, `>=1.0.0 <2.0.0`
/// or `~1.4.0 || ^2`.
///
/// Grammar, a subset shared by npm and Cargo so plugin authors need not learn a new one:
/// - `*`: any release;
/// - `1.2.3` or `=1.2.3`: exactly that version (build metadata ignored); needs all three numbers;
/// - `>=V`, `>V`, `<=V`, `<V`: comparisons;
/// - `^V`: versions that keep the leftmost non-zero number (`^1.2.3` is `>=1.2.3 <2.0.0`,
///   `^0.2.3` is `>=0.2.3 <0.3.0`, `^0.0.3` is `>=0.0.3 <0.0.4`);
/// - `~V`: versions that keep major and minor (`~1.2.3` is `>=1.2.3 <1.3.0`; `~1` is `>=1.0.0 <2.0.0`);
/// - comparators separated by spaces must all hold; `||` separates alternatives, any of which may hold.
///
/// After an operator, a partial version (`1` or `1.2`) stands for every version that starts
/// that way, exactly as in npm and Cargo: for `>=`, `<`, `^` and `~` that is the same as filling
/// the missing numbers with zeros, while `>1.2` means `>=1.3.0` (above every 1.2.x) and `<=1.2`
/// means `<1.3.0` (up to and including every 1.2.x). `^0` is `<1.0.0` and `^0.0` is `<0.1.0`.
///
/// A prerelease version matches only if an alternative both accepts it and names the same
/// major.minor.patch with a prerelease itself (npm's rule), so `^1.2.0` does not offer
/// `2.0.0-alpha` or `1.5.0-beta` to a plugin that never asked for unstable versions, while
/// `>=1.5.0-beta.1 <2.0.0` accepts `1.5.0-beta.3`. `*` therefore matches releases only.
package struct VersionRange: Sendable, CustomStringConvertible, Equatable {
    /// The alternatives separated by `||`; a version matches if every comparator of one holds.
    /// An empty alternative comes from `*` and accepts every release.
    private let alternatives: [[Comparator]]

    /// Parses a range, or throws an error naming the first token that does not fit the grammar.
    package init(_ text: String) throws(VersionRangeError) {
        guard !text.allSatisfy(Self.isSpace) else {
            throw VersionRangeError(text: text, detail: "the range is empty")
        }
        var alternatives: [[Comparator]] = []
        for alternative in text.split(separator: "||", omittingEmptySubsequences: false) {
            let tokens = alternative.split(whereSeparator: Self.isSpace)
            guard !tokens.isEmpty else {
                throw VersionRangeError(text: text, detail: "'||' must have a comparator on each side")
            }
            var comparators: [Comparator] = []
            for token in tokens {
                comparators += try Self.comparators(for: String(token), in: text)
            }
            alternatives.append(comparators)
        }
        self.alternatives = alternatives
    }

    /// Whether `version` satisfies the range, including the prerelease rule described on the type.
    package func contains(_ version: SemanticVersion) -> Bool {
        alternatives.contains { comparators in
            guard comparators.allSatisfy({ $0.isSatisfied(by: version) }) else { return false }
            guard !version.prerelease.isEmpty else { return true }
            return comparators.contains { comparator in
                !comparator.version.prerelease.isEmpty
                    && comparator.version.major == version.major
                    && comparator.version.minor == version.minor
                    && comparator.version.patch == version.patch
            }
        }
    }

    /// The range in expanded form, for example `^1.2` reads `>=1.2.0 <2.0.0`, so messages show
    /// exactly which versions were meant; two ranges are equal when these forms are.
    package var description: String {
        alternatives.map { comparators in
            comparators.isEmpty ? "*" : comparators.map(\.description).joined(separator: " ")
        }.joined(separator: " || ")
    }

    /// Whether `character` separates comparators.
    private static func isSpace(_ character: Character) -> Bool {
        character == " " || character == "\t"
    }

    /// Expands one token into the comparators it stands for.
    private static func comparators(for token: String, in text: String) throws(VersionRangeError) -> [Comparator] {
        if token == "*" { return [] }

        // Two-character operators come first so that ">=" is not read as ">" followed by "=1".
        let operators = [">=", "<=", ">", "<", "=", "^", "~"]
        let operatorText = operators.first { token.hasPrefix($0) } ?? ""
        let versionText = String(token.dropFirst(operatorText.count))
        guard !versionText.isEmpty else {
            throw VersionRangeError(text: text, detail: "'\(token)' has no version after the operator")
        }
        guard let partial = PartialVersion(versionText) else {
            throw VersionRangeError(
                text: text,
                detail: "'\(token)' does not hold a valid version: expected major[.minor[.patch]] with no leading zeros, "
                    + "and a prerelease or build only after all three numbers")
        }

        switch operatorText {
        case "", "=":
            guard partial.specified == .patch else {
                throw VersionRangeError(
                    text: text, detail: "'\(token)' is not an exact version: an exact match needs major.minor.patch")
            }
            return [Comparator(relation: .equal, version: partial.lowest)]
        case ">=":
            return [Comparator(relation: .greaterThanOrEqual, version: partial.lowest)]
        case "<":
            return [Comparator(relation: .lessThan, version: partial.lowest)]
        case ">":
            guard partial.specified != .patch else { return [Comparator(relation: .greaterThan, version: partial.lowest)] }
            let above = try partial.bumped(partial.specified, token: token, text: text)
            return [Comparator(relation: .greaterThanOrEqual, version: above)]
        case "<=":
            guard partial.specified != .patch else { return [Comparator(relation: .lessThanOrEqual, version: partial.lowest)] }
            let above = try partial.bumped(partial.specified, token: token, text: text)
            return [Comparator(relation: .lessThan, version: above)]
        case "^":
            let kept: PartialVersion.Component
            if partial.major != 0 || partial.specified == .major {
                kept = .major
            } else if partial.minor != 0 || partial.specified == .minor {
                kept = .minor
            } else {
                kept = .patch
            }
            let upper = try partial.bumped(kept, token: token, text: text)
            return [
                Comparator(relation: .greaterThanOrEqual, version: partial.lowest),
                Comparator(relation: .lessThan, version: upper),
            ]
        default:
            // The operator list above leaves "~" as the only possibility.
            let upper = try partial.bumped(partial.specified == .major ? .major : .minor, token: token, text: text)
            return [
                Comparator(relation: .greaterThanOrEqual, version: partial.lowest),
                Comparator(relation: .lessThan, version: upper),
            ]
        }
    }
}

extension VersionRange {
    /// One comparison that a version must pass, such as `>=1.2.0`.
    private struct Comparator: Sendable, Equatable, CustomStringConvertible {
        /// How the version is compared with ``version``.
        enum Relation: Sendable, Equatable {
            /// `<`.
            case lessThan
            /// `<=`.
            case lessThanOrEqual
            /// `>`.
            case greaterThan
            /// `>=`.
            case greaterThanOrEqual
            /// `=`: same precedence, so build metadata is ignored.
            case equal
        }

        /// The comparison.
        let relation: Relation

        /// The version compared against.
        let version: SemanticVersion

        /// Whether `candidate` passes this comparison, by semver precedence.
        func isSatisfied(by candidate: SemanticVersion) -> Bool {
            switch relation {
            case .lessThan: candidate < version
            case .lessThanOrEqual: !(version < candidate)
            case .greaterThan: version < candidate
            case .greaterThanOrEqual: !(candidate < version)
            case .equal: !(candidate < version) && !(version < candidate)
            }
        }

        /// The comparison as written in a range, for example `>=1.2.0`.
        var description: String {
            switch relation {
            case .lessThan: "<\(version)"
            case .lessThanOrEqual: "<=\(version)"
            case .greaterThan: ">\(version)"
            case .greaterThanOrEqual: ">=\(version)"
            case .equal: "=\(version)"
            }
        }
    }

    /// A version that may omit its minor or patch number, as allowed after an operator.
    private struct PartialVersion {
        /// A position in major.minor.patch.
        enum Component {
            /// The first number.
            case major
            /// The second number.
            case minor
            /// The third number.
            case patch
        }

        /// The lowest version the partial stands for: missing numbers are zero.
        let lowest: SemanticVersion

        /// The last number that was written.
        let specified: Component

        /// The major number.
        var major: Int { lowest.major }

        /// The minor number, zero when not written.
        var minor: Int { lowest.minor }

        /// Parses `1`, `1.2` or a complete semantic version; nil for anything else.
        init?(_ text: String) {
            // Filling the missing numbers and then using the strict parser keeps a single
            // definition of what a valid number is; a prerelease or build is only allowed
            // with all three numbers, as in npm and Cargo.
            let dots = text.utf8.count(where: { $0 == UInt8(ascii: ".") })
            let hasSuffix = text.utf8.contains { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "+") }
            let padded: String
            switch (dots, hasSuffix) {
            case (0, false):
                (padded, specified) = (text + ".0.0", .major)
            case (1, false):
                (padded, specified) = (text + ".0", .minor)
            default:
                (padded, specified) = (text, .patch)
            }
            guard let version = SemanticVersion(padded) else { return nil }
            lowest = version
        }

        /// The lowest version above every version that keeps `component` and the numbers before
        /// it, for example 1.3.0 for 1.2.x when `component` is minor.
        func bumped(_ component: Component, token: String, text: String) throws(VersionRangeError) -> SemanticVersion {
            let number: Int
            switch component {
            case .major: number = lowest.major
            case .minor: number = lowest.minor
            case .patch: number = lowest.patch
            }
            let (next, overflow) = number.addingReportingOverflow(1)
            guard !overflow else {
                throw VersionRangeError(text: text, detail: "'\(token)' has a number too large to compute the next version")
            }
            switch component {
            case .major: return SemanticVersion(major: next, minor: 0, patch: 0)
            case .minor: return SemanticVersion(major: lowest.major, minor: next, patch: 0)
            case .patch: return SemanticVersion(major: lowest.major, minor: lowest.minor, patch: next)
            }
        }
    }
}

/// Why a version range could not be parsed.
package struct VersionRangeError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The whole range as given.
    package let text: String

    /// What is wrong, naming the offending token.
    package let detail: String

    /// Creates an error for `text`; `detail` should quote the offending token.
    package init(text: String, detail: String) {
        self.text = text
        self.detail = detail
    }

    /// One line: the range, then what is wrong with it.
    package var description: String {
        "invalid version range '\(text)': \(detail)"
    }
}
