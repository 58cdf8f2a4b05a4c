import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The floor a generation load is compared with: what any loader must do to get a fresh
/// image of the same file (copy to a new path, `dlopen`, `dlsym` the entry), without a
/// manifest, validation, handshake or libffi.
struct RawLoader {
    let source: String
    let folder: String
    private var copies = 0

    init(source: String, folder: String) {
        self.source = source
        self.folder = folder
    }

    /// Copies the library to a path never used before, the way a shadow copy is made.
    private mutating func freshCopy() -> String {
        copies += 1
        let target = (folder as NSString).appendingPathComponent("raw-\(copies)-\((source as NSString).lastPathComponent)")
        do {
            try FileManager.default.copyItem(atPath: source, toPath: target)
        } catch {
            fatalError("cannot copy \(source) to \(target): \(error)")
        }
        return target
    }

    private static func open(_ path: String, flags: Int32) -> UnsafeMutableRawPointer {
        guard let handle = dlopen(path, flags) else {
            fatalError("dlopen \(path) failed: \(dlerror().map { String(cString: $0) } ?? "unknown error")")
        }
        return handle
    }

    /// C image: copy, `dlopen(RTLD_NOW | RTLD_LOCAL)`, `dlsym`, `dlclose`, delete the copy.
    mutating func loadAndCloseC(entry: String) -> UnsafeMutableRawPointer? {
        let path = freshCopy()
        let handle = Self.open(path, flags: RTLD_NOW | RTLD_LOCAL)
        let symbol = dlsym(handle, entry)
        guard symbol != nil else { fatalError("\(entry) not found in \(path)") }
        dlclose(handle)
        try? FileManager.default.removeItem(atPath: path)
        return symbol
    }

    /// Swift image: copy, `dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)`, `dlsym`, delete
    /// the copy. The handle is never closed: the Swift runtime keeps pointers into every
    /// Swift image it has seen, so it must stay mapped (as Berth retires it).
    mutating func loadAndKeepSwift(entry: String) -> UnsafeMutableRawPointer? {
        let path = freshCopy()
        let handle = Self.open(path, flags: RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)
        let symbol = dlsym(handle, entry)
        guard symbol != nil else { fatalError("\(entry) not found in \(path)") }
        try? FileManager.default.removeItem(atPath: path)
        return symbol
    }
}
