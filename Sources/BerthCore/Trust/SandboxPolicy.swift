internal import Glibc

/// What an isolated plugin's worker may touch once confined (Docs/security.md). The host
/// builds it from the manifest (`SandboxPolicy(plugin:…)`) and sends it with the hello; the
/// worker adds what it needs itself (system library folders, the Swift runtime, its own
/// executable) and confines itself before it opens the plugin's library.
/// `package`: the wire format and the CLI's `--memory-limit` default; manifests set limits.
package struct SandboxPolicy: Sendable, Equatable {
    /// Folders and files the plugin may read beneath: its folder, its shadow copies, and
    /// the `files.read` grants.
    package var readPaths: [String]
    /// Folders the plugin may read and write beneath: its data folder and the `files.write` grants.
    package var writePaths: [String]
    /// The plugin's own data folder (`BERTH_PLUGIN_DATA` in the worker's environment).
    package var dataFolder: String
    /// TCP bind and connect, and UDP sockets, allowed (`network`).
    package var network: Bool
    /// The most memory the worker may take, in bytes (RLIMIT_DATA: heap, private mappings,
    /// thread stacks); 0 for no limit.
    package var memoryLimit: UInt64
    /// Variables set in the worker's environment before the plugin loads: the host's values
    /// of the names the manifest lists (`environment`), by name.
    package var environment: [String: String]
    /// The most threads the worker may run (`limits.threads`).
    package var threadLimit: UInt32
    /// Its processor share in hundredths of a core (`limits.cpu`).
    package var cpuPercent: UInt32
    /// Its data folder's quota in bytes (`limits.disk`).
    package var diskLimit: UInt64
    /// The system-call filter for `network`, built by the host (`withSystemCallFilter`); a
    /// worker refuses to confine itself without one.
    package var systemCallFilter: SystemCallFilterProgram?
    /// The worker's own cgroup folders, where the host made them; nil: the worker looks.
    package var cgroups: CgroupFolders?

    /// A worker's memory limit unless told otherwise: 1 GiB.
    package static let defaultMemoryLimit: UInt64 = 1 << 30

    package init(readPaths: [String], writePaths: [String], dataFolder: String, network: Bool, memoryLimit: UInt64 = defaultMemoryLimit,
                 environment: [String: String] = [:], threadLimit: UInt32 = PluginLimits.defaultThreads,
                cpuPercent: UInt32 = PluginLimits.defaultCPUPercent, diskLimit: UInt64 = PluginLimits.defaultDisk) {
        self.readPaths = readPaths
        self.writePaths = writePaths
        self.dataFolder = dataFolder
        self.network = network
        self.memoryLimit = memoryLimit
        self.environment = environment
        self.threadLimit = threadLimit
        self.cpuPercent = cpuPercent
        self.diskLimit = diskLimit
    }

    /// Widens this policy to admit `other` too, for a worker shared by a group: every path,
    /// network if either has it, the larger memory limit (0, none, is the largest), every
    /// variable, the larger thread, processor and disk limits. The filter is built afterwards.
    package mutating func join(_ other: SandboxPolicy) {
        readPaths += other.readPaths.filter { !readPaths.contains($0) }
        writePaths += other.writePaths.filter { !writePaths.contains($0) }
        network = network || other.network
        memoryLimit = memoryLimit == 0 || other.memoryLimit == 0 ? 0 : max(memoryLimit, other.memoryLimit)
        environment.merge(other.environment) { mine, _ in mine }
        threadLimit = max(threadLimit, other.threadLimit)
        cpuPercent = max(cpuPercent, other.cpuPercent)
        diskLimit = max(diskLimit, other.diskLimit)
        systemCallFilter = nil
    }

    package func write(to writer: inout WireWriter) {
        writer.list(readPaths) { $0.string($1) }
        writer.list(writePaths) { $0.string($1) }
        writer.string(dataFolder)
        writer.bool(network)
        writer.u64(memoryLimit)
        writer.list(environment.sorted { $0.key < $1.key }) { $0.string($1.key); $0.string($1.value) }
        writer.u32(threadLimit)
        writer.u32(cpuPercent)
        writer.u64(diskLimit)
        writer.bool(systemCallFilter != nil)
        systemCallFilter?.write(to: &writer)
        writer.bool(cgroups != nil)
        cgroups?.write(to: &writer)
    }

    package static func read(from reader: inout WireReader) throws(WireDecodingError) -> SandboxPolicy {
        let read = try reader.list(minimumElementSize: 4) { reader throws(WireDecodingError) in try reader.string() }
        let write = try reader.list(minimumElementSize: 4) { reader throws(WireDecodingError) in try reader.string() }
        var policy = SandboxPolicy(readPaths: read, writePaths: write, dataFolder: try reader.string(), network: try reader.bool(),
                                   memoryLimit: try reader.u64())
        let variables = try reader.list(minimumElementSize: 8) { reader throws(WireDecodingError) in (try reader.string(), try reader.string()) }
        policy.environment = Dictionary(variables) { first, _ in first }
        policy.threadLimit = try reader.u32()
        policy.cpuPercent = try reader.u32()
        policy.diskLimit = try reader.u64()
        policy.systemCallFilter = try reader.bool() ? try SystemCallFilterProgram.read(from: &reader) : nil
        policy.cgroups = try reader.bool() ? try CgroupFolders.read(from: &reader) : nil
        return policy
    }
}

/// Whether a worker confined itself, as its handshake reports it.
package enum SandboxStatus: Sendable, Equatable {
    /// No sandbox was asked for (a canary load of an in-process plugin).
    case off
    /// no_new_privs, no capabilities, the limits, the namespaces, a Landlock ruleset of this
    /// ABI and the system-call filter are in force, but for what `missing` names ("" when
    /// nothing is missing; else "no network namespace (EPERM); threads (…)").
    case enforced(landlockABI: Int32, missing: String = "")
    /// The kernel has no Landlock (or it is off; `landlockErrno` is what asking for its ABI
    /// returned): no_new_privs only, files and network open.
    case unavailable(landlockErrno: Int32)

    /// Why workers run without a file and network sandbox; nil when they do not.
    package var unconfinedBecause: String? {
        switch self {
        case .off: nil
        case .enforced(_, let missing): missing.isEmpty ? nil : missing
        case .unavailable(let code): "Landlock is not available in this kernel (\(String(cString: strerror(code))))"
        }
    }

    package func write(to writer: inout WireWriter) {
        switch self {
        case .off: writer.u8(0); writer.i32(0); writer.string("")
        case .enforced(let abi, let missing): writer.u8(1); writer.i32(abi); writer.string(missing)
        case .unavailable(let code): writer.u8(2); writer.i32(code); writer.string("")
        }
    }

    package static func read(from reader: inout WireReader) throws(WireDecodingError) -> SandboxStatus {
        let kind = try reader.u8()
        let number = try reader.i32()
        let text = try reader.string()
        switch kind {
        case 0: return .off
        case 1: return .enforced(landlockABI: number, missing: text)
        case 2: return .unavailable(landlockErrno: number)
        default: throw WireDecodingError(detail: "unknown sandbox status \(kind)")
        }
    }
}
