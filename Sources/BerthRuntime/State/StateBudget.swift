@_spi(Engine) import BerthCore
/// What one plugin generation may keep in the host's state storage, over all its screens:
/// bytes and slots (the manifest's `limits.state` and `limits.stateSlots`). `state_write`
/// needs no capability, so without it a plugin could grow the host without end. A slot
/// costs its value, its identity path and `slotOverhead` (a flood of empty slots costs too).
@MainActor
package final class StateBudget {
    /// The plugin whose state it counts.
    package let pluginID: String
    /// The most bytes its slots may hold.
    package let byteLimit: Int
    /// The most slots it may have.
    package let slotLimit: Int
    /// Bytes its slots hold now.
    package private(set) var bytes = 0
    /// Slots it has now.
    package private(set) var slots = 0
    /// Writes refused so far.
    package private(set) var refusedWrites = 0

    /// The bytes a slot costs beyond its value and identity (its key and table entry).
    static let slotOverhead = 64

    init(pluginID: String, limits: PluginLimits) {
        self.pluginID = pluginID
        byteLimit = limits.stateBytes
        slotLimit = limits.stateSlots
    }

    /// What a slot of `identity` holding `value` bytes costs.
    static func cost(identity: String, value: Int) -> Int {
        identity.utf8.count + value + slotOverhead
    }

    /// Whether replacing a slot that cost `old` (nil: a new slot) by one costing `new` fits.
    func admits(replacing old: Int?, with new: Int) -> Bool {
        let slotsAfter = slots + (old == nil ? 1 : 0)
        return bytes - (old ?? 0) + new <= byteLimit && slotsAfter <= slotLimit
    }

    func changed(bytes delta: Int, slots slotDelta: Int) {
        bytes += delta
        slots += slotDelta
    }

    /// Counts a refused write; returns whether it is the first since the plugin was last
    /// within budget (the host reports that one as an event, not every retry).
    func refused() -> Bool {
        refusedWrites += 1
        return refusedWrites == 1
    }

    /// The one line that refuses a write of `value` bytes at `identity`.
    func refusal(identity: String, value: Int) -> String {
        "state_write \(identity): \(pluginID) holds \(ByteCountText.binary(bytes)) in \(slots) slot(s) of host state; "
            + "a write of \(ByteCountText.binary(value)) is over its budget of \(ByteCountText.binary(byteLimit)) and \(slotLimit) slots "
            + "(limits.state and limits.stateSlots in its manifest)"
    }

    /// `1.2 MiB of 16 MiB, 40 of 65536 slots`, for `status`.
    package var usage: String {
        "\(ByteCountText.binary(bytes)) of \(ByteCountText.binary(byteLimit)), \(slots) of \(slotLimit) slots"
    }
}
