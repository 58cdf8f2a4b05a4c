/// Where frames go: a real terminal, or a headless one in tests.
@MainActor
public protocol TerminalScreen: AnyObject {
    /// Columns and rows now.
    var size: (width: Int, height: Int) { get }
    /// One frame's bytes, written at once.
    func write(_ bytes: [UInt8])
}
