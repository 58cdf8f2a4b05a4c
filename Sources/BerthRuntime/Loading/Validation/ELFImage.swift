@_spi(Engine) import BerthCore
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What the host learns about a plugin's shared library by reading the file, without loading it.
///
/// Validation happens before any plugin code runs, so the library is never handed to `dlopen`:
/// a corrupt, half-written or foreign file must be rejected with a clear message instead of
/// crashing the host or running an initializer. Only 64-bit little-endian ELF shared objects are
/// accepted; the machine is recorded but not checked here, so the caller can compare it with
/// ``hostMachine`` and word its own message.
///
/// The parsing itself lives in `ELFImage+Parsing.swift`.
package struct ELFImage: Sendable {
    /// The `e_machine` field of the ELF header, for example 62 for x86-64.
    package let machine: UInt16

    /// The `e_type` field of the ELF header; always 3 (`ET_DYN`) once parsing succeeded.
    package let fileType: UInt16

    /// Names that other modules can bind to through the dynamic symbol table.
    ///
    /// An entry of `.dynsym` counts when it is defined in this file (its section index is not
    /// `SHN_UNDEF`), its binding is `GLOBAL`, `WEAK` or `GNU_UNIQUE`, its visibility is not
    /// `HIDDEN` or `INTERNAL`, and its type is `FUNC`, `OBJECT`, `IFUNC`, or `NOTYPE` with a
    /// non-zero value. Version suffixes are not part of the names: `.dynsym` stores them in a
    /// separate section, so `ffi_call@@LIBFFI_BASE_8.0` appears here as `ffi_call`.
    package let exportedSymbols: Set<String>

    /// The `e_machine` value of the architecture this host was compiled for.
    ///
    /// A plugin built for another architecture cannot be loaded, and comparing this number before
    /// `dlopen` gives a better message than the loader's. On an architecture this list does not
    /// know, the value is 0 (`EM_NONE`), which no real library carries, so every library is refused
    /// rather than wrongly accepted.
    package static var hostMachine: UInt16 {
        #if arch(x86_64)
        return 62
        #elseif arch(arm64)
        return 183
        #else
        return 0
        #endif
    }

    /// Opens the file at `path` and parses it as an ELF shared object, reading only the
    /// header, the section table and the dynamic symbols (`ELF64.FileRegions`), never the whole file.
    package init(path: String) throws(ELFImageError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw Self.unreadable(path, because: errno)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw Self.unreadable(path, because: errno)
        }
        // A FIFO or character device could block forever or never end, and a directory is a
        // common mistake in a manifest, so only regular files are read.
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw ELFImageError(code: .unreadable, path: path, detail: "cannot read: not a regular file")
        }
        try self.init(descriptor: descriptor, size: Int(status.st_size), path: path)
    }

    /// Whether the library exports a symbol with exactly this name.
    package func exports(_ symbol: String) -> Bool {
        exportedSymbols.contains(symbol)
    }

    /// Memberwise initializer used by the parser once every field has been validated.
    init(machine: UInt16, fileType: UInt16, exportedSymbols: Set<String>) {
        self.machine = machine
        self.fileType = fileType
        self.exportedSymbols = exportedSymbols
    }

    /// Builds the error for a failed system call, worded with the C library's text for `code`.
    private static func unreadable(_ path: String, because code: Int32) -> ELFImageError {
        ELFImageError(code: .unreadable, path: path, detail: "cannot read: \(String(cString: strerror(code)))")
    }
}

/// Why a file could not be accepted as a plugin's shared library.
package struct ELFImageError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The kind of problem, for callers that react differently to each.
    package enum Code: Sendable, Equatable {
        /// The file could not be opened or read, or is not a regular file.
        case unreadable
        /// The file ends before the ELF identification or header is complete.
        case tooShort
        /// The file does not start with the ELF magic bytes.
        case notELF
        /// The file is ELF, but not 64-bit.
        case unsupportedClass
        /// The file is ELF, but not little-endian.
        case unsupportedByteOrder
        /// The file is ELF, but an executable, relocatable object or core dump, not a shared object.
        case notSharedObject
        /// The section header table is malformed or runs past the end of the file.
        case truncatedSectionTable
        /// The dynamic symbol table or its string table is malformed or runs past the end of the file.
        case truncatedSection
        /// The file has no section of type `SHT_DYNSYM`, so it exports nothing.
        case noDynamicSymbolTable
    }

    /// The kind of problem.
    package let code: Code

    /// The file the problem was found in, as given by the caller.
    package let path: String

    /// What is wrong, in words, including the offending field or byte offsets.
    package let detail: String

    /// Creates an error; `detail` should name the field or offsets involved.
    package init(code: Code, path: String, detail: String) {
        self.code = code
        self.path = path
        self.detail = detail
    }

    /// One line: the path, then what is wrong with it.
    package var description: String {
        "\(path): \(detail)"
    }
}
