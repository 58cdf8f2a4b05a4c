/// A small terminal emulator for tests: applies the bytes a program wrote to a grid of
/// characters, as a terminal would (printable text, CR/LF/BS, cursor position, erase in
/// display and line, SGR reverse video, DEC private modes). It knows what the front end and
/// the REPL send, and skips any other sequence whole.
public struct ScreenEmulator {
    public private(set) var width: Int
    public private(set) var height: Int
    private var grid: [[Character]]
    private var reversed: [[Bool]]
    public private(set) var cursor = (column: 0, row: 0)
    public private(set) var cursorVisible = true
    /// DEC private modes set now (1049 alternate screen, 1000/1006 mouse, 2004 paste, …).
    public private(set) var modes: Set<Int> = []
    private var reverse = false
    private var pending: [UInt8] = []

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
        grid = Array(repeating: Array(repeating: " ", count: width), count: height)
        reversed = Array(repeating: Array(repeating: false, count: width), count: height)
    }

    /// The screen's text, trailing blanks dropped.
    public var text: String {
        grid.map { row in
            var line = String(row)
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }

    public func line(_ row: Int) -> String { String(grid[row]) }
    public func isReversed(column: Int, row: Int) -> Bool { reversed[row][column] }

    public mutating func apply(_ bytes: some Sequence<UInt8>) {
        pending += bytes
        var index = 0
        let data = pending
        while index < data.count {
            let byte = data[index]
            if byte == 0x1B {
                guard let end = sequenceEnd(data, from: index) else { break }
                handleEscape(Array(data[index..<end]))
                index = end
                continue
            }
            switch byte {
            case 0x0D: cursor.column = 0
            case 0x0A: lineFeed()
            case 0x08: cursor.column = max(cursor.column - 1, 0)
            case 0x07, 0x00: break
            default:
                let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                guard index + length <= data.count else { break }
                let character = String(decoding: data[index..<index + length], as: UTF8.self).first ?? "?"
                put(character)
                index += length
                continue
            }
            index += 1
        }
        pending = Array(data[index...])
    }

    private mutating func put(_ character: Character) {
        if cursor.column >= width {
            cursor.column = 0
            lineFeed()
        }
        grid[cursor.row][cursor.column] = character
        reversed[cursor.row][cursor.column] = reverse
        cursor.column += 1
    }

    private mutating func lineFeed() {
        if cursor.row == height - 1 {
            grid.removeFirst()
            grid.append(Array(repeating: " ", count: width))
            reversed.removeFirst()
            reversed.append(Array(repeating: false, count: width))
        } else {
            cursor.row += 1
        }
    }

    /// Where the escape sequence starting at `start` ends (nil: not complete yet).
    private func sequenceEnd(_ data: [UInt8], from start: Int) -> Int? {
        guard start + 1 < data.count else { return nil }
        let kind = data[start + 1]
        if kind == UInt8(ascii: "[") {
            var index = start + 2
            while index < data.count {
                if (0x40...0x7E).contains(data[index]) { return index + 1 }
                index += 1
            }
            return nil
        }
        if kind == UInt8(ascii: "]") {
            // OSC: up to BEL or ESC \.
            var index = start + 2
            while index < data.count {
                if data[index] == 0x07 { return index + 1 }
                if data[index] == 0x1B, index + 1 < data.count { return index + 2 }
                index += 1
            }
            return nil
        }
        return start + 2
    }

    private mutating func handleEscape(_ sequence: [UInt8]) {
        guard sequence.count >= 3, sequence[1] == UInt8(ascii: "[") else { return }
        let final = sequence.last!
        let body = String(decoding: sequence[2..<sequence.count - 1], as: UTF8.self)
        let isPrivate = body.hasPrefix("?")
        let numbers = body.drop { $0 == "?" }.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) }
        func number(_ index: Int, _ fallback: Int) -> Int { index < numbers.count ? (numbers[index] ?? fallback) : fallback }
        switch final {
        case UInt8(ascii: "H"), UInt8(ascii: "f"):
            cursor = (min(max(number(1, 1) - 1, 0), width - 1), min(max(number(0, 1) - 1, 0), height - 1))
        case UInt8(ascii: "J"):
            if number(0, 0) == 2 || number(0, 0) == 3 { clear(rows: 0..<height) } else if number(0, 0) == 0 {
                clearLine(from: cursor.column)
                clear(rows: cursor.row + 1..<height)
            }
        case UInt8(ascii: "K"):
            if number(0, 0) == 0 { clearLine(from: cursor.column) } else if number(0, 0) == 2 { clearLine(from: 0) }
        case UInt8(ascii: "A"): cursor.row = max(cursor.row - number(0, 1), 0)
        case UInt8(ascii: "B"): cursor.row = min(cursor.row + number(0, 1), height - 1)
        case UInt8(ascii: "C"): cursor.column = min(cursor.column + number(0, 1), width - 1)
        case UInt8(ascii: "D"): cursor.column = max(cursor.column - number(0, 1), 0)
        case UInt8(ascii: "G"): cursor.column = min(max(number(0, 1) - 1, 0), width - 1)
        case UInt8(ascii: "m"):
            for value in numbers.map({ $0 ?? 0 }) {
                if value == 0 { reverse = false } else if value == 7 { reverse = true } else if value == 27 { reverse = false }
            }
        case UInt8(ascii: "h") where isPrivate:
            for mode in numbers.compactMap({ $0 }) {
                modes.insert(mode)
                if mode == 25 { cursorVisible = true }
                if mode == 1049 { clear(rows: 0..<height) }
            }
        case UInt8(ascii: "l") where isPrivate:
            for mode in numbers.compactMap({ $0 }) {
                modes.remove(mode)
                if mode == 25 { cursorVisible = false }
            }
        default:
            break
        }
    }

    private mutating func clear(rows: Range<Int>) {
        for row in rows where row >= 0 && row < height {
            grid[row] = Array(repeating: " ", count: width)
            reversed[row] = Array(repeating: false, count: width)
        }
    }

    private mutating func clearLine(from column: Int) {
        for position in column..<width where position >= 0 {
            grid[cursor.row][position] = " "
            reversed[cursor.row][position] = false
        }
    }

    /// Resizes the grid (a window resize); the text is kept where it fits.
    public mutating func resize(width newWidth: Int, height newHeight: Int) {
        var newGrid = Array(repeating: Array(repeating: Character(" "), count: newWidth), count: newHeight)
        for row in 0..<min(height, newHeight) {
            for column in 0..<min(width, newWidth) { newGrid[row][column] = grid[row][column] }
        }
        grid = newGrid
        reversed = Array(repeating: Array(repeating: false, count: newWidth), count: newHeight)
        width = newWidth
        height = newHeight
        cursor = (min(cursor.column, newWidth - 1), min(cursor.row, newHeight - 1))
    }
}
