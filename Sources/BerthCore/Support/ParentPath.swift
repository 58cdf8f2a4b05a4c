/// The folder part of a path: what `NSString.deletingLastPathComponent` returns, without
/// its trap. On Linux that Foundation call (swift-corelibs-foundation with Swift 6.3) stops
/// the process with SIGILL for a path whose last component is one character with nothing
/// before it, or with a trailing slash: `h`, `.`, `x/`, `./`. Paths typed by users (`berth
/// new --path h`, `berth validate p`, `--socket s`) reach it, so every caller uses this.
/// `package`: a helper the CLI shares; not part of the embedding API.
package enum ParentPath {
    /// `a/b` → `a`, `/a` → `/`, `a//b/` → `a`, `h` → `` (empty), `/` → `/`.
    package static func of(_ path: String) -> String {
        var bytes = Array(path.utf8)
        while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        var end = slash
        while end > 0, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        return end == 0 ? "/" : String(decoding: bytes[..<end], as: UTF8.self)
    }
}
