import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

@Suite("Loader: shadow copies, generations, unloading") @MainActor
struct LoaderTests {
    @Test("each generation loads from its own versioned shadow copy in the runtime folder")
    func versionedShadowCopies() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        let host = try workspace.makeHost()
        let first = try host.load("com.example.greeter")
        let firstPath = first.shadowPath
        let second = try host.reload("com.example.greeter")
        #expect(first.number == 1)
        #expect(second.number == 2)
        #expect(firstPath.hasPrefix(host.runtimeDirectory.path + "/com.example.greeter/gen-1-"))
        #expect(second.shadowPath.hasPrefix(host.runtimeDirectory.path + "/com.example.greeter/gen-2-"))
        #expect(FileManager.default.fileExists(atPath: second.shadowPath))
        #expect(!FileManager.default.fileExists(atPath: firstPath), "an ended generation's copy is removed")
        host.shutdown()
        #expect(!FileManager.default.fileExists(atPath: host.runtimeDirectory.path))
    }

    @Test("a plugin's runtime folder removed under a loaded plugin is made again by the next reload; one that cannot be made is named")
    func runtimeFolderMadeOnDemand() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        let host = try workspace.makeHost()
        defer { host.shutdown() }
        try host.load("com.example.greeter")
        let folder = host.runtimeDirectory.folder(of: "com.example.greeter")
        try FileManager.default.removeItem(atPath: folder)
        let second = try host.reload("com.example.greeter")
        #expect(second.shadowPath.hasPrefix(folder + "/gen-2-"))
        #expect(try second.call("greeter_add", arguments: [.int32(2), .int32(3)]) == .int32(5))

        // A file where the folder should be: the reload fails naming it, the old generation stays.
        try FileManager.default.removeItem(atPath: folder)
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: folder))
        #expect {
            try host.reload("com.example.greeter")
        } throws: { error in
            "\(error)".contains(folder) && "\(error)".contains("cannot")
        }
        #expect(host.generation(of: "com.example.greeter")?.number == 2)
    }

    @Test("a hashing copy replaces a leftover file of the same name and hashes what it wrote")
    func hashingCopyReplacesLeftover() throws {
        let folder = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = folder + "/libThing.so", target = folder + "/gen-1-libThing.so"
        try Data("new bytes".utf8).write(to: URL(fileURLWithPath: source))
        try Data("a stale leftover, longer than the new bytes".utf8).write(to: URL(fileURLWithPath: target))
        let digest = try HashingCopy.copy(from: source, to: target)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == Data("new bytes".utf8))
        // sha256("new bytes")
        #expect(digest == "11e2defd59f47c7f2aac84d6a5d6747e98e785afffb72c8bb7b05ec74e1d663c")
    }

    @Test("a large library (hashed on a second thread while it is written) copies byte for byte with the one-pass digest")
    nonisolated func hashingCopyOfLargeLibrary() async throws {
        // Off the main actor (nonisolated and async): making 3 MiB of random bytes takes
        // seconds in a debug build.
        let folder = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = folder + "/libLarge.so", target = folder + "/gen-1-libLarge.so"
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<(3 * 1024 * 1024 + 7)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try Data(bytes).write(to: URL(fileURLWithPath: source))
        let digest = try HashingCopy.copy(from: source, to: target)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == Data(bytes))
        #expect(digest == HexDigest.sha256(bytes))
        #expect(throws: HashingCopy.Failure.self) { try HashingCopy.copy(from: source, to: folder + "/missing/gen-2-libLarge.so") }
    }

    @Test("shadow copies hold only validated bytes: a library changed after validation loads as validated when its bytes were kept or sealed, else is refused")
    func shadowCopiesFromSealedBytes() throws {
        let workspace = PluginWorkspace()
        for (manifest, id, library) in [("greeter.json", "com.example.greeter", "libGreeter.so"),
                                        ("counter.json", "com.example.counter", "libCounter.so")] {
            let folder = workspace.stage(manifest)
            guard case .success(let plugin) = PluginValidator.validate(path: folder) else {
                Issue.record("\(folder) does not validate")
                continue
            }
            let validated = workspace.read("\(id)/\(library)")
            let small = plugin.libraryBytes != nil
            #expect(small == (validated.count <= ValidationCache.keptBytesLimit), "\(library): bytes kept only for a small library")
            let first = try RuntimeDirectory(base: workspace.runtimeBase)
            defer { first.remove() }
            let copy = try first.verifiedShadowCopy(of: plugin, generation: 1)
            #expect(Self.bytes(at: copy) == validated)

            // The same size, other bytes: what a build writing over the file leaves.
            var changed = validated
            changed[changed.count / 2] ^= 0xff
            workspace.write(changed, to: "\(id)/\(library)")
            // The sealed copy made by the first load: the file is not read again.
            let second = try first.verifiedShadowCopy(of: plugin, generation: 2)
            #expect(Self.bytes(at: second) == validated, "\(library): generation 2 holds the validated bytes")

            // A fresh runtime folder has no sealed copy: kept bytes still load as validated; a
            // large library is read again and refused.
            let fresh = try RuntimeDirectory(base: workspace.runtimeBase)
            defer { fresh.remove() }
            if small {
                #expect(Self.bytes(at: try fresh.verifiedShadowCopy(of: plugin, generation: 1)) == validated)
            } else {
                #expect(throws: LoaderError.self) { try fresh.verifiedShadowCopy(of: plugin, generation: 1) }
                let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: fresh.folder(of: id))) ?? []
                #expect(leftovers.isEmpty, "a refused copy leaves no file")
            }
        }
    }

    @Test("the sealed copies a runtime folder keeps are bounded: the least recently used go first, never the one just kept")
    func sealedLibrariesBounded() throws {
        let workspace = PluginWorkspace()
        let folder = workspace.stage("counter.json")
        guard case .success(let plugin) = PluginValidator.validate(path: folder) else {
            Issue.record("\(folder) does not validate")
            return
        }
        let sealed = try #require(try SealedLibrary.make(of: plugin))
        let fit = SealedLibraries.bytesLimit / sealed.size
        var libraries = SealedLibraries()
        for index in 0..<fit { libraries.keep(sealed, for: "plugin-\(index)") }
        #expect(libraries.take("plugin-0", digest: sealed.digest) != nil)
        libraries.keep(sealed, for: "plugin-new")
        #expect(libraries.take("plugin-new", digest: sealed.digest) != nil)
        #expect(libraries.take("plugin-0", digest: sealed.digest) != nil, "used last but one: kept")
        #expect(libraries.take("plugin-1", digest: sealed.digest) == nil, "the least recently used went")
        #expect(libraries.take("plugin-2", digest: "another digest") == nil)
    }

    @Test("a library swapped for a FIFO after validation is refused by the copy at once, not waited on")
    func copyRefusesFIFO() throws {
        let folder = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = folder + "/libSwapped.so"
        #expect(mkfifo(fifo, 0o600) == 0)
        let target = folder + "/gen-1-libSwapped.so"
        let outcome = withoutWaitingOn(fifo: fifo, "the copy") { () -> String in
            do {
                _ = try HashingCopy.copy(from: fifo, to: target)
                return "copied"
            } catch let failure as HashingCopy.Failure {
                return failure.systemError
            } catch {
                return "\(error)"
            }
        }
        #expect(outcome == "not a regular file")
        #expect(!FileManager.default.fileExists(atPath: folder + "/gen-1-libSwapped.so"))
    }

    @Test("the validation cache keeps at most its limit of library bytes: the longest-kept entries let theirs go first")
    func keptBytesBounded() throws {
        let prefix = "/nonexistent/\(UUID().uuidString)/lib-"
        let size = ValidationCache.keptBytesLimit
        let count = ValidationCache.keptTotalLimit / size + 4
        for index in 0..<count {
            let library = ValidationCache.Library(identity: nil, manifestData: Data(), size: size, digest: "d\(index)", problems: [],
                                                  read: [UInt8](repeating: UInt8(index % 256), count: size))
            ValidationCache.remember(library, at: prefix + "\(index).so")
            #expect(ValidationCache.keptTotal <= ValidationCache.keptTotalLimit)
        }
        func kept(_ index: Int) -> Bool { ValidationCache.remembered(at: prefix + "\(index).so")?.bytes != nil }
        #expect(!kept(0), "the first entry let its bytes go")
        #expect(kept(count - 1), "the newest keeps them")
        #expect(ValidationCache.remembered(at: prefix + "0.so")?.digest == "d0", "an entry that let its bytes go keeps its digest")
        let large = ValidationCache.Library(identity: nil, manifestData: Data(), size: size + 1, digest: "large", problems: [],
                                            read: [UInt8](repeating: 0, count: size + 1))
        #expect(large.bytes == nil, "a library above keptBytesLimit keeps no bytes")
    }

    /// A new empty folder for a copy test (the caller removes it).
    private static func bytes(at path: String) -> [UInt8] {
        [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    }

    nonisolated private static func scratchFolder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("berth-copy-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("a reload of the Swift plugin gives fresh globals")
    func swiftReloadHasFreshGlobals() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let host = try workspace.makeHost()
        let first = try host.load("com.example.counter")
        #expect(try first.call("counter_bump", arguments: []) == .int64(1))
        #expect(try first.call("counter_bump", arguments: []) == .int64(2))
        let second = try host.reload("com.example.counter")
        #expect(try second.call("counter_bumps", arguments: []) == .int64(0))
        #expect(try second.call("counter_bump", arguments: []) == .int64(1))
        let third = try host.reload("com.example.counter")
        #expect(third.number == 3)
        #expect(try third.call("counter_bump", arguments: []) == .int64(1))
    }

    @Test("a C image is really unloaded: RTLD_NOLOAD no longer finds it")
    func cImageUnloaded() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        let host = try workspace.makeHost(isolation: .inProcessOnly)
        let generation = try host.load("com.example.greeter")
        let path = generation.shadowPath
        #expect(DynamicLibrary.isMapped(path: path))
        try host.unload("com.example.greeter")
        #expect(!DynamicLibrary.isMapped(path: path))
        #expect(generation.state == .unloaded)
        #expect(host.retiredGenerations == 0)
    }

    @Test("a Swift image is retired, never closed, and counted")
    func swiftImageRetired() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let host = try workspace.makeHost(isolation: .inProcessOnly)
        let generation = try host.load("com.example.counter")
        let path = generation.shadowPath
        try host.unload("com.example.counter")
        #expect(generation.state == .retired)
        #expect(DynamicLibrary.isMapped(path: path), "the Swift image must stay mapped")
        #expect(host.retiredGenerations == 1)
        #expect(host.retiredBytes == generation.imageBytes)
        // A dynamic cast after retiring: this is what crashes when a Swift image is unmapped.
        let values: [Any] = [generation, 1, "two"]
        #expect(values.compactMap { $0 as? CustomStringConvertible }.count == 2)
    }

    @Test("calling into an ended generation is refused, nothing is called")
    func endedGenerationRefusesCalls() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        let host = try workspace.makeHost()
        let generation = try host.load("com.example.greeter")
        try host.unload("com.example.greeter")
        #expect(throws: FFIError.self) { try generation.call("greeter_calls", arguments: []) }
    }

    @Test("the host survives 200 load/unload/reload generations of both plugins")
    func twoHundredGenerations() async throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        workspace.stage("greeter.json")
        let host = try workspace.makeHost(isolation: .inProcessOnly)
        try host.load("com.example.counter")
        try host.load("com.example.greeter")
        var generations = 1
        // 400 loads, as long main-actor work.
        var work = await LongMainActorWork.begin()
        defer { work.end() }
        while generations < 200 {
            await work.pause()
            if generations % 10 == 0 {
                try host.unload("com.example.greeter")
                try host.load("com.example.greeter")
            } else {
                try host.reload("com.example.greeter")
            }
            try host.reload("com.example.counter")
            generations += 1
            let counter = try #require(host.generation(of: "com.example.counter"))
            #expect(try counter.call("counter_bump", arguments: []) == .int64(1))
        }
        let greeter = try #require(host.generation(of: "com.example.greeter"))
        #expect(greeter.number == 200)
        #expect(try greeter.call("greeter_add", arguments: [.int32(2), .int32(40)]) == .int32(42))
        #expect(host.retiredGenerations == 199)
        let shadows = try FileManager.default.contentsOfDirectory(atPath: host.runtimeDirectory.path + "/com.example.greeter")
        #expect(shadows.count == 1, "only the live generation keeps a shadow copy")
    }

    @Test("a changed library is picked up by reload; a broken one keeps the old generation")
    func reloadValidatesAgain() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        let host = try workspace.makeHost()
        try host.load("com.example.greeter")
        let original = workspace.read("com.example.greeter/libGreeter.so")
        workspace.write(Array(original.prefix(4096)), to: "com.example.greeter/libGreeter.so")
        #expect(throws: LoaderError.self) { try host.reload("com.example.greeter") }
        let survivor = try #require(host.generation(of: "com.example.greeter"))
        #expect(survivor.number == 1)
        #expect(try survivor.call("greeter_add", arguments: [.int32(1), .int32(1)]) == .int32(2))
        workspace.write(original, to: "com.example.greeter/libGreeter.so")
        #expect(try host.reload("com.example.greeter").number == 2, "a refused reload uses no generation number")
    }
}

