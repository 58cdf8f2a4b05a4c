@_spi(Engine) import BerthCore

/// A tree rendered on the plugin's lane right after an action (in its worker, or on the
/// in-process lane), for the host's next render of the same instance while its state
/// storage is as the action left it.
struct PrerenderedTree<Output> {
    let instance: PluginInstanceID
    let storage: StateStorage
    let version: UInt64
    /// The storage's slots in the order the render's batch had them (for the GC bitmap).
    let batchKeys: [StateStorage.Key]
    /// The worker group's calls made by then: a call by another member since (a shared
    /// service changed, say) makes it stale too. Nil in process, where every call into the
    /// plugin drops the tree itself.
    let callsMade: UInt64?
    /// The render: its tree, or its failure (reported as the host's render's).
    let result: Output

    /// The render, when it stands for a render of `instance` now (`calls`: the group's so
    /// far); the storage's batch is the render's again.
    @MainActor
    func take(for instance: PluginInstanceID, state: StateStorage, callsMade calls: UInt64? = nil) -> Output? {
        guard self.instance == instance, storage === state, version == state.version, callsMade == calls else { return nil }
        state.batchKeys = batchKeys
        return result
    }
}
