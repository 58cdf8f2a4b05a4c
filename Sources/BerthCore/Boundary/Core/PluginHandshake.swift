package import CBerth

/// What the handshake read from the plugin's `berth_plugin_v1`.
package struct PluginHandshake: Sendable, Equatable {
    /// The optional table functions a plugin may leave NULL.
    package struct Functions: OptionSet, Sendable, Equatable {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }
        package static let create = Functions(rawValue: 1 << 0)
        package static let activate = Functions(rawValue: 1 << 1)
        package static let deactivate = Functions(rawValue: 1 << 2)
        package static let screenEvent = Functions(rawValue: 1 << 3)
        package static let action = Functions(rawValue: 1 << 4)
        package static let render = Functions(rawValue: 1 << 5)
        package static let saveState = Functions(rawValue: 1 << 6)
        package static let restoreState = Functions(rawValue: 1 << 7)
        package static let contextReceived = Functions(rawValue: 1 << 8)
        package static let delegateReceived = Functions(rawValue: 1 << 9)
        package static let unload = Functions(rawValue: 1 << 10)
        package static let destroy = Functions(rawValue: 1 << 11)
        /// ABI 1.1: the binary view tree with its state batch.
        package static let renderTree = Functions(rawValue: 1 << 12)
    }

    /// The ABI version the plugin reported.
    package var abi: ABIVersion
    /// The plugin's `struct_size`.
    package var tableSize: Int
    package var functions: Functions
    /// Where the table lives in the plugin's memory (conformance: each generation has its own).
    package var tableAddress: UInt

    package init(abi: ABIVersion, tableSize: Int, functions: Functions, tableAddress: UInt) {
        self.abi = abi
        self.tableSize = tableSize
        self.functions = functions
        self.tableAddress = tableAddress
    }
}

/// A plugin's refusal or failure in one call: its status and the message it wrote.
package struct PluginCallError: Error, Sendable, Equatable, CustomStringConvertible {
    package var status: Int32
    package var message: String
    package init(status: Int32, message: String) {
        self.status = status
        self.message = message
    }

    package var description: String { message }
}
