import Testing

@_spi(Engine) @testable import BerthRuntime

/// Tests of semantic version parsing and ordering, and of version ranges.
@Suite("Semantic versions and ranges")
struct SemanticVersionTests {
    // MARK: - Parsing

    @Test("Valid versions parse into their parts and print back unchanged", arguments: [
        ("0.0.0", 0, 0, 0, [String](), [String]()),
        ("1.2.3", 1, 2, 3, [], []),
        ("10.20.30", 10, 20, 30, [], []),
        ("1.0.0-alpha", 1, 0, 0, ["alpha"], []),
        ("1.0.0-alpha.1", 1, 0, 0, ["alpha", "1"], []),
        ("1.0.0-0.3.7", 1, 0, 0, ["0", "3", "7"], []),
        ("1.0.0-x.7.z.92", 1, 0, 0, ["x", "7", "z", "92"], []),
        ("1.0.0-x-y-z.--", 1, 0, 0, ["x-y-z", "--"], []),
        ("1.0.0+20130313144700", 1, 0, 0, [], ["20130313144700"]),
        ("1.0.0-beta+exp.sha.5114f85", 1, 0, 0, ["beta"], ["exp", "sha", "5114f85"]),
        ("1.0.0+21AF26D3----117B344092BD", 1, 0, 0, [], ["21AF26D3----117B344092BD"]),
        ("1.0.0-rc.1+build.007", 1, 0, 0, ["rc", "1"], ["build", "007"]),
    ])
    func parsesValidVersions(
        text: String, major: Int, minor: Int, patch: Int, prerelease: [String], build: [String]
    ) throws {
        let version = try #require(SemanticVersion(text))
        #expect(version.major == major)
        #expect(version.minor == minor)
        #expect(version.patch == patch)
        #expect(version.prerelease == prerelease)
        #expect(version.build == build)
        #expect(version.description == text)
    }

    @Test("Invalid versions are rejected", arguments: [
        "", "1", "1.2", "1.2.3.4", "v1.0.0", "V1.2.3", "01.2.3", "1.02.3", "1.2.03", "1.2.3-", "1.2.3+",
        "1.2.3-alpha..1", "1.2.3-.alpha", "1.2.3-alpha.", "1.2.3-01", "1.2.3-alpha.007", "1.2.3+build..1",
        "1.2.3-al_pha", "1.2.3-é", " 1.2.3", "1.2.3 ", "-1.2.3", "1.-2.3", "+1.2.3", "1..3", "a.b.c",
        "1.2.3+a+b", "99999999999999999999.0.0", "１.2.3",
    ])
    func rejectsInvalidVersions(text: String) {
        #expect(SemanticVersion(text) == nil)
    }

    @Test("The memberwise initializer builds the same value as parsing")
    func memberwiseMatchesParsing() {
        let built = SemanticVersion(major: 2, minor: 1, patch: 0, prerelease: ["rc", "1"], build: ["abc"])
        #expect(SemanticVersion("2.1.0-rc.1+abc") == built)
        #expect(built.description == "2.1.0-rc.1+abc")
    }

    // MARK: - Precedence

