@_spi(Engine) import BerthCore
/// Why a worker process could not be started.
package struct WorkerSpawnError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What failed.
    package enum Code: String, Sendable, Equatable {
        /// No executable file at the path.
        case executableMissing
        /// The channel's socketpair or the stderr pipe could not be made.
        case descriptorsFailed
        /// `posix_spawn` failed.
        case spawnFailed
    }

    /// What failed.
    package var code: Code
    /// The worker executable.
    package var executable: String
    /// Who the worker was for (a plugin id).
    package var plugin: String
    /// `strerror` text of the failing call, when there was one.
    package var errnoText: String?

    /// A failure to start `executable` for `plugin`.
    package init(_ code: Code, executable: String, plugin: String, errnoText: String? = nil) {
        self.code = code
        self.executable = executable
        self.plugin = plugin
        self.errnoText = errnoText
    }

    /// One line saying what failed and what to check.
    package var message: String { "\(plugin): \(reason)" }

    /// What failed and what to check, without the plugin (for an error that names it already).
    package var reason: String {
        let what: String
        switch code {
        case .executableMissing:
            // A bare name is the default one, not found anywhere: say every place looked at.
            let places = executable.contains("/") ? "at \(executable)" : "at any of \(WorkerProcess.executableCandidates(named: executable).joined(separator: ", "))"
            what = "no worker executable \(places) (build the berth-worker product; put it beside the host's executable or name it in $BERTH_WORKER)"
        case .descriptorsFailed: what = "could not make the worker's channel or stderr pipe"
        case .spawnFailed: what = "posix_spawn \(executable) failed"
        }
        return what + (errnoText.map { ": \($0)" } ?? "")
    }

    package var description: String { message }
}
