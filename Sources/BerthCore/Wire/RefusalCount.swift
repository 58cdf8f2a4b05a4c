/// Which counts of one refused system call a worker reports to the host (`RefusedCallReporter`)
/// and the host logs (`RefusedCallLog`).
package enum RefusalCount {
    /// 1, 10, 100, …: the counts at which a refusal is reported.
    package static func isReported(_ count: UInt64) -> Bool {
        var power: UInt64 = 1
        while power < count, power <= UInt64.max / 10 { power *= 10 }
        return power == count
    }
}
