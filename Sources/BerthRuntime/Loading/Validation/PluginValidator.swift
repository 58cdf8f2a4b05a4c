@_spi(Engine) import BerthCore
internal import Crypto
import Foundation

/// A plugin folder that passed every check that can be made without running its code.
@_spi(Engine) public struct ValidatedPlugin: Sendable {
    /// The plugin folder (as discovered, not resolved).
    package var folder: String
    /// The manifest file.
    package var manifestPath: String
    /// The decoded manifest.
    package var manifest: PluginManifest
    /// The library's real path (symlinks resolved, inside the folder).
    package internal(set) var libraryPath: String
    /// The library's size in bytes.
    package var librarySize: Int
    /// The library's SHA-256, lower-case hex.
    package internal(set) var librarySHA256: String
    /// The manifest file's SHA-256 (a changed manifest means a reload under `--watch`).
    package var manifestSHA256: String
    /// Who signed it, as the trusted keys see it (`plugin.sig`).
    package var signature: SignatureStatus
    /// Warnings (unknown fields); never errors.
    package var warnings: [PluginProblem]
    /// The library's bytes as validated, for a small library (`ValidationCache.keptBytesLimit`):
    /// its sealed copy is made from them. Shared, not copied, by the records and
    /// generations that hold this value: 256 KB at most per plugin.
    var libraryBytes: [UInt8]? = nil
}

/// The checks a plugin must pass before any of its code runs: manifest schema and rules,
/// library containment, ELF header, SHA-256, exported symbols and the signature. One code
/// path for the host, `berth validate` and `berth pack`.
@_spi(Engine) public enum PluginValidator {
    /// The manifest's file name inside a plugin folder.
    package static let manifestFileName = "plugin.json"
    /// The most bytes a plugin's library may have (256 MiB; the largest example is a few
    /// MiB): a larger one is refused by its `fstat` size before a byte of it is read.
    package static let libraryBytesLimit = 256 << 20

    /// Validates the plugin in `folder` (a folder holding `plugin.json`) or a manifest file,
    /// judging its signature by `signatures`.
    @_spi(Engine) public static func validate(path: String, signatures: SignaturePolicy = SignaturePolicy()) -> Result<ValidatedPlugin, PluginValidationFailure> {
        validate(path: path, trust: signatures.loadTrustedKeys(), requireSignature: signatures.requireSignature)
    }

    /// Validates with trusted keys already read (a scan reads the folder once).
    static func validate(path: String, trust: TrustedKeys, requireSignature: Bool) -> Result<ValidatedPlugin, PluginValidationFailure> {
        // The folder is opened once; the manifest, the library and the signature are found from it.
        let given = RawFile.Folder(path)
        // A folder that cannot be opened (out of descriptors, say) is looked at by path.
        guard !path.isEmpty, let kind = given.kind ?? RawFile.kind(path) else {
            return .failure(.init([PluginProblem(path: path, field: "path", message: "no such file or folder")]))
        }
        let isFolder = kind == .folder
        let manifestPath = isFolder ? (path as NSString).appendingPathComponent(manifestFileName) : path
        let folder = isFolder ? path : ParentPath.of(path)
        let place = isFolder ? given : RawFile.Folder(folder)
        // One read serves both the decoding and the manifest's digest; only a failed read
        // asks whether the file is there at all.
        let manifestLimit = PluginManifest.Limits.fileBytes
        guard let manifestData = isFolder ? place.contents(manifestFileName, limit: manifestLimit) : RawFile.contents(manifestPath, limit: manifestLimit) else {
            let (reason, code) = (RawFile.failure, errno)
            guard RawFile.exists(manifestPath) else {
                return .failure(.init([PluginProblem(path: manifestPath, field: "file", message: "no plugin.json in this folder")]))
            }
            if code == EFBIG {
                return .failure(.init([PluginProblem(path: manifestPath, field: "file",
                                                     message: RawFile.tooLong(manifestPath, limit: manifestLimit, what: "a manifest"))]))
            }
            return .failure(.init([PluginProblem(path: manifestPath, field: "file", message: "cannot read the manifest: \(reason)")]))
        }
        let decodedManifest = ValidationCache.manifest(manifestData, path: manifestPath)
        guard let manifest = decodedManifest.manifest else { return .failure(.init(decodedManifest.problems)) }
        var problems = decodedManifest.problems

        guard let contained = containedLibrary(manifest.library, in: place, manifestPath: manifestPath, problems: &problems)
        else { return .failure(.init(problems)) }
        let libraryPath = contained.path
        guard let library = checkedLibrary(contained, manifest: manifest, manifestData: manifestData,
                                           folder: folder, problems: &problems)
        else { return .failure(.init(problems)) }
        // The signature is judged on every validation (the trust folder and plugin.sig can
        // change while the library stays cached); a library changed after signing is one
        // line, the signature's, not two.
        let signature = SignatureStatus.check(folder: place, manifestSHA256: decodedManifest.digest,
                                              librarySHA256: library.digest, trust: trust)
        if let problem = signature.problem(folder: folder, trust: trust, requireSignature: requireSignature) {
            problems.append(problem)
        }
        if let expected = manifest.sha256, expected != library.digest, !signature.saysLibraryChanged {
            problems.append(PluginProblem(
                path: (folder as NSString).appendingPathComponent(manifest.library), field: "sha256",
                message: "the library's SHA-256 is \(library.digest) but the manifest expects \(expected)"
            ))
        }
        problems += library.problems
        guard !problems.hasErrors else { return .failure(.init(problems)) }
        return .success(ValidatedPlugin(
            folder: folder, manifestPath: manifestPath, manifest: manifest, libraryPath: libraryPath,
            librarySize: library.size, librarySHA256: library.digest,
            manifestSHA256: decodedManifest.digest, signature: signature, warnings: problems,
            libraryBytes: library.bytes
        ))
    }

