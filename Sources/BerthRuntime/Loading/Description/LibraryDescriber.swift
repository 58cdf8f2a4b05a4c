@_spi(Engine) import BerthCore
internal import CBerth
import Foundation

/// Runs a library's entry function and `berth_describe_v1` in this process, which must be
/// a process of its own: the plugin's code runs, and may crash. `berth pack` and
/// `berth validate` start one (`berth describe-library`) per library.
/// `package`: for the CLI's folder commands (`list`, `new`, `pack`, `keygen`, `validate`).
package enum LibraryDescriber {
    /// The exported symbols that look like entry functions (`berth_<name>_entry_v1`, or any
    /// `*_entry_v1`), for a library that has no manifest yet.
    package static func entrySymbols(in library: String) throws(ELFImageError) -> [String] {
        try ELFImage(path: library).exportedSymbols.filter { $0.hasSuffix("_entry_v1") }.sorted()
    }

    /// Whether the library was built by Swift (it exports Swift-mangled symbols).
    package static func isSwift(_ library: String) -> Bool {
        ((try? ELFImage(path: library))?.exportedSymbols.contains { $0.hasPrefix("$s") }) ?? false
    }

    package static func describe(library: String, entry: String) throws(DescribeError) -> LibraryDescription {
        _ = dlerror()
        guard let image = dlopen(library, RTLD_NOW | RTLD_LOCAL) else {
            throw DescribeError("dlopen \(library) failed: \(String(cString: dlerror()))")
        }
        guard let entryAddress = dlsym(image, entry) else {
            throw DescribeError("entry symbol '\(entry)' not found in \(library)")
        }
        let entryFunction = unsafeBitCast(entryAddress, to: berth_entry_v1.self)
        // A host table with every function NULL: the plugin may check it and find nothing to call.
        let host = UnsafeMutablePointer<berth_host_v1>.allocate(capacity: 1)
        host.initialize(to: berth_host_v1())
        host.pointee.struct_size = UInt32(MemoryLayout<berth_host_v1>.size)
        host.pointee.abi_version = HostABI.version.packed
        guard let table = entryFunction(host, nil) else {
            throw DescribeError("entry \(entry) returned NULL (the plugin refused to load; see its log)")
        }
        guard table.pointee.struct_size >= 16, let idPointer = table.pointee.plugin_id else {
            throw DescribeError("the table from \(entry) has no plugin_id")
        }
        var description = LibraryDescription(entry: entry, id: String(cString: idPointer),
                                              abi: ABIVersion(packed: table.pointee.abi_version).description, describes: false)
        guard let describeAddress = dlsym(image, BERTH_DESCRIBE_SYMBOL) else { return description }
        let describe = unsafeBitCast(describeAddress, to: berth_describe_function_v1.self)
        let collected = SinkBuffer()
        var error = berth_error()
        error.struct_size = UInt32(MemoryLayout<berth_error>.size)
        let status = collected.withSink { sink in describe(sink, &error) }
        guard status == BERTH_OK else {
            let message = withUnsafeBytes(of: &error.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            throw DescribeError("\(BERTH_DESCRIBE_SYMBOL) failed (status \(status)): \(message)")
        }
        let reported: LibraryDescription.Reported
        do {
            reported = try JSONDecoder().decode(LibraryDescription.Reported.self, from: Data(collected.bytes))
        } catch {
            throw DescribeError("\(BERTH_DESCRIBE_SYMBOL) wrote no valid JSON description: \(error)")
        }
        guard reported.id == description.id else {
            throw DescribeError("\(BERTH_DESCRIBE_SYMBOL) says id '\(reported.id)', the table says '\(description.id)'")
        }
        description.describes = true
        description.runtime = reported.runtime
        description.routes = reported.routes
        description.persist = reported.persist
        description.services = reported.services
        description.capabilities = reported.capabilities
        description.exports = reported.exports
        description.provides = reported.provides
        description.consumes = reported.consumes
        description.actions = reported.actions
        description.problems = reported.problems
        return description
    }
}

extension LibraryDescription {
    /// The JSON object `berth_describe_v1` writes.
    struct Reported: Decodable {
        var id: String
        var runtime: String?
        var routes: [String]?
        var persist: [String]?
        var services: [String]?
        var capabilities: [String]?
        var exports: [String]?
        var provides: [String]?
        var consumes: [String]?
        var actions: [String: [DeclaredAction]]?
        var problems: [String]?
    }
}

/// Why a library could not be described.
package struct DescribeError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}
