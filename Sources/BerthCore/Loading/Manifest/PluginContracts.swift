/// The manifest's `contracts`: the service contracts a plugin provides and those it calls,
/// by name (`org.berth.Clock`; a Swift `ServiceContract`'s `name`, a C `berth_service_v1`
/// key with a `call`). Written by `berth pack` from a Swift plugin's code, by hand for a C
/// plugin. Facts for tools and for discovery's warning about a contract nobody provides;
/// the host refuses no call for what is missing here.
package struct PluginContracts: Sendable, Equatable {
    /// The contracts the plugin registers (`Service.provides`, `service_register` with a `call`).
    package var provides: [String] = []
    /// The contracts the plugin calls (`Plugin(consumes:)`, `service_call`).
    package var consumes: [String] = []

    /// The contracts `provides` and `consumes` name.
    package init(provides: [String] = [], consumes: [String] = []) {
        self.provides = provides
        self.consumes = consumes
    }

    /// The two lists' field names inside `contracts`.
    package static let fields = ["provides", "consumes"]
}