@Suite("Dependencies") @MainActor
struct DependencyTests {
    @Test("dependencies load first, in order")
    func dependenciesFirst() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        workspace.stage("counter.json") { $0["requires"] = ["com.example.greeter": "^1.0.0"] }
        let host = try workspace.makeHost()
        try host.load("com.example.counter")
        #expect(host.events.filter { $0.kind == .loaded }.map(\.subject) == [.plugin("com.example.greeter"), .plugin("com.example.counter")])
    }

    @Test("a missing dependency names both plugins")
    func missingDependency() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json") { $0["requires"] = ["com.example.absent": "^1.0.0"] }
        let host = try workspace.makeHost()
        #expect { try host.load("com.example.counter") } throws: { error in
            let error = error as! LoaderError
            return error.code == .dependencyMissing && error.plugin == "com.example.counter" && error.message.contains("com.example.absent")
        }
        #expect(host.generation(of: "com.example.counter") == nil)
        #expect(host.events.filter { $0.kind == .failed }.map(\.subject) == [.plugin("com.example.counter")])
    }

    @Test("a dependency outside the range names both plugins and both versions")
    func dependencyOutOfRange() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        workspace.stage("counter.json") { $0["requires"] = ["com.example.greeter": "^2.0.0"] }
        let host = try workspace.makeHost()
        #expect { try host.load("com.example.counter") } throws: { error in
            (error as! LoaderError).description == "com.example.counter: requires com.example.greeter >=2.0.0 <3.0.0 but com.example.greeter is 1.2.0"
        }
    }

    @Test("a requirement that did not load fails each dependent with an error of its own naming it, and is tried once")
    func failedRequirement() throws {
        let workspace = PluginWorkspace()
        let counter = workspace.stage("counter.json")
        workspace.stage("greeter.json") { $0["requires"] = ["com.example.counter": "^1.0.0"] }
        workspace.stage("inbox.json")  // requires com.example.greeter
        let host = try workspace.makeHost()
        // Validated at discovery, gone at the load (too large for validation to keep its bytes).
        try FileManager.default.removeItem(atPath: (counter as NSString).appendingPathComponent("libCounter.so"))
        let errors = host.activateDiscovered()
        let own = try #require(errors.first)
        #expect(own.plugin == "com.example.counter" && own.code != .dependencyFailed, "\(own)")
        #expect(errors.dropFirst().map(\.description) == [
            "com.example.greeter: requires com.example.counter, which did not load: \(own.message)",
            "com.example.inbox: requires com.example.greeter, which did not load: requires com.example.counter, which did not load: \(own.message)",
        ])
        #expect(errors.dropFirst().allSatisfy { $0.code == .dependencyFailed })
        #expect(host.events.filter { $0.kind == .failed && $0.subject == .plugin("com.example.counter") }.count == 1, "tried once")
        // Each dependent's failure is an event too, with its own error.
        #expect(host.events.filter { $0.kind == .failed }.map(\.description) == errors.map(\.description))
        #expect(host.plugins.values.allSatisfy { $0.generation == nil })
        // A later load tries again, and names the requirement the same way.
        #expect { try host.load("com.example.inbox") } throws: { error in
            (error as! LoaderError).message.hasPrefix("requires com.example.greeter, which did not load: requires com.example.counter")
        }
    }

    @Test("a dependency cycle is an error naming the plugins in it")
    func cycle() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json") { $0["requires"] = ["com.example.counter": "*"] }
        workspace.stage("counter.json") { $0["requires"] = ["com.example.greeter": "*"] }
        let host = try workspace.makeHost()
        #expect { try host.load("com.example.counter") } throws: { error in
            let error = error as! LoaderError
            return error.code == .dependencyCycle && error.message == "dependency cycle: com.example.counter → com.example.greeter → com.example.counter"
        }
        #expect(host.generation(of: "com.example.greeter") == nil)
    }

    @Test("unloading a plugin that a loaded plugin requires is refused")
    func unloadWithDependents() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        workspace.stage("counter.json") { $0["requires"] = ["com.example.greeter": "^1.0.0"] }
        let host = try workspace.makeHost()
        try host.load("com.example.counter")
        #expect { try host.unload("com.example.greeter") } throws: { error in
            (error as! LoaderError).code == .hasDependents
        }
        try host.unload("com.example.counter")
        try host.unload("com.example.greeter")
    }

    @Test("reload and unload tell an id no plugin has from a plugin that is not loaded")
    func unknownAndUnloadedIDs() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        let host = try workspace.makeHost()
        #expect { try host.reload("com.example.nope") } throws: { error in
            "\(error)" == "com.example.nope: no plugin has this id"
        }
        #expect { try host.unload("com.example.greeter") } throws: { error in
            "\(error)" == "com.example.greeter: not loaded"
        }
    }

    @Test("a refused folder is named by its first error, not by a warning before it")
    func firstErrorBeforeWarnings() throws {
        let workspace = PluginWorkspace()
        let folder = workspace.stage("greeter.json", as: "typo") { manifest in
            manifest["versoin"] = manifest["version"]
            manifest["version"] = nil
        }
        guard case .failure(let failure) = PluginValidator.validate(path: folder) else { Issue.record("a manifest without a version validated"); return }
        #expect(failure.problems.first?.severity == .warning)
        #expect(failure.firstError?.field == "version")
        #expect(failure.oneLine.hasPrefix(folder + "/plugin.json: version: "))
        let host = try workspace.makeHost()
        #expect { try host.loadFolder(folder) } throws: { error in
            let text = "\(error)"
            guard let error = text.firstRange(of: "version: "), let warning = text.firstRange(of: "versoin") else { return false }
            return error.lowerBound < warning.lowerBound
        }
    }
}
