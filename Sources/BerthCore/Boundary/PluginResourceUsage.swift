package import CBerthSystem
internal import Glibc

/// The heap and CPU time of the process a plugin runs in: the host's own for an in-process
/// plugin, its worker's for an isolated one. `berth validate`'s leak and scan-time checks
/// read it where the plugin's code actually runs.
/// `package`: for `berth conformance-check`, which drives a table by hand; apps use `BerthHost`.
package struct PluginResourceUsage: Sendable, Equatable {
    /// Bytes the C heap has handed out and not taken back.
    package var heapBytes: UInt64
    /// CPU time the process has used so far; a worker counts from its hello (the load of
    /// its plugin), leaving out its own start-up.
    package var cpuNanoseconds: UInt64

    package init(heapBytes: UInt64, cpuNanoseconds: UInt64) {
        self.heapBytes = heapBytes
        self.cpuNanoseconds = cpuNanoseconds
    }

    /// This process's usage now.
    package static var current: PluginResourceUsage {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return PluginResourceUsage(heapBytes: berth_heap_bytes_in_use(),
                                   cpuNanoseconds: UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec))
    }
}
