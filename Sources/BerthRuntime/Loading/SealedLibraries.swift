@_spi(Engine) import BerthCore
/// The sealed libraries a runtime folder keeps, one per plugin (the digest it last loaded),
/// bounded in total: beyond `bytesLimit` the least recently used go first (their next load
/// reads and checks the library again).
struct SealedLibraries {
    /// The most bytes kept in all.
    static let bytesLimit = 128 * 1024 * 1024

    private var byPlugin: [String: (library: SealedLibrary, lastUse: UInt64)] = [:]
    private var uses: UInt64 = 0
    private var bytes = 0

    /// Plugin `id`'s sealed library when it holds `digest`.
    mutating func take(_ id: String, digest: String) -> SealedLibrary? {
        guard let entry = byPlugin[id], entry.library.digest == digest else { return nil }
        uses += 1
        byPlugin[id]?.lastUse = uses
        return entry.library
    }

    /// Keeps `library` as plugin `id`'s, replacing the one it had.
    mutating func keep(_ library: SealedLibrary, for id: String) {
        uses += 1
        bytes += library.size - (byPlugin[id]?.library.size ?? 0)
        byPlugin[id] = (library, uses)
        while bytes > Self.bytesLimit, byPlugin.count > 1,
              let oldest = byPlugin.filter({ $0.key != id }).min(by: { $0.value.lastUse < $1.value.lastUse }) {
            bytes -= oldest.value.library.size
            byPlugin[oldest.key] = nil
        }
    }
}
