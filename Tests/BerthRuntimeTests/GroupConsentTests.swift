import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Worker groups only by consent (Docs/isolation.md, "Worker groups"): a plugin shares a
/// group's worker only when the host's configuration lists it there, or every member is
/// signed by one trusted key; otherwise it is refused in one line and runs alone. Inside a
/// group a request acts only for the member whose code the host called. Groups exist only
/// for plugins in workers, so these hosts run every plugin in one.
@Suite("Worker groups by consent") @MainActor
struct GroupConsentTests {
    private let workspace = PluginWorkspace()
    private let recorder = LogRecorder()
    private let group = "greeter-family"

    /// Greeter, Profile (and the users it requires) and the flooder, which names Greeter's group too.
    private func stage() {
        for manifest in ["greeter.json", "userpicker.json", "profile.json"] { workspace.stage(manifest) }
        workspace.stageFlooder(manifest: ["isolation": ["group": group]])
    }

    private func host(groups: [String: Set<String>], signatures: SignaturePolicy = SignaturePolicy()) throws -> BerthHost {
        let host = try workspace.makeHost(recorder: recorder, isolation: TestIsolation.settings(.always(.process)),
                                          signatures: signatures, groups: groups)
        let errors = host.loadAll()
        if let first = errors.first { throw first }
        return host
    }

    private func pid(_ host: BerthHost, _ id: String) throws -> Int32 {
        try #require(host.generation(of: id)?.workerPID, "\(id) has no worker")
    }

    /// The one `denied` line about the flooder's group.
    private func refusal(_ host: BerthHost) -> [String] {
        host.events.filter { $0.kind == .denied && $0.subject == .plugin("org.berth.flooder") && $0.message.contains("worker group") }.map(\.message)
    }

    @Test("a plugin the configuration does not list in its group is refused in one line naming the fix and runs alone; the listed members share one worker")
    func refusedByConfiguration() throws {
        stage()
        let host = try host(groups: PluginWorkspace.exampleGroups)
        #expect(try pid(host, "com.example.greeter") == pid(host, "com.example.profile"), "the consented group shares one worker")
        #expect(try pid(host, "org.berth.flooder") != pid(host, "com.example.greeter"), "the unlisted plugin runs alone")
        let lines = refusal(host)
        #expect(lines.count == 1, "\(lines)")
        let line = lines.first ?? ""
        #expect(line.contains("may not join worker group 'greeter-family'") && line.contains("lists only com.example.greeter, com.example.profile")
                && line.contains("--group greeter-family=com.example.greeter,com.example.profile,org.berth.flooder") && !line.contains("\n"), "\(line)")
        // Its lines are its own, not the group's.
        let screen = try host.push("flood")
        try host.sendBlocking(screen: screen.id, action: "log-burst", payload: Array("1".utf8))
        #expect(recorder.matching("[org.berth.flooder#1] line 0").count == 1, "\(recorder.all.suffix(2))")
    }

    @Test("with no group configured, members signed by one trusted key share a worker, and an unsigned plugin naming the group runs alone")
    func consentBySignature() throws {
        stage()
        let trust = workspace.root + "/trusted-keys"
        let key = PluginSigningKey(name: "family")
        _ = try key.write(to: workspace.root + "/keys")
        try FileManager.default.createDirectory(atPath: trust, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: workspace.root + "/keys/family.public", toPath: trust + "/family.public")
        for id in ["com.example.greeter", "com.example.profile"] {
            try PluginValidator.validate(path: workspace.plugins + "/" + id).get().writeSignature(with: key)
        }
        let host = try host(groups: [:], signatures: SignaturePolicy(trustedKeysFolder: trust))
        #expect(try pid(host, "com.example.greeter") == pid(host, "com.example.profile"), "signed alike: one worker")
        #expect(try pid(host, "org.berth.flooder") != pid(host, "com.example.greeter"), "unsigned: alone")
        let line = refusal(host).first ?? ""
        #expect(line.contains("not signed by a trusted key (unsigned)") && line.contains("sign every member with one trusted key"), "\(line)")
        // Profile still uses Greeter's service in the shared worker.
        let profile = try host.push("profile")
        try host.sendBlocking(screen: profile.id, action: "greet", payload: [])
        #expect(recorder.matching("Greetings, stranger").count == 1)
    }

    @Test("with no group configured and nothing signed, two plugins naming one group each run alone")
    func unsignedRunAlone() throws {
        workspace.stage("greeter.json")
        workspace.stageFlooder(manifest: ["isolation": ["group": group]])
        let host = try host(groups: [:])
        #expect(try pid(host, "org.berth.flooder") != pid(host, "com.example.greeter"))
        #expect(refusal(host).count == 1)
    }

    @Test("inside a group a request acts only for the member whose code the host called: session_begin with a sibling's handle is refused")
    func siblingHandle() throws {
        stage()
        var groups = PluginWorkspace.exampleGroups
        groups[group, default: []].insert("org.berth.flooder")
        let host = try host(groups: groups)
        #expect(try pid(host, "org.berth.flooder") == pid(host, "com.example.greeter"), "consented: it shares the worker")
        let screen = try host.push("flood")
        // Greeter is the group's first member (its worker's member 1); Greeter may begin sessions.
        #expect { try host.sendBlocking(screen: screen.id, action: "forge-session", payload: Array("1".utf8)) } throws: { error in
            "\(error)".contains("session_begin: the handle is com.example.greeter's, but the host is calling org.berth.flooder's code")
        }
        guard case .int32(1) = try host.generation(of: "org.berth.flooder")?.call("flooder_forged_member", arguments: []) else {
            Issue.record("the flooder did not forge Greeter's member number")
            return
        }
        #expect(host.scopes.currentSession == nil, "no session was begun for Greeter")
        // Its own handle is refused for its own lack of the capability.
        #expect { try host.sendBlocking(screen: screen.id, action: "forge-session", payload: Array("3".utf8)) } throws: { error in
            "\(error)".contains("session")
        }
        #expect(host.scopes.currentSession == nil)
        // Every line of the group's worker is the group's: the host cannot tell members apart.
        try host.sendBlocking(screen: screen.id, action: "log-burst", payload: Array("1".utf8))
        #expect(recorder.matching("[group greeter-family] line 0").count == 1, "\(recorder.all.suffix(2))")
    }
}
