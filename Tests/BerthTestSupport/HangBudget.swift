@_spi(Engine) import BerthRuntime

extension BerthHost {
    /// `plugin`'s worker is judged hung after `budget` of silence from now on (3 s, the
    /// product's default, unless told otherwise): for the one step of a test that must hang,
    /// after a setup that ran under a budget no healthy call on a loaded machine comes near
    /// (`TestIsolation.settings`). Fails when the plugin is not loaded in a worker.
    public func shortenHangBudget(of plugin: String, to budget: Duration = .seconds(3)) throws {
        guard generation(of: plugin)?.setWorkerHangBudget(budget) == true else {
            throw HangBudgetError(description: "\(plugin) is not loaded in a worker: its hang budget cannot be shortened")
        }
    }
}

/// `shortenHangBudget(of:to:)` was asked of a plugin without a worker.
public struct HangBudgetError: Error, CustomStringConvertible {
    public let description: String
}
