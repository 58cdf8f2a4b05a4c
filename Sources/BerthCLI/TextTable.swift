/// Left-aligned text columns for human output.
final class TextTable {
    private let header: [String]
    private var rows: [[String]] = []

    init(header: [String]) {
        self.header = header
    }

    func add(_ row: [String]) {
        rows.append(row)
    }

    func render() -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
