/// "Did you mean": the known name closest to a mistyped one, by edit distance (a command,
/// a route, a plugin id, an exported symbol).
package enum Suggestion {
    /// The candidate nearest to `word` when it is near enough to be a typo (at most a third
    /// of the length after the start they share, at least one edit), else nil: ids that share
    /// `com.example.` are not alike for it. Ties go to the first in order.
    package static func closest(to word: String, among candidates: some Sequence<String>) -> String? {
        var best: (name: String, distance: Int)?
        for candidate in candidates where candidate != word {
            let shared = zip(word, candidate).prefix { $0 == $1 }.count
            let limit = max(1, (word.count - shared) / 3)
            let distance = editDistance(word, candidate)
            if distance <= limit, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.name
    }

    /// `" (did you mean 'NAME'?)"`, or an empty string when nothing is close.
    package static func hint(for word: String, among candidates: some Sequence<String>) -> String {
        closest(to: word, among: candidates).map { " (did you mean '\($0)'?)" } ?? ""
    }

    /// Levenshtein distance: insertions, deletions and substitutions, one each.
    package static func editDistance(_ left: String, _ right: String) -> Int {
        let left = Array(left), right = Array(right)
        guard !left.isEmpty else { return right.count }
        var previous = Array(0...right.count)
        var current = previous
        for (row, leftCharacter) in left.enumerated() {
            current[0] = row + 1
            for (column, rightCharacter) in right.enumerated() {
                let substitution = previous[column] + (leftCharacter == rightCharacter ? 0 : 1)
                current[column + 1] = min(substitution, previous[column + 1] + 1, current[column] + 1)
            }
            swap(&previous, &current)
        }
        return previous[right.count]
    }
}
