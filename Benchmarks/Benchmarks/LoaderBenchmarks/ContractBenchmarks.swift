import Benchmark
@_spi(Engine) import BerthRuntime
import Foundation

// Contract calls (Docs/scopes.md#across-plugins) with the C fixtures of
// Tests/Fixtures/BerthFixtures/contract.c: the consumer org.berth.alarm calls the provider
// org.berth.clock's session contract N times in one action (N the iteration's scaled
// count), so each figure is per call. S2: each plugin in its own worker, against a bare
// socketpair round trip; S3: both in the host's process, against encoding and decoding the
// same request and reply as JSON. Docs/benchmarks.md reports the ratios.

/// A host with the clock and the alarm loaded (`isolation`), a session begun and the
/// alarm's screen open.
@MainActor
final class ContractFixture {
    let staged: StagedPlugins
    let host: BerthHost
    let alarm: Int

    init(isolation: IsolationMode) async throws {
        staged = try StagedPlugins([])
        for (id, entry, route, capabilities) in [("org.berth.clock", "fixture_entry_clock", "clock", ["services.provide"]),
                                                 ("org.berth.alarm", "fixture_entry_alarm", "alarm", ["services.consume", "session"])] {
            let folder = (staged.plugins as NSString).appendingPathComponent(id)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: BuildProducts.library("libBerthFixtures.so"),
                                             toPath: (folder as NSString).appendingPathComponent("libBerthFixtures.so"))
            let manifest: [String: Any] = ["id": id, "name": id, "version": "1.0.0", "abi": "1.0", "library": "libBerthFixtures.so",
                                           "entry": entry, "runtime": "c", "routes": [route], "capabilities": capabilities]
            try JSONSerialization.data(withJSONObject: manifest).write(to: URL(fileURLWithPath: (folder as NSString).appendingPathComponent("plugin.json")))
        }
        host = try staged.makeHost(isolation: isolation)
        try host.load("org.berth.clock")
        try host.load("org.berth.alarm")
        alarm = try host.push("org.berth.alarm/alarm").id
        try await host.send(screen: alarm, action: "begin", payload: Array("bench".utf8))
    }

    func tearDown() {
        host.shutdown()
        staged.remove()
    }
}

@MainActor var contractFixture: ContractFixture?

/// S3's floor: the request encoded and decoded, and the reply encoded and decoded, as JSON.
private struct ClockRequest: Codable {
    var method: String
    var arguments: [Int]
}

private struct ClockReply: Codable {
    var instance: Int
    var calls: Int
}

func registerContractBenchmarks() {
    let perCall = Benchmark.Configuration(
        metrics: [.wallClock, .processCPU, .mallocCountTotal], warmupIterations: 3,
        scalingFactor: .kilo, maxDuration: .seconds(10), maxIterations: 1_000
    ).tuned()

    for (name, isolation) in [("contract call, provider and consumer in two workers (C clock)", IsolationMode.process),
                              ("contract call, provider and consumer in process (C clock)", IsolationMode.inProcess)] {
        Benchmark(name, configuration: perCall) { benchmark in
            onMainActorAsync(with: benchmark) { benchmark in
                guard let fixture = contractFixture else { fatalError("setup did not run") }
                let count = Array(String(benchmark.scaledIterations.count).utf8)
                await measure(benchmark) {
                    do { try await fixture.host.send(screen: fixture.alarm, action: "calls", payload: count) } catch { fatalError("\(error)") }
                }
            }
        } setup: {
            onMainActorAsync {
                do { contractFixture = try await ContractFixture(isolation: isolation) } catch { fatalError("contract fixture: \(error)") }
            }
        } teardown: {
            onMainActor { contractFixture?.tearDown(); contractFixture = nil }
        }
    }

    Benchmark("JSON encode+decode of a contract call's request and reply", configuration: perCall) { benchmark in
        let encoder = JSONEncoder(), decoder = JSONDecoder()
        measure(benchmark) {
            for _ in benchmark.scaledIterations {
                do {
                    let request = try encoder.encode(ClockRequest(method: "next", arguments: []))
                    blackHole(try decoder.decode(ClockRequest.self, from: request))
                    let reply = try encoder.encode(ClockReply(instance: 1, calls: 2))
                    blackHole(try decoder.decode(ClockReply.self, from: reply))
                } catch { fatalError("\(error)") }
            }
        }
    }
}
