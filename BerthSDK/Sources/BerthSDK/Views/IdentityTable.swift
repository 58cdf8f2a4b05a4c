/// The structural identities of one screen's views, interned: each identity path is built
/// once, gets the next small number, and travels to the host once, in the first tree that
/// uses it; later trees and state slots name it by number.
///
/// A view's identity is found from its parent's id and its position (child index and type,
/// body and type, branch, or `ForEach` row id), so a steady render pass builds no strings.
final class IdentityTable {
    /// A view below its parent: its child index (or a marker below), its type's name id
    /// (or the branch taken), and its id.
    private struct Child {
        let slot: Int32
        let name: UInt32
        let id: UInt32

        /// No child yet (no slot is `Int32.min`).
        static var none: Child { Child(slot: .min, name: .max, id: .max) }
    }

    private static let bodyMarker: Int32 = -1
    private static let branchMarker: Int32 = -2
    /// Beyond this many identities per view rendered, the table starts over.
    private static let growthLimit = 4

    /// Every identity path, by id. A table that starts over gets a fresh store, so a
    /// `@State` bound before keeps naming its own path.
    @exclusivity(unchecked) private(set) var paths = IdentityPaths()
    /// The first known child of each identity, by parent id, in one array: most views have
    /// one child (a composite's body, a row's view), found with no pointer to chase.
    @exclusivity(unchecked) private var firstChildren: [Child] = []
    /// The further children of identities with several, indexed by parent id like
    /// `firstChildren` (a handful each: a scan beats hashing; and no `Dictionary`, whose
    /// first use in a fresh image costs a conformance scan: see `ViewTypes`). An identity
    /// with one child holds the empty array, which allocates nothing.
    @exclusivity(unchecked) private var moreChildren: [[Child]] = []
    /// The screen roots: (type name id, identity), one per screen type rendered (a scan,
    /// and no `Dictionary`, whose first use in a fresh image costs a conformance scan: see
    /// `ViewTypes`).
    private var roots: [(name: UInt32, id: UInt32)] = []
    private var rowTables: [UInt32: AnyObject] = [:]
    /// How many identities the host has been sent.
    private(set) var sentCount = 0
    /// True when the host must forget every id before the next tree's definitions.
    private(set) var resetPending = false
    /// The pass each row identity was last claimed in, and at which row.
    @exclusivity(unchecked) private var claimedPass: [UInt32] = []
    @exclusivity(unchecked) private var claimedRow: [Int32] = []
    @exclusivity(unchecked) private var pass: UInt32 = 0
    /// Identities the last pass used.
    var lastPassUsed = 0
    /// Bytes of the last pass's nodes.
    var lastPassBytes = 0

    /// Starts a render pass. A table grown far beyond what the screen showed last time
    /// (rows that came and went) starts over first, and the next tree says so.
    func beginPass() {
        if paths.count > Self.growthLimit * max(lastPassUsed, 1_024) {
            paths = IdentityPaths()
            firstChildren.removeAll(keepingCapacity: true)
            moreChildren.removeAll(keepingCapacity: true)
            roots.removeAll()
            rowTables.removeAll()
            claimedPass.removeAll()
            claimedRow.removeAll()
            sentCount = 0
            resetPending = true
        }
        pass &+= 1
    }

    /// Marks row identity `id` as used by row `row` of this pass; returns the earlier row
    /// when another row of this pass already used it (a repeated id).
    func claim(_ id: UInt32, row: Int) -> Int? {
        let index = Int(id)
        if index >= claimedPass.count {
            let grow = max(paths.count, index + 1) - claimedPass.count
            claimedPass.append(contentsOf: repeatElement(0, count: grow))
            claimedRow.append(contentsOf: repeatElement(0, count: grow))
        }
        if claimedPass[index] == pass { return Int(claimedRow[index]) }
        claimedPass[index] = pass
        claimedRow[index] = Int32(truncatingIfNeeded: row)
        return nil
    }

    /// The identity of the screen's root: `<Screen>`.
    func root(name: UInt32, path: () -> String) -> UInt32 {
        if let known = roots.first(where: { $0.name == name }) { return known.id }
        let id = append(path())
        roots.append((name, id))
        return id
    }

    /// `<parent>.<index>/<Type>`.
    func child(of parent: UInt32, index: Int, name: UInt32, type: () -> String) -> UInt32 {
        intern(parent, slot: Int32(truncatingIfNeeded: index), name: name) { "\(paths[parent]).\(index)/\(type())" }
    }

    /// `<parent>/<BodyType>`.
    func body(of parent: UInt32, name: UInt32, type: () -> String) -> UInt32 {
        intern(parent, slot: Self.bodyMarker, name: name) { "\(paths[parent])/\(type())" }
    }

    /// `<if>#true` or `<if>#false`.
    func branch(of parent: UInt32, taken: Bool) -> UInt32 {
        intern(parent, slot: Self.branchMarker, name: taken ? 1 : 0) { "\(paths[parent])#\(taken)" }
    }

