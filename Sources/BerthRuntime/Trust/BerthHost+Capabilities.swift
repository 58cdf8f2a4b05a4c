extension BerthHost {
    /// Reports a refused call as a `denied` event naming the plugin, the call and the capability.
    func report(_ denial: CapabilityDenial) {
        emit(.denied, .plugin(denial.plugin), "\(denial.call) refused: no capability \(denial.capability.spelling(for: denial.runtime))")
    }

    /// Warns once per host that workers run without Landlock (the kernel lacks it).
    func warnIfUnconfined(_ status: SandboxStatus) {
        guard case .unavailable(let reason) = status, !warnedNoSandbox else { return }
        warnedNoSandbox = true
        emit(.failed, .host, "isolated plugins run without a file and network sandbox: \(reason) (no_new_privs is set)")
    }

    /// Warns once per load that an in-process plugin's sandbox grants cannot be enforced.
    func warnUnenforceableGrants(of manifest: PluginManifest) {
        let grants = manifest.grantedCapabilities.filter(\.isSandboxGrant).sorted().map(\.rawValue)
        guard !grants.isEmpty else { return }
        emit(.event, .plugin(manifest.id), "runs in-process: \(grants.joined(separator: ", ")) cannot be enforced (only a worker process is sandboxed)")
    }
}
