import BerthCore
/// What a `berth_screen_handle *` points to in a worker: the host's id for the screen and,
/// once `create` returned, the instance. Valid from `create` until `destroy` (berth.h).
@MainActor
final class WorkerScreen {
    /// The host's screen id, named in every request forwarded for this screen.
    nonisolated let hostScreenID: UInt64
    /// Set once `create` returned; nil while the plugin is still creating the instance.
    weak var instance: WorkerInstance?

    init(hostScreenID: UInt64) {
        self.hostScreenID = hostScreenID
    }

    /// The opaque handle given to the plugin; the instance record keeps this object alive.
    var opaque: OpaquePointer { OpaquePointer(Unmanaged.passUnretained(self).toOpaque()) }

    nonisolated static func from(_ handle: OpaquePointer?) -> WorkerScreen? {
        guard let handle else { return nil }
        return Unmanaged<WorkerScreen>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
    }
}
