internal import Glibc

/// The manifest's `files`: paths an isolated plugin's sandbox lets it read (`files.read`
/// capability) or write (`files.write`), beyond its own folders. A path is absolute or
/// starts with `~/` (the home folder of the user running the host).
package struct FileGrants: Sendable, Equatable {
    /// Paths the plugin may read.
    package var read: [String]
    /// Paths the plugin may write (and read).
    package var write: [String]

    /// Grants of `read` and `write` paths.
    package init(read: [String] = [], write: [String] = []) {
        self.read = read
        self.write = write
    }

    /// True when nothing is granted.
    package var isEmpty: Bool { read.isEmpty && write.isEmpty }

    /// A granted path as the sandbox gets it: `~/x` below `home`.
    package static func resolve(_ path: String, home: String) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        let rest = path.dropFirst(min(2, path.count))
        guard !rest.isEmpty else { return home }
        return (home.hasSuffix("/") ? home : home + "/") + rest
    }

    /// A valid entry: absolute or home-relative, without `..`.
    package static func isValidPath(_ path: String) -> Bool {
        guard path.hasPrefix("/") || path == "~" || path.hasPrefix("~/") else { return false }
        return !path.split(separator: "/").contains("..")
    }
}