    /// The library's digest and image checks: from the cache while the file and the manifest
    /// are unchanged, else read (once, from the descriptor that proved it inside the folder
    /// when there is one), hashed and checked.
    private static func checkedLibrary(
        _ contained: ContainedLibrary, manifest: PluginManifest, manifestData: Data, folder: String,
        problems: inout [PluginProblem]
    ) -> ValidationCache.Library? {
        let (libraryPath, identity) = (contained.path, contained.identity)
        if let identity, let cached = ValidationCache.library(at: libraryPath, identity: identity, manifestData: manifestData) {
            return cached
        }
        guard let file = contained.file ?? RawFile.OpenFile.reading(libraryPath) else {
            problems.append(PluginProblem(path: libraryPath, field: "library", message: "cannot read the library: \(RawFile.failure)"))
            return nil
        }
        // Its size first, from the open descriptor: a larger file is refused unread.
        guard file.size <= libraryBytesLimit else {
            problems.append(PluginProblem(path: libraryPath, field: "library",
                                          message: RawFile.tooLong(size: file.size, limit: libraryBytesLimit, what: "a library")))
            return nil
        }
        // Problems name the library as the user wrote it; loading uses the resolved path.
        let shownPath = (folder as NSString).appendingPathComponent(manifest.library)
        var libraryProblems: [PluginProblem] = []
        let library: ValidationCache.Library
        if file.size <= ValidationCache.keptBytesLimit {
            // A small library is read whole, once: its bytes make its sealed copy.
            guard let bytes = file.bytes(limit: ValidationCache.keptBytesLimit) else {
                problems.append(PluginProblem(path: libraryPath, field: "library", message: "cannot read the library: \(RawFile.failure)"))
                return nil
            }
            checkImage({ () throws(ELFImageError) in try ELFImage(bytes: bytes, path: shownPath) }, manifest: manifest,
                       libraryPath: shownPath, problems: &libraryProblems)
            library = ValidationCache.Library(identity: identity, manifestData: manifestData, size: bytes.count,
                                              digest: HexDigest.sha256(bytes), problems: libraryProblems, read: bytes)
        } else {
            // A larger one is hashed a chunk at a time, and its ELF tables are read where they
            // are: the host never holds the whole file.
            guard file.isRegular, let digest = HexDigest.sha256(streaming: file.descriptor) else {
                let reason = file.isRegular ? RawFile.failure : "it is not a regular file"
                problems.append(PluginProblem(path: libraryPath, field: "library", message: "cannot read the library: \(reason)"))
                return nil
            }
            checkImage({ () throws(ELFImageError) in try ELFImage(descriptor: file.descriptor, size: file.size, path: shownPath) },
                       manifest: manifest, libraryPath: shownPath, problems: &libraryProblems)
            // Hashed and parsed in two passes: a file written meanwhile is refused, not half-checked.
            if let identity, ValidationCache.FileIdentity(path: libraryPath) != identity {
                problems.append(PluginProblem(path: libraryPath, field: "library", message: "changed while it was being validated; try again once it is written"))
                return nil
            }
            library = ValidationCache.Library(identity: identity, manifestData: manifestData, size: file.size,
                                              digest: digest, problems: libraryProblems, read: nil)
        }
        // Remember only what was read from a file whose identity was known before the read
        // and is the same after it (a file being written is read again next time).
        if let identity, ValidationCache.FileIdentity(path: libraryPath) == identity {
            ValidationCache.remember(library, at: libraryPath)
        }
        return library
    }

    /// A library proved to be inside its plugin folder: its real path, its identity there, and
    /// for a plain name, the file itself, opened by the proof.
    private struct ContainedLibrary {
        let path: String
        let identity: ValidationCache.FileIdentity?
        var file: RawFile.OpenFile?
    }