    /// The row table of the `ForEach` at `forEach`, typed by its element ids.
    func rows<ID: Hashable>(of forEach: UInt32, _ type: ID.Type) -> RowTable<ID> {
        if let table = rowTables[forEach] as? RowTable<ID> { return table }
        let table = RowTable<ID>()
        rowTables[forEach] = table
        return table
    }

    /// `<ForEach>.<row id>` (escaped), `~N` for the N-th repeat of an id.
    func row<ID: Hashable>(_ table: RowTable<ID>, of forEach: UInt32, id: ID, occurrence: Int) -> UInt32 {
        if let known = table.lookup(id, occurrence: occurrence) { return known }
        var path = "\(paths[forEach]).\(RowIDs.escaped("\(id)"))"
        if occurrence > 0 { path += "~\(occurrence)" }
        let row = append(path)
        table.store(id, occurrence: occurrence, row)
        return row
    }

    /// The id of a path this table holds (input names its view by path).
    func id(of path: String) -> UInt32? {
        paths.all.firstIndex(of: path).map { UInt32($0) }
    }

    /// The definitions the host has not seen yet (id, path), marked as sent.
    func takeUnsent() -> ArraySlice<String> {
        defer { sentCount = paths.count }
        return paths.all[sentCount...]
    }

    /// Acknowledges that the reset went out with a tree.
    func resetSent() { resetPending = false }

    private func intern(_ parent: UInt32, slot: Int32, name: UInt32, _ path: () -> String) -> UInt32 {
        let first = firstChildren[Int(parent)]
        if first.slot == slot && first.name == name { return first.id }
        return internBeyondFirst(parent, slot: slot, name: name, first: first, path)
    }

    /// `intern` past the common case, kept out of line: the steady pass finds the first
    /// child and touches nothing else.
    @inline(never)
    private func internBeyondFirst(_ parent: UInt32, slot: Int32, name: UInt32, first: Child, _ path: () -> String) -> UInt32 {
        if first.id == Child.none.id {
            let id = append(path())
            firstChildren[Int(parent)] = Child(slot: slot, name: name, id: id)
            return id
        }
        for child in moreChildren[Int(parent)] where child.slot == slot && child.name == name { return child.id }
        let id = append(path())
        moreChildren[Int(parent)].append(Child(slot: slot, name: name, id: id))
        return id
    }

    private func append(_ path: String) -> UInt32 {
        paths.append(path)
        firstChildren.append(.none)
        moreChildren.append([])
        return UInt32(paths.count - 1)
    }
}

/// The identity paths of one screen, by id: appended to as identities are interned, never
/// changed. A bound `@State` names its path by this store and id (one reference every
/// `@State` of the screen shares, instead of a reference to its own path string).
final class IdentityPaths {
    @exclusivity(unchecked) private(set) var all: [String] = []

    var count: Int { all.count }

    subscript(id: UInt32) -> String { all[Int(id)] }

    func append(_ path: String) { all.append(path) }
}

/// The row identities of one `ForEach`, by element id and repeat. `Int` and `String` ids
/// (the common ones) get dictionaries of their own type, which the SDK's unspecialized
/// generic code would otherwise hash through value witnesses.
final class RowTable<ID: Hashable> {
    private struct Key: Hashable {
        let id: ID
        let occurrence: Int
    }

    /// Rows of small non-negative `Int` ids (row numbers, indices), by id: no hashing.
    @exclusivity(unchecked) private var smallInts: [UInt32] = []
    @exclusivity(unchecked) private var ints: [Int: UInt32] = [:]
    @exclusivity(unchecked) private var strings: [String: UInt32] = [:]
    private var others: [Key: UInt32] = [:]
    /// `smallInts` covers ids below this (4 bytes per id up to it, 4 MB at most).
    private static var smallIntLimit: Int { 1 << 20 }
    private static var absent: UInt32 { .max }

    func lookup(_ id: ID, occurrence: Int) -> UInt32? {
        if occurrence == 0, ID.self == Int.self {
            let int = unsafeBitCast(id, to: Int.self)
            guard int >= 0, int < Self.smallIntLimit else { return ints[int] }
            return int < smallInts.count && smallInts[int] != Self.absent ? smallInts[int] : nil
        }
        if occurrence == 0, ID.self == String.self { return strings[unsafeBitCast(id, to: String.self)] }
        return others[Key(id: id, occurrence: occurrence)]
    }

    func store(_ id: ID, occurrence: Int, _ row: UInt32) {
        if occurrence == 0, ID.self == Int.self {
            let int = unsafeBitCast(id, to: Int.self)
            guard int >= 0, int < Self.smallIntLimit else {
                ints[int] = row
                return
            }
            if int >= smallInts.count {
                smallInts.append(contentsOf: repeatElement(Self.absent, count: max(int + 1, smallInts.count * 2) - smallInts.count))
            }
            smallInts[int] = row
        } else if occurrence == 0, ID.self == String.self {
            strings[unsafeBitCast(id, to: String.self)] = row
        } else {
            others[Key(id: id, occurrence: occurrence)] = row
        }
    }
}
