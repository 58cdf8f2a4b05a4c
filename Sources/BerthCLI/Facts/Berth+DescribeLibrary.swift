import ArgumentParser
import BerthRuntime
import Foundation

extension Berth {
    /// `berth describe-library LIBRARY [--entry SYMBOL]`: runs the library's entry function
    /// and `berth_describe_v1` in this (child) process and prints the description as JSON.
    /// `berth pack` and `berth validate` start it; a crash ends only this process.
    struct DescribeLibrary: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "describe-library", shouldDisplay: false)

        @Argument var library: String
        @Option var entry: String?

        func run() throws {
            do {
                let symbol = try entry ?? LibraryFacts.onlyEntrySymbol(in: library)
                let description = try LibraryDescriber.describe(library: library, entry: symbol)
                emitLine(String(decoding: ControlProtocol.encode(description), as: UTF8.self))
            } catch {
                printError("\(error)")
                throw ExitStatus.failure
            }
        }
    }
}

/// What a built library states about itself, learned in a child process.
enum LibraryFacts {
    /// The one entry function a library exports (for a package with no manifest yet).
    static func onlyEntrySymbol(in library: String) throws -> String {
        let symbols = try LibraryDescriber.entrySymbols(in: library)
        guard symbols.count == 1, let symbol = symbols.first else {
            throw PackError(symbols.isEmpty
                ? "\(library): exports no entry function (a @_cdecl(\"berth_<name>_entry_v1\") function that returns Plugin(…).export(…))"
                : "\(library): exports \(symbols.count) entry functions (\(symbols.joined(separator: ", "))); name one in plugin.json's entry")
        }
        return symbol
    }

    /// Describes `library` in a child `berth describe-library`.
    static func describe(_ library: String, entry: String?) throws -> LibraryDescription {
        let child = try ChildBerth.run(["describe-library", library] + (entry.map { ["--entry", $0] } ?? []))
        if let crash = child.crash { throw PackError("\(library): the plugin crashed while describing itself \(crash)") }
        guard child.status == 0, let description = try? JSONDecoder().decode(LibraryDescription.self, from: child.standardOutput) else {
            throw PackError(child.lastErrorLine.replacingOccurrences(of: "error: ", with: ""))
        }
        return description
    }
}
