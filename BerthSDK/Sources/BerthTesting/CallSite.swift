import Foundation

/// Where a test called the kit: the file's name and the line, which a failure names first,
/// so the report points at the call that failed and not only at the `@Test`.
struct CallSite: Sendable {
    /// The test file's name (`HelloTests.swift`), without its folders.
    let file: String
    let line: Int

    init(filePath: String, line: Int) {
        file = (filePath as NSString).lastPathComponent
        self.line = line
    }
}

extension BerthTestingError {
    /// The same error, its message starting with `call`: `HelloTests.swift:21: no control …`.
    func located(at call: CallSite) -> BerthTestingError {
        BerthTestingError("\(call.file):\(call.line): \(description)")
    }
}
