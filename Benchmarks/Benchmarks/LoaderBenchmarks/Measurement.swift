import Benchmark
import Callgrind
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension BenchmarkMetric {
    /// CPU time of the whole process (all threads) over the measured loop, in nanoseconds,
    /// from `CLOCK_PROCESS_CPUTIME_ID`. The harness's `cpuTotal` reads /proc/self/stat,
    /// whose unit is a 10 ms scheduler tick: too coarse for one load of a plugin.
    static var processCPU: BenchmarkMetric { .custom("CPU, process clock (ns)") }
}

/// The process CPU clock, in nanoseconds.
func processCPUTime() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return now.tv_sec * 1_000_000_000 + now.tv_nsec
}

/// The monotonic clock, in nanoseconds.
func wallClockTime() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return now.tv_sec * 1_000_000_000 + now.tv_nsec
}

/// What scripts/bench asks of this process, from its environment. Unset, the benchmarks run
/// as `swift package benchmark` runs them.
///
/// - `BERTH_BENCH_SAMPLES=<file>`: every measured (not warm-up) iteration appends a line
///   `<operations> <wall-clock ns>` to the file.
/// - `BERTH_BENCH_INSTRUCTIONS=1`: the process runs under `valgrind --tool=callgrind
///   --instr-atstart=no`; each measured iteration's loop is counted in a callgrind dump of
///   its own (`bench_count_begin`/`bench_count_end`), so each dump holds the instructions
///   of one measured loop and nothing else. The configurations are cut down (`tuned`)
///   because valgrind is some 50 times slower.
/// - `BERTH_BENCH_MAX_SECONDS=<s>`: no benchmark runs longer than this.
enum BenchRequest {
    static let environment = ProcessInfo.processInfo.environment
    // nonisolated(unsafe): set once; a FILE locks itself around each write.
    nonisolated(unsafe) static let samplesFile: UnsafeMutablePointer<FILE>? = environment["BERTH_BENCH_SAMPLES"].flatMap { fopen($0, "a") }
    static let countsInstructions = environment["BERTH_BENCH_INSTRUCTIONS"] == "1"
    static let maxSeconds: Int? = environment["BERTH_BENCH_MAX_SECONDS"].flatMap { Int($0) }
}

extension Benchmark.Configuration {
    /// This configuration as scripts/bench asks for it: capped to `BERTH_BENCH_MAX_SECONDS`,
    /// and for instruction counts two warm-up iterations at most (none stays none), at most
    /// `countedIterations` measured ones of `countedScale` operations each, and only the
    /// wall clock (the harness's samplers would run inside the counted loops).
    func tuned(countedIterations: Int = 5, countedScale: BenchmarkScalingFactor? = nil) -> Benchmark.Configuration {
        var tuned = self
        if let seconds = BenchRequest.maxSeconds, tuned.maxDuration > .seconds(seconds) {
            tuned.maxDuration = .seconds(seconds)
        }
        if BenchRequest.countsInstructions {
            tuned.metrics = [.wallClock, .processCPU]
            tuned.warmupIterations = min(tuned.warmupIterations, 2)
            tuned.maxIterations = countedIterations
            tuned.maxDuration = .seconds(600)
            if let countedScale { tuned.scalingFactor = countedScale }
        }
        return tuned
    }
}

/// Runs `loop` as the measured section of `benchmark`: the harness's metrics between
/// `startMeasurement` and `stopMeasurement`, and `.processCPU` around exactly the loop.
/// `loop` does `benchmark.scaledIterations` repetitions of the operation. What scripts/bench
/// asks for (`BenchRequest`) is recorded around exactly the loop too.
func measure(_ benchmark: Benchmark, _ loop: () throws -> Void) rethrows {
    let section = MeasuredSection(benchmark)
    try loop()
    section.end(benchmark)
}

/// `measure` for a loop that awaits (an action on a plugin's lane), on the main actor like
/// the host it drives (so neither the benchmark nor the loop crosses an isolation boundary).
@MainActor
func measure(_ benchmark: Benchmark, _ loop: () async throws -> Void) async rethrows {
    let section = MeasuredSection(benchmark)
    try await loop()
    section.end(benchmark)
}

/// One measured section: begun when made, recorded by `end`.
private struct MeasuredSection {
    let measured: Bool
    let counted: Bool
    let start: Int
    let wallStart: Int

    init(_ benchmark: Benchmark) {
        measured = benchmark.currentIteration >= benchmark.configuration.warmupIterations
        counted = measured && BenchRequest.countsInstructions
        benchmark.startMeasurement()
        start = processCPUTime()
        wallStart = wallClockTime()
        if counted { bench_count_begin() }
    }

    func end(_ benchmark: Benchmark) {
        if counted { bench_count_end() }
        let wall = wallClockTime() - wallStart
        let cpu = processCPUTime() - start
        benchmark.stopMeasurement()
        benchmark.measurement(.processCPU, cpu)
        if measured, let file = BenchRequest.samplesFile {
            fputs("\(benchmark.scaledIterations.count) \(wall)\n", file)
            fflush(file)
        }
    }
}