    /// Resolves `library` against the folder and proves it stays inside: no symlink may lead
    /// out of the plugin folder.
    private static func containedLibrary(
        _ library: String, in place: RawFile.Folder, manifestPath: String, problems: inout [PluginProblem]
    ) -> ContainedLibrary? {
        let folder = place.path
        // No real path for the folder, no proof of containment: refused, never compared
        // with the folder as written (an empty folder, the working one, would prefix all).
        guard let realFolder = place.realPath ?? RawFile.resolved(folder.isEmpty ? "." : folder)?.path else {
            problems.append(PluginProblem(path: manifestPath, field: "library", message: "cannot resolve the plugin folder \(folder.isEmpty ? "." : folder) to prove '\(library)' stays inside it"))
            return nil
        }
        let inside = realFolder == "/" ? "/" : realFolder + "/"
        // The common case: a plain name in the folder, which the kernel finds without
        // crossing a symlink or leaving the folder; its real path is then the folder's plus it.
        if let file = place.plainFile(library) {
            return ContainedLibrary(path: inside + library, identity: ValidationCache.FileIdentity(file.info), file: file)
        }
        let candidate = folder.isEmpty ? library : folder + "/" + library
        // A library that resolves exists; only one that does not is looked at again.
        let realLibrary: String
        let identity: ValidationCache.FileIdentity?
        if let resolved = RawFile.resolved(candidate) {
            realLibrary = resolved.path
            identity = ValidationCache.FileIdentity(resolved.info)
        } else {
            guard RawFile.exists(candidate) else {
                problems.append(PluginProblem(path: manifestPath, field: "library", message: "'\(library)' does not exist in \(folder)"))
                return nil
            }
            realLibrary = candidate
            identity = ValidationCache.FileIdentity(path: candidate)
        }
        guard realLibrary.hasPrefix(inside) else {
            problems.append(PluginProblem(
                path: manifestPath, field: "library",
                message: "'\(library)' resolves to \(realLibrary), outside the plugin folder \(realFolder)"
            ))
            return nil
        }
        // Read what was proved: the real path opened again, kept only while it is still the
        // file that resolved there (a swap in between is refused, not read).
        let file = RawFile.OpenFile.reading(realLibrary)
        if let file, let identity, !identity.isSameFile(as: file.info) {
            problems.append(PluginProblem(path: manifestPath, field: "library", message: "'\(library)' changed while it was validated; validate it again"))
            return nil
        }
        return ContainedLibrary(path: realLibrary, identity: identity, file: file)
    }

    /// ELF header, machine and the dynamic symbol table: the entry and every export present.
    private static func checkImage(
        _ parse: () throws(ELFImageError) -> ELFImage, manifest: PluginManifest, libraryPath: String, problems: inout [PluginProblem]
    ) {
        let image: ELFImage
        do {
            image = try parse()
        } catch {
            problems.append(PluginProblem(path: libraryPath, field: "elf", message: error.detail))
            return
        }
        guard image.machine == ELFImage.hostMachine else {
            problems.append(PluginProblem(
                path: libraryPath, field: "elf",
                message: "built for ELF machine \(image.machine), this host is machine \(ELFImage.hostMachine)"
            ))
            return
        }
        let library = (libraryPath as NSString).lastPathComponent
        if !image.exports(manifest.entry) {
            // A plugin has one entry: when the library exports exactly one, name it.
            let entries = image.exportedSymbols.filter { $0.hasPrefix("berth_") && $0.hasSuffix("_entry_v1") }
            let hint = entries.count == 1 ? " (it exports '\(entries.first!)')" : ""
            problems.append(PluginProblem(
                path: libraryPath, field: "entry",
                message: "symbol '\(manifest.entry)' is not in \(library)'s dynamic symbol table\(hint)"
            ))
        }
        let missing = manifest.exports.enumerated().filter { !image.exports($0.element.symbol) }
        let symbols = missing.isEmpty ? [] : image.exportedSymbols.sorted()
        for (index, export) in missing {
            problems.append(PluginProblem(
                path: libraryPath, field: "exports[\(index)].symbol",
                message: "symbol '\(export.symbol)' is not in \(library)'s dynamic symbol table"
                    + Suggestion.hint(for: export.symbol, among: symbols)
            ))
        }
    }

    /// `path` with every symlink resolved (as validation resolves it), or `path` itself when
    /// nothing is there.
    /// `package`: for the CLI's folder commands (`list`, `new`, `pack`, `keygen`, `validate`).
    package static func realPath(_ path: String) -> String {
        RawFile.resolved(path)?.path ?? path
    }
}

/// Why a plugin did not validate: every problem found, in order.
@_spi(Engine) public struct PluginValidationFailure: Error, Sendable, CustomStringConvertible {
    /// Every problem found, errors and warnings.
    package var problems: [PluginProblem]
    /// A failure made of `problems`.
    package init(_ problems: [PluginProblem]) { self.problems = problems }
    /// Every problem, one per line.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
    /// The problem that stopped validation: the first error (a warning alone stops nothing).
    package var firstError: PluginProblem? { problems.firstError }
    /// The errors, then the warnings, on one line (for a one-line refusal).
    package var oneLine: String {
        (problems.filter { $0.severity == .error } + problems.filter { $0.severity != .error })
            .map(\.description).joined(separator: "; ")
    }
}
