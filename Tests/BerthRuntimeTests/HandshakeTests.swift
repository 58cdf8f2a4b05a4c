import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport
import CBerth
import Glibc

/// The ABI handshake, driven by the C fixture library's deliberately odd entry points.
@Suite("ABI handshake") @MainActor
struct HandshakeTests {
    private func loadFixture(entry: String, edit: (inout [String: Any]) -> Void = { _ in }) throws -> (PluginWorkspace, BerthHost, Result<PluginGeneration, LoaderError>) {
        let workspace = PluginWorkspace()
        workspace.stageFixture(folder: "fixture", entry: entry, edit: edit)
        let host = try workspace.makeHost()
        let result = Result { () throws(LoaderError) in try host.load("org.berth.fixtures") }
        return (workspace, host, result)
    }

    private func expectHandshakeFailure(entry: String, _ message: String, edit: (inout [String: Any]) -> Void = { _ in }) throws {
        let (_, host, result) = try loadFixture(entry: entry, edit: edit)
        guard case .failure(let error) = result else {
            Issue.record("\(entry) loaded but should have failed the handshake")
            return
        }
        #expect(error.code == .handshakeFailed)
        #expect(error.message.contains(message), "\(error.message)")
        #expect(host.generation(of: "org.berth.fixtures") == nil)
    }

    @Test("a well-formed table passes and reports its ABI")
    func wellFormed() throws {
        let (_, _, result) = try loadFixture(entry: "fixture_entry_ok")
        let generation = try result.get()
        #expect(generation.handshake.abi == ABIVersion(major: 1, minor: 2))
        #expect(generation.state == .loaded)
    }

    @Test("a plugin built for a newer major ABI is refused as too new")
    func tooNew() throws {
        try expectHandshakeFailure(entry: "fixture_entry_too_new", "plugin ABI 2.0 is too new for this host")
    }

    @Test("a plugin built for an older major ABI is refused as too old")
    func tooOld() throws {
        try expectHandshakeFailure(entry: "fixture_entry_too_old", "plugin ABI 0.9 is too old for this host")
    }

    @Test("a table shorter than the v1.0 minimum is refused")
    func shortTable() throws {
        try expectHandshakeFailure(entry: "fixture_entry_short", "is 16 bytes, shorter than the v1.0 minimum of 112")
    }

    @Test("an entry that returns NULL is refused")
    func nullTable() throws {
        try expectHandshakeFailure(entry: "fixture_entry_null", "returned NULL")
    }

    @Test("a table whose plugin id differs from the manifest is refused")
    func wrongID() throws {
        try expectHandshakeFailure(entry: "fixture_entry_wrong_id", "the library says it is 'org.berth.somebody-else'")
    }

    @Test("routes without create and destroy are refused")
    func routesWithoutCreate() throws {
        try expectHandshakeFailure(entry: "fixture_entry_no_create", "create or .destroy is NULL")
    }

    @Test("a manifest naming a later minor than the library reports is refused; an earlier one loads")
    func manifestMismatch() throws {
        try expectHandshakeFailure(entry: "fixture_entry_ok", "the library reports ABI 1.2 but the manifest says 1.7") { $0["abi"] = "1.7" }
        let (_, _, older) = try loadFixture(entry: "fixture_entry_newer_minor") { $0["abi"] = "1.0" }
        #expect(try older.get().handshake.abi == ABIVersion(major: 1, minor: 7))
    }

    @Test("a newer minor revision of the same major loads")
    func newerMinorLoads() throws {
        let (_, _, result) = try loadFixture(entry: "fixture_entry_newer_minor") { $0["abi"] = "1.7" }
        #expect(try result.get().handshake.abi == ABIVersion(major: 1, minor: 7))
    }

    @Test("a longer table from a future minor loads; the host reads only the fields it knows")
    func longerTableLoads() throws {
        let (_, _, result) = try loadFixture(entry: "fixture_entry_longer")
        let generation = try result.get()
        #expect(generation.handshake.tableSize > 112)
        #expect(generation.handshake.functions.contains(.create))
    }

    @Test("the host table follows the same rule: the fixture refuses a host table too short for log, and takes the host's")
    func hostTableHasLog() throws {
        let image = try #require(dlopen(BuildProducts.library("libBerthFixtures.so"), RTLD_NOW | RTLD_LOCAL))
        defer { dlclose(image) }
        let entry = unsafeBitCast(try #require(dlsym(image, "fixture_entry_ok")), to: berth_entry_v1.self)
        #expect(entry(HostTable.pointer, nil) != nil, "the host's own table has log inside its struct_size")
        var short = HostTable.pointer.pointee
        short.struct_size = UInt32(MemoryLayout<berth_host_v1>.offset(of: \berth_host_v1.log)!)
        #expect(withUnsafePointer(to: &short) { entry($0, nil) } == nil, "a table that ends before log is refused")
    }
}
