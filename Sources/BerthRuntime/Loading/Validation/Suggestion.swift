@_spi(Engine) import BerthCore
/// "Did you mean": the known name closest to a mistyped one, by edit distance (a command,
/// a route, a plugin id, an exported symbol).
/// `package`: a helper the CLI shares; not part of the embedding API.
package enum Suggestion {
    /// The candidate nearest to `word` when it is near enough to be a typo (at most a third
    /// of the length after the start they share, at least one edit; two letters swapped are
    /// one edit), else nil: ids that share `com.example.` are not alike for it. Ties go to
    /// the first in order. Cheap on thousands of candidates (a library's symbols): one whose
    /// length is too far off is skipped before any distance is computed.
    package static func closest(to word: String, among candidates: some Sequence<String>) -> String? {
        let letters = Array(word.utf8)
        var best: (name: String, distance: Int)?
        for candidate in candidates where candidate != word {
            let other = Array(candidate.utf8)
            let shared = zip(letters, other).prefix { $0 == $1 }.count
            let limit = max(1, (letters.count - shared) / 3)
            guard abs(letters.count - other.count) <= limit else { continue }
            let distance = editDistance(letters, other)
            if distance <= limit, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.name
    }

    /// `" (did you mean 'NAME'?)"`, or an empty string when nothing is close.
    package static func hint(for word: String, among candidates: some Sequence<String>) -> String {
        closest(to: word, among: candidates).map { " (did you mean '\($0)'?)" } ?? ""
    }

    /// Edit distance with insertions, deletions, substitutions and swaps of two neighbouring
    /// letters, one each (optimal string alignment), over UTF-8 bytes.
    package static func editDistance(_ left: String, _ right: String) -> Int {
        editDistance(Array(left.utf8), Array(right.utf8))
    }

    static func editDistance(_ left: [UInt8], _ right: [UInt8]) -> Int {
        guard !left.isEmpty else { return right.count }
        guard !right.isEmpty else { return left.count }
        var beforePrevious = Array(repeating: 0, count: right.count + 1)
        var previous = Array(0...right.count)
        var current = previous
        for row in 1...left.count {
            current[0] = row
            for column in 1...right.count {
                let cost = left[row - 1] == right[column - 1] ? 0 : 1
                var best = min(previous[column - 1] + cost, previous[column] + 1, current[column - 1] + 1)
                if row > 1, column > 1, left[row - 1] == right[column - 2], left[row - 2] == right[column - 1] {
                    best = min(best, beforePrevious[column - 2] + 1)
                }
                current[column] = best
            }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[right.count]
    }
}
