/// The C contract fixtures (Tests/Fixtures/BerthFixtures/contract.c) with hand-written
/// `contracts`: org.berth.clock provides "org.berth.Clock"; org.berth.alarm calls it.
extension PluginWorkspace {
    /// Stages the consumer (in `plugins/alarm`) declaring `consumes`, and with `provider`
    /// the clock (in `plugins/clock`) declaring what it provides.
    public func stageContractFixtures(provider: Bool, consumes: [String]) {
        if provider {
            stageFixture(folder: "clock", entry: "fixture_entry_clock", id: "org.berth.clock") { manifest in
                manifest["routes"] = ["clock"]
                manifest["capabilities"] = ["services.provide"]
                manifest["contracts"] = ["provides": ["org.berth.Clock"]]
            }
        }
        stageFixture(folder: "alarm", entry: "fixture_entry_alarm", id: "org.berth.alarm") { manifest in
            manifest["routes"] = ["alarm"]
            manifest["capabilities"] = ["services.consume", "session"]
            manifest["contracts"] = ["consumes": consumes]
        }
    }
}