    @Test("Precedence follows the example list of the semver specification")
    func specificationPrecedence() throws {
        let texts = [
            "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
            "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "1.10.0", "2.0.0",
        ]
        let versions = try texts.map { try #require(SemanticVersion($0)) }
        for (lower, higher) in zip(versions, versions.dropFirst()) {
            #expect(lower < higher, "\(lower) should precede \(higher)")
            #expect(!(higher < lower), "\(higher) should not precede \(lower)")
        }
        #expect(versions.shuffled().sorted() == versions)
    }

    @Test("Numeric prerelease identifiers of any length compare as numbers")
    func largeNumericIdentifiers() throws {
        let smaller = try #require(SemanticVersion("1.0.0-99999999999999999999"))
        let larger = try #require(SemanticVersion("1.0.0-100000000000000000000"))
        #expect(smaller < larger)
        #expect(try #require(SemanticVersion("1.0.0-2")) < #require(SemanticVersion("1.0.0-10")))
        #expect(try #require(SemanticVersion("1.0.0-999")) < #require(SemanticVersion("1.0.0-a")))
        #expect(try #require(SemanticVersion("1.0.0-Z")) < #require(SemanticVersion("1.0.0-a")))
    }

    @Test("Build metadata is ignored by ordering but kept by equality and hashing")
    func buildMetadata() throws {
        let first = try #require(SemanticVersion("1.0.0+a"))
        let second = try #require(SemanticVersion("1.0.0+b"))
        #expect(!(first < second))
        #expect(!(second < first))
        #expect(first != second)
        #expect(Set([first, second]).count == 2)
        #expect(first == SemanticVersion("1.0.0+a"))
        #expect(try #require(SemanticVersion("1.0.0-rc.1+zzz")) < #require(SemanticVersion("1.0.0+aaa")))
    }

    // MARK: - Ranges

    @Test("Range forms accept the versions inside them and refuse those outside", arguments: [
        ("*", ["0.0.0", "1.2.3", "99.0.0"], ["1.0.0-alpha"]),
        ("1.2.3", ["1.2.3", "1.2.3+build.1"], ["1.2.4", "1.2.2", "1.2.3-rc.1"]),
        ("=1.2.3", ["1.2.3"], ["1.2.4", "1.3.0"]),
        (">=1.2.3", ["1.2.3", "1.2.4", "7.0.0"], ["1.2.2", "0.9.9"]),
        (">1.2.3", ["1.2.4", "2.0.0"], ["1.2.3", "1.0.0"]),
        ("<=1.2.3", ["1.2.3", "0.1.0"], ["1.2.4", "2.0.0"]),
        ("<2.0.0", ["1.9.9", "0.0.1"], ["2.0.0", "2.0.1", "2.0.0-alpha"]),
        ("^1.2.3", ["1.2.3", "1.9.0", "1.99.99"], ["1.2.2", "2.0.0", "2.0.0-alpha", "0.9.0"]),
        ("^0.2.3", ["0.2.3", "0.2.9"], ["0.2.2", "0.3.0", "1.0.0"]),
        ("^0.0.3", ["0.0.3"], ["0.0.2", "0.0.4", "0.1.0"]),
        ("^1", ["1.0.0", "1.5.2"], ["0.9.9", "2.0.0"]),
        ("^1.2", ["1.2.0", "1.9.9"], ["1.1.9", "2.0.0"]),
        ("^0", ["0.0.0", "0.9.9"], ["1.0.0"]),
        ("^0.0", ["0.0.0", "0.0.9"], ["0.1.0"]),
        ("^0.2", ["0.2.0", "0.2.9"], ["0.1.9", "0.3.0"]),
        ("~1.2.3", ["1.2.3", "1.2.9"], ["1.2.2", "1.3.0"]),
        ("~1.2", ["1.2.0", "1.2.9"], ["1.1.9", "1.3.0"]),
        ("~1", ["1.0.0", "1.9.9"], ["0.9.9", "2.0.0"]),
        (">=1", ["1.0.0", "3.0.0"], ["0.9.9"]),
        (">1", ["2.0.0"], ["1.0.0", "1.0.1", "1.9.9"]),
        (">1.2", ["1.3.0"], ["1.2.0", "1.2.9"]),
        ("<=1.2", ["1.2.0", "1.2.9"], ["1.3.0"]),
        ("<1.2", ["1.1.9"], ["1.2.0"]),
        (">=1.0.0 <2.0.0", ["1.0.0", "1.9.9"], ["0.9.9", "2.0.0"]),
        ("  >=1.0.0\t<1.5.0  ", ["1.4.9"], ["1.5.0"]),
        ("^1.2 || ^3", ["1.2.0", "1.9.0", "3.0.0", "3.9.9"], ["1.1.0", "2.0.0", "4.0.0"]),
        ("1.0.0||2.0.0", ["1.0.0", "2.0.0"], ["1.5.0"]),
    ])
    func rangeMembership(range text: String, inside: [String], outside: [String]) throws {
        let range = try VersionRange(text)
        for version in inside {
            #expect(range.contains(try #require(SemanticVersion(version))), "'\(text)' should contain \(version)")
        }
        for version in outside {
            #expect(!range.contains(try #require(SemanticVersion(version))), "'\(text)' should not contain \(version)")
        }
    }

    @Test("A prerelease matches only when the range names the same version with a prerelease")
    func prereleaseRule() throws {
        let range = try VersionRange(">=1.5.0-beta.1 <2.0.0")
        #expect(range.contains(try #require(SemanticVersion("1.5.0-beta.1"))))
        #expect(range.contains(try #require(SemanticVersion("1.5.0-beta.3"))))
        #expect(range.contains(try #require(SemanticVersion("1.5.0-rc.1"))))
        #expect(range.contains(try #require(SemanticVersion("1.7.0"))))
        #expect(!range.contains(try #require(SemanticVersion("1.5.0-alpha"))))
        #expect(!range.contains(try #require(SemanticVersion("1.6.0-beta"))))
        #expect(!range.contains(try #require(SemanticVersion("2.0.0-beta"))))

        let caret = try VersionRange("^1.2.3-beta.2")
        #expect(caret.contains(try #require(SemanticVersion("1.2.3-beta.4"))))
        #expect(caret.contains(try #require(SemanticVersion("1.2.3"))))
        #expect(!caret.contains(try #require(SemanticVersion("1.2.3-beta.1"))))
        #expect(!caret.contains(try #require(SemanticVersion("1.3.0-beta"))))

        // The prerelease must be named in the same alternative that accepts the version.
        let alternatives = try VersionRange("1.0.0-rc.1 || >=1.0.0 <3.0.0")
        #expect(alternatives.contains(try #require(SemanticVersion("1.0.0-rc.1"))))
        #expect(!alternatives.contains(try #require(SemanticVersion("1.0.0-rc.2"))))
        #expect(!alternatives.contains(try #require(SemanticVersion("2.0.0-rc.1"))))
    }

    @Test("A range prints in expanded form and equal meanings compare equal")
    func expandedDescription() throws {
        #expect(try VersionRange("^1.2").description == ">=1.2.0 <2.0.0")
        #expect(try VersionRange("~0.3 || 2.0.0").description == ">=0.3.0 <0.4.0 || =2.0.0")
        #expect(try VersionRange(">1.2").description == ">=1.3.0")
        #expect(try VersionRange("<=1").description == "<2.0.0")
        #expect(try VersionRange("*").description == "*")
        #expect(try VersionRange("^1.2") == VersionRange(">=1.2.0 <2.0.0"))
        #expect(try VersionRange("^1.2") != VersionRange("~1.2"))
    }

    @Test("Invalid ranges are rejected with a message naming the offending token", arguments: [
        ("", "invalid version range '': the range is empty"),
        ("   ", "invalid version range '   ': the range is empty"),
        ("1.2", "invalid version range '1.2': '1.2' is not an exact version: an exact match needs major.minor.patch"),
        ("=1", "invalid version range '=1': '=1' is not an exact version: an exact match needs major.minor.patch"),
        (">=", "invalid version range '>=': '>=' has no version after the operator"),
        ("^1.0.0 ||", "invalid version range '^1.0.0 ||': '||' must have a comparator on each side"),
        ("|| 1.0.0", "invalid version range '|| 1.0.0': '||' must have a comparator on each side"),
        ("1.x", "invalid version range '1.x': '1.x' does not hold a valid version: expected major[.minor[.patch]] "
            + "with no leading zeros, and a prerelease or build only after all three numbers"),
        (">=1.0.0 <2.0.0 | 3.0.0", "invalid version range '>=1.0.0 <2.0.0 | 3.0.0': '|' does not hold a valid version: "
            + "expected major[.minor[.patch]] with no leading zeros, and a prerelease or build only after all three numbers"),
        ("v1.0.0", "invalid version range 'v1.0.0': 'v1.0.0' does not hold a valid version: expected major[.minor[.patch]] "
            + "with no leading zeros, and a prerelease or build only after all three numbers"),
        ("^01.2", "invalid version range '^01.2': '^01.2' does not hold a valid version: expected major[.minor[.patch]] "
            + "with no leading zeros, and a prerelease or build only after all three numbers"),
        ("~1.2-beta", "invalid version range '~1.2-beta': '~1.2-beta' does not hold a valid version: expected "
            + "major[.minor[.patch]] with no leading zeros, and a prerelease or build only after all three numbers"),
        ("1.0.0 - 2.0.0", "invalid version range '1.0.0 - 2.0.0': '-' does not hold a valid version: expected "
            + "major[.minor[.patch]] with no leading zeros, and a prerelease or build only after all three numbers"),
        (">= 1.0.0", "invalid version range '>= 1.0.0': '>=' has no version after the operator"),
        ("^9223372036854775807", "invalid version range '^9223372036854775807': '^9223372036854775807' has a number "
            + "too large to compute the next version"),
    ])
    func rejectsInvalidRanges(text: String, message: String) {
        do {
            let range = try VersionRange(text)
            Issue.record("'\(text)' parsed as '\(range)'")
        } catch {
            #expect(error.text == text)
            #expect(error.description == message)
        }
    }
}
