@_spi(Engine) import BerthCore
import Foundation
private import CBerthSystem

/// The one empty network namespace the host's workers without `network` join
/// (Docs/worker-sandbox.md). Making a network namespace, and tearing it down after the
/// worker, cost more of a worker's start and end than any other part of its sandbox
/// (Docs/benchmarks.md, W1); one made once serves every worker. It holds only a loopback
/// that is down, and no worker in it may make a socket (the filter), so it gives a worker
/// no more than a namespace of its own would.
enum SharedNetworkNamespace {
    /// The descriptor a worker receives the user namespace's descriptor as; the network
    /// namespace's is the next one.
    static let firstWorkerDescriptor: Int32 = 4

    /// Descriptors (close-on-exec) of the user namespace that owns it and of the network
    /// namespace, made on first use; nil where the host cannot make them, and then each
    /// worker makes its own as before.
    static let descriptors: (user: Int32, network: Int32)? = {
        var user: Int32 = -1
        var network: Int32 = -1
        var message = [CChar](repeating: 0, count: 256)
        guard berth_make_shared_network_namespace(&user, &network, &message, message.count) == 0 else { return nil }
        return (user, network)
    }()
}
