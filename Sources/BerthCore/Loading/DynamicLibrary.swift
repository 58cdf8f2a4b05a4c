#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An image opened with `dlopen`: an owned resource that is either closed (C images) or
/// deliberately retired (Swift images, which must stay mapped), never both and never
/// forgotten.
package struct DynamicLibrary: ~Copyable {
    // Only the handle is stored (the caller keeps the path): `discard self` requires
    // trivially destroyed storage.
    private let handle: UnsafeMutableRawPointer

    /// `dlopen(path, flags)`; the error carries `dlerror()`.
    package init(path: String, flags: Int32, plugin: String) throws(LoaderError) {
        _ = dlerror()
        guard let handle = dlopen(path, flags) else {
            throw LoaderError(.dlopenFailed, plugin: plugin, path: path, systemError: Self.lastError())
        }
        self.handle = handle
    }

    /// The address of `name`, or nil when the image does not define it.
    package func symbol(_ name: String) -> UnsafeMutableRawPointer? {
        dlsym(handle, name)
    }

    /// `dlclose`, then proves with `RTLD_NOLOAD` that the image opened from `path` is gone.
    consuming func close(path: String, plugin: String) throws(LoaderError) {
        let handle = self.handle
        discard self
        _ = dlerror()
        guard dlclose(handle) == 0 else {
            throw LoaderError(.stillMapped, plugin: plugin, path: path, systemError: "dlclose: \(Self.lastError())")
        }
        if let survivor = dlopen(path, RTLD_NOW | RTLD_NOLOAD) {
            dlclose(survivor)
            throw LoaderError(.stillMapped, plugin: plugin, path: path)
        }
    }

    /// Leaves the image mapped for the rest of the process. Swift images end here: the
    /// Swift runtime keeps pointers into them (conformance records, metadata caches), so
    /// unmapping one makes the next dynamic cast anywhere in the process crash.
    consuming func retire() {
        discard self
    }

    /// True when an image opened from `path` is currently mapped in this process.
    package static func isMapped(path: String) -> Bool {
        guard let probe = dlopen(path, RTLD_NOW | RTLD_NOLOAD) else { return false }
        dlclose(probe)
        return true
    }

    deinit {
        // Reached only when a load fails half-way; a C image is closed, a Swift one was
        // opened with RTLD_NODELETE and stays mapped whatever happens.
        dlclose(handle)
    }

    private static func lastError() -> String {
        guard let text = dlerror() else { return "unknown error" }
        return String(cString: text)
    }
}
