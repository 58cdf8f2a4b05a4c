import Foundation
import Testing
import BerthTestSupport

/// The contracts a Swift plugin's code provides (`Service.provides`) and consumes
/// (`Plugin(consumes:)`) reach `berth validate` through the SDK's `berth_describe_v1`, with
/// the built fixtures org.berth.reminders and org.berth.habits.
@Suite("Swift contracts as facts of the code")
struct SwiftContractFactsCLITests {
    /// The `contracts.` lines `validate` prints for the two fixtures.
    private func contractLines(_ workspace: PluginWorkspace) throws -> [String] {
        let output = try BerthProcess.run(["validate", "plugins/org.berth.reminders", "plugins/org.berth.habits"], in: workspace.root)
        return output.standardOutput.split(separator: "\n").map(String.init).filter { $0.contains(": contracts.") }
    }

    @Test("validate reads them from the SDK's describe: a manifest without contracts gets one line per contract")
    func validateReadsTheCode() throws {
        let workspace = PluginWorkspace()
        workspace.stageReminders()
        workspace.stageHabits()
        let lines = try contractLines(workspace)
        #expect(lines == [
            "plugins/org.berth.reminders/plugin.json: contracts.provides: libBerthReminders.so (berth_describe_v1) provides 'org.berth.reminders.ReminderClock', plugin.json's contracts.provides does not list it",
            "plugins/org.berth.reminders/plugin.json: contracts.provides: libBerthReminders.so (berth_describe_v1) provides 'org.berth.reminders.Tally', plugin.json's contracts.provides does not list it",
            "plugins/org.berth.habits/plugin.json: contracts.consumes: libBerthHabits.so (berth_describe_v1) consumes 'org.berth.reminders.ReminderClock', plugin.json's contracts.consumes does not list it",
            "plugins/org.berth.habits/plugin.json: contracts.consumes: libBerthHabits.so (berth_describe_v1) consumes 'org.berth.reminders.Tally', plugin.json's contracts.consumes does not list it",
            "plugins/org.berth.habits/plugin.json: contracts.consumes: libBerthHabits.so (berth_describe_v1) consumes 'org.berth.Clock', plugin.json's contracts.consumes does not list it",
        ], "\(lines)")
    }

    @Test("manifests that list what the code provides and consumes agree with it")
    func manifestsThatAgree() throws {
        let workspace = PluginWorkspace()
        workspace.stageReminders { $0["contracts"] = ["provides": ["org.berth.reminders.ReminderClock", "org.berth.reminders.Tally"]] }
        workspace.stageHabits { $0["contracts"] = ["consumes": ["org.berth.reminders.ReminderClock", "org.berth.reminders.Tally", "org.berth.Clock"]] }
        #expect(try contractLines(workspace).isEmpty)
    }
}
