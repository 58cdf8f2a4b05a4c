import Foundation
import Testing
import BerthTestSupport
@testable import BerthCLI
@_spi(Engine) import BerthRuntime

/// Contracts as facts written once (issue 41): `pack` writes the contracts a Swift plugin's
/// code provides and consumes into its manifest, `check` finds a hand-written manifest that
/// disagrees, and `validate` and `berth run` warn of a contract consumed and provided by no
/// plugin given. The host runs in the mode BERTH_ISOLATION names.
@Suite("Contracts: pack fills them, check compares them, validate and run warn", .serialized)
struct ContractFactsCLITests {
    private func facts(provides: [String]?, consumes: [String]?) -> ManifestFacts {
        var description = LibraryDescription(entry: "berth_reminders_entry_v1", id: "com.nu.reminders", abi: "1.2", describes: true)
        description.runtime = "swift"
        description.routes = []
        description.provides = provides
        description.consumes = consumes
        return ManifestFacts(description: description, manifestPath: "reminders/plugin.json", library: "/build/libReminders.so")
    }

    @Test("fill writes the code's contracts into a manifest without them, leaving out an empty list")
    func fillWritesContracts() {
        var manifest: [String: Any] = [:]
        #expect(facts(provides: ["com.nu.reminders.ReminderClock"], consumes: []).fill(&manifest).isEmpty)
        let contracts = manifest["contracts"] as? [String: Any]
        #expect(contracts?["provides"] as? [String] == ["com.nu.reminders.ReminderClock"], "\(manifest)")
        #expect(contracts?["consumes"] == nil, "\(manifest)")
        var none: [String: Any] = [:]
        _ = facts(provides: [], consumes: nil).fill(&none)
        #expect(none["contracts"] == nil, "no contract: no field")
    }

    @Test("a manifest that disagrees with the code is one line per contract, naming the field and both places")
    func checkNamesEachDisagreement() {
        let stated: [String: Any] = ["contracts": ["provides": ["com.nu.reminders.Old"], "consumes": ["org.berth.Clock"]]]
        let lines = facts(provides: ["com.nu.reminders.ReminderClock"], consumes: ["org.berth.Clock"]).check(stated)
        #expect(lines == [
            "reminders/plugin.json: contracts.provides: libReminders.so (berth_describe_v1) provides 'com.nu.reminders.ReminderClock', plugin.json's contracts.provides does not list it",
            "reminders/plugin.json: contracts.provides: plugin.json lists 'com.nu.reminders.Old', libReminders.so (berth_describe_v1) does not provide it (it provides 'com.nu.reminders.ReminderClock')",
        ])
        // A hand-written manifest without contracts states none; a description without them checks none.
        #expect(facts(provides: nil, consumes: ["org.berth.Clock"]).check([:]) == [
            "reminders/plugin.json: contracts.consumes: libReminders.so (berth_describe_v1) consumes 'org.berth.Clock', plugin.json's contracts.consumes does not list it",
        ])
        #expect(facts(provides: nil, consumes: nil).check(stated).isEmpty)
        // fill (pack) leaves a list it would write to the code, and still reports a stated one that disagrees.
        var packed = stated
        #expect(facts(provides: ["com.nu.reminders.Old"], consumes: []).fill(&packed) == [
            "reminders/plugin.json: contracts.consumes: plugin.json lists 'org.berth.Clock', libReminders.so (berth_describe_v1) does not consume it (it consumes none)",
        ])
    }

    @Test("validate of a folder of plugins, or of several, warns of each contract consumed and not provided there, in one line, and passes; of one plugin it does not")
    func validateWarns() throws {
        let workspace = PluginWorkspace()
        workspace.stageContractFixtures(provider: true, consumes: ["org.berth.Clock", "org.acme.Weather"])
        let folder = try BerthProcess.run(["validate", "--static", "plugins"], in: workspace.root)
        let said = folder.standardOutput + folder.standardError
        #expect(folder.status == 0, "a warning fails nothing: \(said)")
        #expect(said.contains("plugins/alarm: ok (org.berth.alarm") && said.contains("plugins/clock: ok (org.berth.clock"), "\(said)")
        #expect(said.components(separatedBy: "warning: org.berth.alarm consumes org.acme.Weather, which no plugin in plugins/ provides\n").count == 2, "\(said)")
        #expect(!said.contains("consumes org.berth.Clock"), "\(said)")

        // A plugin validated alone is not warned (its providers are elsewhere); several plugin
        // folders are, and the line names them.
        let alone = try BerthProcess.run(["validate", "--static", "plugins/alarm"], in: workspace.root)
        #expect(alone.status == 0)
        #expect(!alone.standardOutput.contains("consumes"), "\(alone.standardOutput)")
        let both = try BerthProcess.run(["validate", "--static", "--json", "plugins/clock", "plugins/alarm"], in: workspace.root)
        #expect(both.standardOutput.contains("org.berth.alarm consumes org.acme.Weather, which no plugin in plugins/clock/ or plugins/alarm/ provides"), "\(both.standardOutput)")
        #expect(!both.standardOutput.contains("consumes org.berth.Clock"), "\(both.standardOutput)")
    }

    @Test("berth run prints the warning once at start, and the consumer still loads")
    func runWarnsOnce() throws {
        let workspace = PluginWorkspace()
        workspace.stageContractFixtures(provider: false, consumes: ["org.berth.Clock"])
        let run = try BerthProcess.run(["run", "--plugins", "plugins", "--script", "-"], in: workspace.root, input: "discover\nplugins\n")
        let said = run.standardOutput + run.standardError
        #expect(run.status == 0, "\(said)")
        #expect(said.components(separatedBy: "org.berth.alarm: consumes org.berth.Clock, which no plugin in plugins/ provides").count == 2, "\(said)")
        #expect(said.contains("org.berth.alarm: generation 1 loaded"), "\(said)")
    }
}
