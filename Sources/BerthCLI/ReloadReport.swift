@_spi(Engine) import BerthRuntime

/// `reload ID --json`: what the reload made and where its time went, in milliseconds.
struct ReloadReport: Encodable {
    let plugin: String
    let generation: Int
    let totalMilliseconds: Double
    /// Phase name → milliseconds: validate, copy+hash, dlopen, handshake, close old
    /// screens, reopen, restore.
    let phasesMilliseconds: [String: Double]

    enum CodingKeys: String, CodingKey {
        case plugin, generation
        case totalMilliseconds = "total_ms"
        case phasesMilliseconds = "phases_ms"
    }

    @MainActor
    init(generation: PluginGeneration, timings: ReloadTimings) {
        plugin = generation.pluginID
        self.generation = generation.number
        totalMilliseconds = Self.milliseconds(timings.total)
        var phases: [String: Double] = [:]
        for phase in timings.phases { phases[phase.name] = Self.milliseconds(phase.duration) }
        phasesMilliseconds = phases
    }

    /// Milliseconds with microsecond resolution.
    private static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds * 1_000_000 + attoseconds / 1_000_000_000_000) / 1_000
    }
}
