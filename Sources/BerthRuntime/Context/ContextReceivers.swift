@_spi(Engine) import BerthCore
/// The screens a context reached, in delivery order. The first four are kept inline, so a
/// dispatch to a few observers allocates nothing; more spill into an array.
struct ContextReceivers: Sendable, Equatable, RandomAccessCollection {
    private var inline: (Int, Int, Int, Int) = (0, 0, 0, 0)
    private var overflow: [Int] = []
    private(set) var count = 0

    init() {}

    init(_ ids: some Sequence<Int>) {
        for id in ids { append(id) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> Int {
        precondition(position >= 0 && position < count, "receiver \(position) of \(count)")
        switch position {
        case 0: return inline.0
        case 1: return inline.1
        case 2: return inline.2
        case 3: return inline.3
        default: return overflow[position - 4]
        }
    }

    mutating func append(_ id: Int) {
        switch count {
        case 0: inline.0 = id
        case 1: inline.1 = id
        case 2: inline.2 = id
        case 3: inline.3 = id
        default: overflow.append(id)
        }
        count += 1
    }

    static func == (left: ContextReceivers, right: ContextReceivers) -> Bool {
        left.elementsEqual(right)
    }
}
