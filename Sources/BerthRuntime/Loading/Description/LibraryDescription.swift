@_spi(Engine) import BerthCore
/// What a plugin library says about itself through its entry function and, when it
/// exports one, `berth_describe_v1` (berth.h). Produced in a tool's child process; a
/// running host never runs a plugin's code to learn these facts, it reads the manifest.
/// `package`: for the CLI's folder commands (`list`, `new`, `pack`, `keygen`, `validate`).
package struct LibraryDescription: Codable, Sendable, Equatable {
    /// The entry symbol that was called.
    package var entry: String
    /// The table's `plugin_id`.
    package var id: String
    /// The table's `abi_version`, as `major.minor`.
    package var abi: String
    /// Whether the library exports `berth_describe_v1`; without it only `id` and `abi` are known.
    package var describes: Bool
    /// The facts `berth_describe_v1` reported (nil when it did not report one).
    package var runtime: String?
    package var routes: [String]?
    package var persist: [String]?
    package var services: [String]?
    /// The capabilities the code states it uses (nil: it states none).
    package var capabilities: [String]?
    package var exports: [String]?
    /// The contracts the code provides and consumes, by name (nil when the description has
    /// no such field: a C plugin's describe may leave them out, and then they are not checked).
    package var provides: [String]?
    package var consumes: [String]?
    /// The actions each route's screen declares (nil when the description has no `actions`:
    /// a C plugin's describe may leave them out, and then they are not checked).
    package var actions: [String: [DeclaredAction]]?
    /// What the plugin could not describe (for example a screen whose init threw).
    package var problems: [String]?

    package init(entry: String, id: String, abi: String, describes: Bool) {
        self.entry = entry
        self.id = id
        self.abi = abi
        self.describes = describes
    }
}
