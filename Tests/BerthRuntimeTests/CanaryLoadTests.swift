import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// In-process plugins whose load-time code crashes: the trial worker takes the crash, the
/// host (this test process) refuses the plugin and goes on.
@Suite("Canary load (in-process plugins)") @MainActor
struct CanaryLoadTests {
    private func host(_ workspace: PluginWorkspace) throws -> BerthHost {
        let host = try workspace.makeHost(isolation: .inProcessOnly)
        try host.load("com.example.greeter")
        return host
    }

    @Test("an ELF constructor that aborts is refused with the signal; nothing is mapped and the host goes on")
    func constructorAborts() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        workspace.stageCrasher(id: "org.berth.abort-on-load")
        let host = try host(workspace)
        #expect { try host.load("org.berth.abort-on-load") } throws: { error in
            let error = error as? LoaderError
            return error?.code == .canaryFailed && error?.message.contains("SIGABRT") == true
                && error?.message.contains("Fatal error: crasher aborts in its constructor") == true
        }
        #expect(host.generation(of: "org.berth.abort-on-load") == nil)
        let hello = try host.push("hello")
        #expect(hello.module?.isActive == true)
    }

    @Test("an entry that segfaults during load all is refused; the other plugins load")
    func entrySegfaults() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        workspace.stage("counter.json")
        workspace.stageCrasher(entry: "berth_crasher_entry_segv")
        let host = try workspace.makeHost(isolation: .inProcessOnly)
        let errors = host.loadAll()
        #expect(errors.count == 1)
        #expect(errors.first?.code == .canaryFailed && errors.first?.message.contains("SIGSEGV") == true, "\(errors)")
        #expect(host.generation(of: "com.example.counter") != nil && host.generation(of: "com.example.greeter") != nil)
    }

    @Test("a reload onto a library whose entry segfaults rolls back: the old generation and its screen stay")
    func reloadOntoCrashingEntry() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        workspace.stageCrasher()
        let host = try host(workspace)
        try host.load("org.berth.crasher")
        let screen = try host.push("org.berth.crasher/ok")
        workspace.stageCrasher(entry: "berth_crasher_entry_segv")
        #expect { try host.reload("org.berth.crasher") } throws: { error in
            let error = error as? LoaderError
            return error?.code == .canaryFailed && error?.rollback?.generation == 1 && error?.message.contains("SIGSEGV") == true
        }
        #expect(host.generation(of: "org.berth.crasher")?.number == 1)
        #expect(host.router(screen.id)?.module?.isActive == true, "the screen is back on generation 1")
    }
}
