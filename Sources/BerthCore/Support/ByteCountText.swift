/// Byte counts as people read them in one-line errors and `status`: `1.5 GiB`, `16 MiB`,
/// `512 bytes`, binary units, at most one decimal.
package enum ByteCountText {
    package static func binary(_ bytes: Int) -> String {
        let units: [(name: String, shift: Int)] = [("GiB", 30), ("MiB", 20), ("KiB", 10)]
        for unit in units where bytes >= 1 << unit.shift {
            let tenths = (bytes * 10) >> unit.shift
            return tenths % 10 == 0 ? "\(tenths / 10) \(unit.name)" : "\(tenths / 10).\(tenths % 10) \(unit.name)"
        }
        return bytes == 1 ? "1 byte" : "\(bytes) bytes"
    }

    /// `1,023,000`: digits grouped by thousands.
    package static func grouped(_ count: Int) -> String {
        let digits = String(count.magnitude)
        var result = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return count < 0 ? "-" + result : result
    }
}
