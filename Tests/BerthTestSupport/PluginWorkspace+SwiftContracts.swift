import Foundation
import Testing

/// The Swift contract fixtures (issue 41): org.berth.reminders (Tests/Fixtures/BerthReminders,
/// the provider) and org.berth.habits / org.berth.habits-other (Tests/Fixtures/BerthHabits,
/// the consumer), over the contract package Tests/Fixtures/ReminderContract.
extension PluginWorkspace {
    /// Stages the provider in `plugins/org.berth.reminders`, after `edit` changes its manifest.
    public func stageReminders(isolation: String? = nil, edit: (inout [String: Any]) -> Void = { _ in }) {
        stageSwift(id: "org.berth.reminders", library: "libBerthReminders.so", entry: "berth_reminders_entry_v1",
                   routes: [], capabilities: ["services.provide"], isolation: isolation, edit: edit)
    }

    /// Stages a consumer (`other`: org.berth.habits-other) in `plugins/<id>`, after `edit`
    /// changes its manifest.
    public func stageHabits(other: Bool = false, isolation: String? = nil, edit: (inout [String: Any]) -> Void = { _ in }) {
        stageSwift(id: other ? "org.berth.habits-other" : "org.berth.habits", library: "libBerthHabits.so",
                   entry: other ? "berth_habits_other_entry_v1" : "berth_habits_entry_v1",
                   routes: ["habits"], capabilities: ["services.consume", "session"], isolation: isolation, edit: edit)
    }

    private func stageSwift(id: String, library: String, entry: String, routes: [String], capabilities: [String],
                            isolation: String?, edit: (inout [String: Any]) -> Void) {
        let folder = (plugins as NSString).appendingPathComponent(id)
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: BuildProducts.library(library), toPath: (folder as NSString).appendingPathComponent(library))
        } catch {
            Issue.record("workspace setup: stage \(library) as \(id): \(error)")
        }
        var manifest: [String: Any] = [
            "id": id, "name": id, "version": "1.0.0", "abi": "1.2", "library": library, "entry": entry,
            "runtime": "swift", "routes": routes, "capabilities": capabilities,
        ]
        if let isolation { manifest["isolation"] = isolation }
        edit(&manifest)
        write(manifest: manifest, in: folder)
    }
}
