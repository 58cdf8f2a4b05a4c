@_spi(Engine) import BerthCore
extension BerthHost {
    /// Reports a refused call as a `denied` event naming the plugin, the call and the capability.
    func report(_ denial: CapabilityDenial) {
        emit(.denied, .plugin(denial.plugin), "\(denial.call) refused: no capability \(denial.capability.spelling(for: denial.runtime))")
    }
}
