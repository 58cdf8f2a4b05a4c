import Foundation
import Testing
import BerthTestSupport

/// Every relative link in README.md and Docs/ reaches a file that exists and, when it names
/// a heading (`guide.md#a-heading`), a heading of that file, spelled the way GitHub makes
/// heading anchors.
@Suite("Docs: relative links and heading anchors resolve", .blocking)
struct DocsLinkTests {
    @Test("each relative link names an existing file and heading")
    func linksResolve() throws {
        let root = BuildProducts.packageRoot
        let pages = ["README.md"] + (try FileManager.default.contentsOfDirectory(atPath: root + "/Docs"))
            .filter { $0.hasSuffix(".md") }.sorted().map { "Docs/" + $0 }
        #expect(pages.count > 10, "found \(pages)")
        var broken: [String] = []
        for page in pages {
            let folder = (page as NSString).deletingLastPathComponent
            for link in MarkdownPage.links(in: try String(contentsOfFile: root + "/" + page, encoding: .utf8)) {
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let target = parts[0].isEmpty ? page : ((folder as NSString).appendingPathComponent(parts[0]) as NSString).standardizingPath
                guard FileManager.default.fileExists(atPath: root + "/" + target) else {
                    broken.append("\(page): \(link): no file \(target)")
                    continue
                }
                guard parts.count == 2, target.hasSuffix(".md") else { continue }
                let anchors = MarkdownPage.anchors(in: try String(contentsOfFile: root + "/" + target, encoding: .utf8))
                if !anchors.contains(parts[1]) { broken.append("\(page): \(link): \(target) has no heading #\(parts[1])") }
            }
        }
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }

    @Test("anchors follow GitHub's spelling")
    func anchorSpelling() {
        let anchors = MarkdownPage.anchors(in: "# The `berth dev` loop: save → seen\n## Limits\n## Limits\n```\n# not a heading\n```\n")
        #expect(anchors == ["the-berth-dev-loop-save--seen", "limits", "limits-1"])
    }
}

/// The parts of a Markdown page the link check reads; fenced code is skipped.
private enum MarkdownPage {
    /// The targets of inline links that are not absolute URLs.
    static func links(in text: String) -> [String] {
        var targets: [String] = []
        for line in proseLines(of: text) {
            var rest = Substring(line)
            while let open = rest.range(of: "](") {
                rest = rest[open.upperBound...]
                guard let close = rest.firstIndex(of: ")") else { break }
                let target = String(rest[..<close])
                rest = rest[close...]
                if target.contains("://") || target.hasPrefix("mailto:") || target.contains(" ") { continue }
                targets.append(target)
            }
        }
        return targets
    }

    /// The anchor of each heading: lower case, punctuation other than `-` and `_` dropped,
    /// spaces made `-`, and `-1`, `-2` … added to repeats.
    static func anchors(in text: String) -> [String] {
        var seen: [String: Int] = [:]
        var anchors: [String] = []
        for line in proseLines(of: text) where line.hasPrefix("#") {
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            var slug = ""
            for character in title.lowercased() {
                if character == " " { slug.append("-") } else if character.isLetter || character.isNumber || character == "-" || character == "_" { slug.append(character) }
            }
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.append(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    private static func proseLines(of text: String) -> [String] {
        var inFence = false
        var lines: [String] = []
        for line in text.components(separatedBy: "\n") {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
                continue
            }
            if !inFence { lines.append(line) }
        }
        return lines
    }
}

/// Every guide stays short enough to read in one sitting; a longer one splits its reference
/// tables out into a page of their own (as worker-sandbox.md came out of security.md).
@Suite("Docs: every guide under 300 lines", .blocking)
struct DocsLengthTests {
    @Test("each page of Docs/ has fewer than 300 lines")
    func guidesAreShort() throws {
        let folder = BuildProducts.packageRoot + "/Docs"
        let pages = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".md") }.sorted()
        #expect(pages.count > 10, "found \(pages)")
        for page in pages {
            let lines = try String(contentsOfFile: folder + "/" + page, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            // A file ending in a newline has an empty last element, which is no line.
            let count = lines.last == "" ? lines.count - 1 : lines.count
            #expect(count < 300, "Docs/\(page) has \(count) lines: split a reference table out")
        }
    }
}
