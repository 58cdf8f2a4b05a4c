@testable import BerthTerminalUI
import Testing

/// The inspector's own parts that need no host: its log and how it writes figures.
@Suite("Terminal UI: the inspector's log and figures")
struct InspectorTests {
    @Test("the log keeps the newest lines: past 500 it drops back to 400")
    func logBound() {
        var inspector = Inspector()
        for index in 1...500 { inspector.append("\(index)") }
        #expect(inspector.log.count == 500)
        inspector.append("501")
        #expect(inspector.log.count == 400 && inspector.log.first == "102" && inspector.log.last == "501")
    }

    @Test("a state slot reads as an integer (little-endian), a flag, quoted text or a byte count")
    func slotText() {
        #expect(Inspector.slotText([2, 1, 0, 0, 0, 0, 0, 0]) == "258")
        #expect(Inspector.slotText([1]) == "true" && Inspector.slotText([0]) == "false")
        #expect(Inspector.slotText(Array("hi".utf8)) == "\"hi\"")
        #expect(Inspector.slotText([0xFF, 0xFE]) == "2 bytes")
    }

    @Test("durations are milliseconds with two decimals; negative ones are 0")
    func durations() {
        #expect(Inspector.milliseconds(.microseconds(12_345)) == "12.34")
        #expect(Inspector.milliseconds(.milliseconds(3)) == "3.00")
        #expect(Inspector.milliseconds(.milliseconds(-1)) == "0.00")
    }
}
