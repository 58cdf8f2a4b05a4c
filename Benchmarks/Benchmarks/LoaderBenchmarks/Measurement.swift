import Benchmark
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

/// Runs `loop` as the measured section of `benchmark`: the harness's metrics between
/// `startMeasurement` and `stopMeasurement`, and `.processCPU` around exactly the loop.
/// `loop` does `benchmark.scaledIterations` repetitions of the operation.
func measure(_ benchmark: Benchmark, _ loop: () throws -> Void) rethrows {
    benchmark.startMeasurement()
    let start = processCPUTime()
    try loop()
    let cpu = processCPUTime() - start
    benchmark.stopMeasurement()
    benchmark.measurement(.processCPU, cpu)
}
