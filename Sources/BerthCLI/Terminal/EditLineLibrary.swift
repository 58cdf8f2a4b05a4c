private import CBerthEditLine
import Foundation

/// libedit, bound when the REPL first needs it (CBerthEditLine dlopens `libedit.so.2`, or
/// the library `BERTH_LIBEDIT` names). Without it the REPL reads plain lines: the terminal's
/// own line editing, no history and no completion, announced once on standard error.
enum EditLineLibrary {
    /// Nil when libedit is bound; otherwise why not, in one line.
    static let unavailableReason: String? = {
        let path = ProcessInfo.processInfo.environment["BERTH_LIBEDIT"]
        var error = [CChar](repeating: 0, count: 512)
        let loaded = error.withUnsafeMutableBufferPointer { buffer in
            berth_edit_load(path, buffer.baseAddress, buffer.count)
        }
        if loaded == 1 { return nil }
        return String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    static var isAvailable: Bool { unavailableReason == nil }

    /// The one-line notice shown when the REPL starts without libedit.
    static var notice: String? {
        unavailableReason.map {
            "berth: line editing, history and completion are off: libedit could not be loaded (\($0)); install Debian's libedit2 for them"
        }
    }
}
