package import CBerth

/// The C ABI this host implements (berth.h).
package enum HostABI {
    /// `BERTH_ABI_VERSION_MAJOR.BERTH_ABI_VERSION_MINOR` as compiled into this host.
    package static let version = ABIVersion(major: UInt32(BERTH_ABI_VERSION_MAJOR), minor: UInt32(BERTH_ABI_VERSION_MINOR))

    /// What a manifest's `abi` may say: the host's major, any minor.
    package static var supportedRange: String { "\(version.major).x" }
}
