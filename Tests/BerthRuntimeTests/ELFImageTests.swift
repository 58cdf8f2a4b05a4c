import Foundation
import Testing

@_spi(Engine) @testable import BerthRuntime

/// Tests of the ELF reader against a real system library, damaged copies of it, and small
/// synthetic images that each break one rule.
@Suite("ELF image reader")
struct ELFImageTests {
    // MARK: - A real shared object

    @Test("libffi exports ffi_call and its type objects, but not the C library functions it imports")
    func readsRealLibrary() throws {
        let path = try #require(Self.systemLibffiPath(), "no libffi shared object found in the usual library folders")
        let image = try ELFImage(path: path)

        #expect(image.fileType == 3)
        #expect(image.machine == ELFImage.hostMachine)
        #expect(image.exports("ffi_call"))
        #expect(image.exports("ffi_prep_cif"))
        #expect(image.exportedSymbols.contains("ffi_type_void"))
        // free, getenv and __cxa_finalize are undefined entries of libffi's .dynsym: imports.
        #expect(!image.exports("free"))
        #expect(!image.exports("getenv"))
        #expect(!image.exports("__cxa_finalize"))
        #expect(!image.exports("malloc"))
        #expect(!image.exports(""))
        // Names read through a wrong string table offset would be fragments of other strings.
        let unexpected = image.exportedSymbols.filter { !$0.hasPrefix("ffi_") && !$0.hasPrefix("LIBFFI_") }
        #expect(unexpected.isEmpty, "unexpected exports: \(unexpected.sorted())")
        #expect(image.exportedSymbols.count >= 30)
    }

    @Test("Reading a path gives the same image as reading its bytes")
    func pathAndBytesAgree() throws {
        let path = try #require(Self.systemLibffiPath())
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let fromPath = try ELFImage(path: path)
        let fromBytes = try ELFImage(bytes: bytes, path: "in-memory")
        #expect(fromPath.exportedSymbols == fromBytes.exportedSymbols)
        #expect(fromPath.machine == fromBytes.machine)
    }

    @Test("The host machine is the ELF number of the architecture the tests run on")
    func hostMachineMatchesArchitecture() {
        #if arch(x86_64)
        #expect(ELFImage.hostMachine == 62)
        #elseif arch(arm64)
        #expect(ELFImage.hostMachine == 183)
        #endif
    }

    // MARK: - Damaged files on disk

    @Test("A copy cut after its first 4096 bytes is reported as a truncated section header table")
    func firstPageOnlyIsTruncated() throws {
        let original = try Self.systemLibffiBytes()
        try Self.withTemporaryFile(named: "libcut.so", contents: Array(original.prefix(4096))) { path in
            let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(path: path) })
            #expect(error.code == .truncatedSectionTable)
            #expect(error.path == path)
            #expect(error.description.hasPrefix("\(path): truncated: section header table ends at byte "))
            #expect(error.description.hasSuffix(" but the file has 4096 bytes"))
        }
    }

    @Test("A copy missing its last 100 bytes is reported as truncated")
    func missingTailIsTruncated() throws {
        let original = try Self.systemLibffiBytes()
        try Self.withTemporaryFile(named: "libshort.so", contents: Array(original.dropLast(100))) { path in
            let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(path: path) })
            #expect([.truncatedSectionTable, .truncatedSection].contains(error.code))
            #expect(error.detail.contains("\(original.count - 100) bytes"))
        }
    }

    @Test("A shell script is not ELF")
    func badMagicIsNotELF() throws {
        let script = Array("#!/bin/sh\necho 'this is not a library'\n".utf8)
        try Self.withTemporaryFile(named: "script.so", contents: script) { path in
            let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(path: path) })
            #expect(error.code == .notELF)
            #expect(error.description == "\(path): not an ELF file: the first bytes are not 7F 'E' 'L' 'F'")
        }
    }

    @Test("An empty file is too short")
    func emptyFileIsTooShort() throws {
        try Self.withTemporaryFile(named: "empty.so", contents: []) { path in
            let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(path: path) })
            #expect(error.code == .tooShort)
            #expect(error.detail.contains("0 bytes"))
        }
    }

    @Test("A missing file is unreadable, with the system's reason")
    func missingFileIsUnreadable() throws {
        let path = "/nonexistent-berth-test-folder/libnothing.so"
        let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(path: path) })
        #expect(error.code == .unreadable)
        #expect(error.description == "\(path): cannot read: No such file or directory")
    }

    @Test("A folder is unreadable as a library")
    func folderIsUnreadable() throws {
        let path = FileManager.default.temporaryDirectory.path
        let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(path: path) })
        #expect(error.code == .unreadable)
        #expect(error.detail == "cannot read: not a regular file")
    }

    // MARK: - Header rules on synthetic images

    @Test("A 32-bit ELF file is refused as an unsupported class, saying it is 32-bit")
    func thirtyTwoBitIsUnsupported() throws {
        // A real ELF32 header is 52 bytes; the reader must decide from e_ident before asking for 64.
        var header: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 1, 1, 1, 0] + Array(repeating: 0, count: 8)
        header += [3, 0, 3, 0] + Array(repeating: 0, count: 32)
        #expect(header.count == 52)
        let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(bytes: header, path: "lib32.so") })
        #expect(error.code == .unsupportedClass)
        #expect(error.description.hasPrefix("lib32.so: 32-bit ELF"))
    }

    @Test("An unknown ELF class is refused as an unsupported class")
    func unknownClassIsUnsupported() throws {
        var image = SyntheticELF().bytes()
        image[4] = 9
        let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(bytes: image, path: "x") })
        #expect(error.code == .unsupportedClass)
        #expect(error.detail.contains("unknown ELF class 9"))
    }

    @Test("A big-endian ELF file is refused as an unsupported byte order")
    func bigEndianIsUnsupported() throws {
        var image = SyntheticELF().bytes()
        image[5] = 2
        let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(bytes: image, path: "x") })
        #expect(error.code == .unsupportedByteOrder)
        #expect(error.detail.contains("big-endian"))
    }

    @Test("A 64-bit identification followed by less than a full header is too short")
    func cutHeaderIsTooShort() throws {
        let image = Array(SyntheticELF().bytes().prefix(40))
        let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(bytes: image, path: "x") })
        #expect(error.code == .tooShort)
        #expect(error.detail == "too short: 40 bytes, fewer than the 64-byte ELF64 header")
    }

    @Test("An executable is not a shared object")
    func executableIsNotSharedObject() throws {
        var elf = SyntheticELF()
        elf.fileType = 2
        let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(bytes: elf.bytes(), path: "a.out") })
        #expect(error.code == .notSharedObject)
        #expect(error.description == "a.out: not a shared object: e_type is ET_EXEC (2), an executable, expected ET_DYN (3)")
    }

    @Test("The machine is reported, not checked")
    func foreignMachineIsReported() throws {
        var elf = SyntheticELF()
        elf.machine = 183
        let image = try ELFImage(bytes: elf.bytes(), path: "arm.so")
        #expect(image.machine == 183)
        #expect(image.exports("plugin_entry"))
    }

    // MARK: - Symbol rules on synthetic images

    @Test("Only defined, visible, global, weak or unique functions and objects count as exports")
    func exportRules() throws {
        typealias Symbol = SyntheticELF.Symbol
        var elf = SyntheticELF()
        elf.symbols = [
            Symbol(name: "global_function", binding: 1, type: 2),
            Symbol(name: "weak_object", binding: 2, type: 1),
            Symbol(name: "unique_object", binding: 10, type: 1),
            Symbol(name: "indirect_function", binding: 1, type: 10),
            Symbol(name: "label_with_value", binding: 1, type: 0, value: 0x1234),
            Symbol(name: "protected_function", binding: 1, type: 2, visibility: 3),
            Symbol(name: "label_without_value", binding: 1, type: 0, value: 0),
            Symbol(name: "local_function", binding: 0, type: 2),
            Symbol(name: "imported_function", binding: 1, type: 2, sectionIndex: 0, value: 0),
            Symbol(name: "hidden_function", binding: 1, type: 2, visibility: 2),
            Symbol(name: "internal_function", binding: 1, type: 2, visibility: 1),
            Symbol(name: "section_symbol", binding: 1, type: 3),
            Symbol(name: "thread_local", binding: 1, type: 6),
            Symbol(name: "absolute_object", binding: 1, type: 1, sectionIndex: 0xFFF1),
        ]
        let image = try ELFImage(bytes: elf.bytes(), path: "rules.so")
        #expect(image.exportedSymbols == [
            "global_function", "weak_object", "unique_object", "indirect_function",
            "label_with_value", "protected_function", "absolute_object",
        ])
    }

    @Test("A section count stored in section 0 (more than 65279 sections) is honoured")
    func extendedSectionCount() throws {
        var elf = SyntheticELF()
        elf.useExtendedSectionCount = true
        let image = try ELFImage(bytes: elf.bytes(), path: "many.so")
        #expect(image.exports("plugin_entry"))
    }

    @Test("A library without .dynsym has no dynamic symbol table")
    func missingDynamicSymbols() throws {
        var elf = SyntheticELF()
        elf.includeDynamicSymbols = false
        let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(bytes: elf.bytes(), path: "x") })
        #expect(error.code == .noDynamicSymbolTable)
        #expect(error.detail == "no dynamic symbol table: none of the 2 sections has type SHT_DYNSYM (11)")
    }

    @Test("A library without a section header table has no dynamic symbol table")
    func missingSectionTable() throws {
        var elf = SyntheticELF()
        elf.sectionTableOffsetOverride = 0
        let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(bytes: elf.bytes(), path: "x") })
        #expect(error.code == .noDynamicSymbolTable)
    }

    @Test("A section header entry size below 64 bytes is a malformed section table")
    func smallSectionEntrySize() throws {
        var elf = SyntheticELF()
        elf.sectionEntrySizeOverride = 40
        let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(bytes: elf.bytes(), path: "x") })
        #expect(error.code == .truncatedSectionTable)
        #expect(error.detail.contains("e_shentsize is 40"))
    }

    @Test("A section table offset near the top of the 64-bit range is truncated, not an overflow")
    func hugeSectionTableOffset() throws {
        var elf = SyntheticELF()
        elf.sectionTableOffsetOverride = UInt64.max - 10
        let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(bytes: elf.bytes(), path: "x") })
        #expect(error.code == .truncatedSectionTable)
    }

    @Test("A dynamic symbol table that runs past the end of the file is a truncated section")
    func dynamicSymbolsPastEnd() throws {
        var elf = SyntheticELF()
        elf.dynamicSymbolSizeOverride = 1 << 20
        let bytes = elf.bytes()
        let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(bytes: bytes, path: "x") })
        #expect(error.code == .truncatedSection)
        #expect(error.detail.hasPrefix("truncated: dynamic symbol table (section 2) ends at byte "))
        #expect(error.detail.hasSuffix("but the file has \(bytes.count) bytes"))
    }

    @Test("A string table link to a section that does not exist is a truncated section")
    func stringTableLinkOutOfRange() throws {
        var elf = SyntheticELF()
        elf.dynamicSymbolLinkOverride = 57
        let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(bytes: elf.bytes(), path: "x") })
        #expect(error.code == .truncatedSection)
        #expect(error.detail.contains("section 57, but the file has 3 sections"))
    }

    @Test("A symbol name offset outside the string table is a truncated section")
    func nameOffsetOutOfRange() throws {
        var elf = SyntheticELF()
        elf.symbols = [SyntheticELF.Symbol(name: "plugin_entry", binding: 1, type: 2, nameOffsetOverride: 5000)]
        let error = try #require(Self.failure { () throws(ELFImageError) in try ELFImage(bytes: elf.bytes(), path: "x") })
        #expect(error.code == .truncatedSection)
        #expect(error.detail.contains("name offset 5000"))
    }

    // MARK: - Robustness

    @Test("Every byte of a synthetic image set to 0x00, 0x7F, 0x80 or 0xFF either parses or throws")
    func corruptedSyntheticImagesNeverCrash() {
        let original = SyntheticELF().bytes()
        var outcomes = (parsed: 0, rejected: 0)
        for position in original.indices {
            for replacement: UInt8 in [0x00, 0x7F, 0x80, 0xFF] {
                var damaged = original
                damaged[position] = replacement
                switch Result(catching: { () throws(ELFImageError) in try ELFImage(bytes: damaged, path: "x") }) {
                case .success: outcomes.parsed += 1
                case .failure: outcomes.rejected += 1
                }
            }
        }
        #expect(outcomes.parsed + outcomes.rejected == original.count * 4)
        #expect(outcomes.rejected > 0)
        #expect(outcomes.parsed > 0)
    }

    @Test("Every prefix of the real library and random corruptions of it either parse or throw")
    func damagedRealLibraryNeverCrashes() throws {
        let original = try Self.systemLibffiBytes()
        var rejectedPrefixes = 0
        for length in stride(from: 0, to: original.count, by: 61) {
            if case .failure = Result(catching: { () throws(ELFImageError) in
                try ELFImage(bytes: Array(original.prefix(length)), path: "x")
            }) {
                rejectedPrefixes += 1
            }
        }
        // The section header table is at the end, so every proper prefix must be refused.
        #expect(rejectedPrefixes == (original.count + 60) / 61)

        var generator = SplitMix64(seed: 0xBE27)
        for _ in 0..<500 {
            var damaged = original
            for _ in 0..<8 {
                let position = Int(generator.next() % UInt64(damaged.count))
                damaged[position] = UInt8(truncatingIfNeeded: generator.next())
            }
            _ = try? ELFImage(bytes: damaged, path: "x")
        }
    }

    // MARK: - Helpers

    /// Runs `body` and returns the error it threw, or nil if it succeeded.
    static func failure(_ body: () throws(ELFImageError) -> ELFImage) -> ELFImageError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    /// Finds a libffi shared object in the usual library folders without loading it.
    static func systemLibffiPath() -> String? {
        let folders = [
            "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
            "/lib/aarch64-linux-gnu", "/usr/lib64", "/lib64", "/usr/lib", "/lib",
        ]
        for folder in folders {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            // Prefer the versioned name, which is a real file or a link to one on every distribution.
            let candidates = names.filter { $0.hasPrefix("libffi.so.") }.sorted()
            if let name = candidates.first {
                return folder + "/" + name
            }
        }
        return nil
    }

    /// The bytes of the system's libffi.
    static func systemLibffiBytes() throws -> [UInt8] {
        let path = try #require(systemLibffiPath(), "no libffi shared object found in the usual library folders")
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Writes `contents` to a file in a fresh temporary folder, runs `body` with its path, and removes the folder.
    static func withTemporaryFile(named name: String, contents: [UInt8], _ body: (String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("berth-elf-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent(name)
        try Data(contents).write(to: file)
        try body(file.path)
    }
}

extension ELFImageTests {
    /// Builds a minimal ELF64 little-endian shared object in memory: a header, a string table, a
    /// dynamic symbol table and three section headers (null, `.dynstr`, `.dynsym`), with fields that
    /// tests can override one at a time.
    struct SyntheticELF {
        /// One `.dynsym` entry.
        struct Symbol {
            /// The name, stored in the string table.
            var name: String
            /// `STB_*`.
            var binding: UInt8
            /// `STT_*`.
            var type: UInt8
            /// `STV_*`.
            var visibility: UInt8 = 0
            /// `st_shndx`; 1 (the string table section) stands for "defined somewhere in this file".
            var sectionIndex: UInt16 = 1
            /// `st_value`.
            var value: UInt64 = 0x1000
            /// Replaces the real `st_name` when set.
            var nameOffsetOverride: UInt32?
        }

        /// `e_type`.
        var fileType: UInt16 = 3
        /// `e_machine`.
        var machine: UInt16 = 62
        /// The symbols after the null symbol.
        var symbols = [Symbol(name: "plugin_entry", binding: 1, type: 2)]
        /// Whether the `.dynsym` section header is written.
        var includeDynamicSymbols = true
        /// Writes 0 in `e_shnum` and the real count in section 0's `sh_size`.
        var useExtendedSectionCount = false
        /// Replaces `e_shoff` when set.
        var sectionTableOffsetOverride: UInt64?
        /// Replaces `e_shentsize` when set.
        var sectionEntrySizeOverride: UInt16?
        /// Replaces the `.dynsym` `sh_size` when set.
        var dynamicSymbolSizeOverride: UInt64?
        /// Replaces the `.dynsym` `sh_link` when set.
        var dynamicSymbolLinkOverride: UInt32?

        /// The image.
        func bytes() -> [UInt8] {
            var strings: [UInt8] = [0]
            var nameOffsets: [UInt32] = []
            for symbol in symbols {
                nameOffsets.append(UInt32(strings.count))
                strings += Array(symbol.name.utf8) + [0]
            }
            let stringOffset = 64
            let symbolOffset = (stringOffset + strings.count + 7) / 8 * 8
            var symbolTable = [UInt8](repeating: 0, count: 24)  // the null symbol
            for (symbol, nameOffset) in zip(symbols, nameOffsets) {
                Self.append(symbol.nameOffsetOverride ?? nameOffset, to: &symbolTable)
                symbolTable.append(symbol.binding << 4 | symbol.type)
                symbolTable.append(symbol.visibility)
                Self.append(symbol.sectionIndex, to: &symbolTable)
                Self.append(symbol.value, to: &symbolTable)
                Self.append(UInt64(8), to: &symbolTable)
            }
            let sectionTableOffset = (symbolOffset + symbolTable.count + 7) / 8 * 8
            let sectionCount = includeDynamicSymbols ? 3 : 2

            var image: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0] + Array(repeating: 0, count: 8)
            Self.append(fileType, to: &image)
            Self.append(machine, to: &image)
            Self.append(UInt32(1), to: &image)  // e_version
            Self.append(UInt64(0), to: &image)  // e_entry
            Self.append(UInt64(0), to: &image)  // e_phoff
            Self.append(sectionTableOffsetOverride ?? UInt64(sectionTableOffset), to: &image)
            Self.append(UInt32(0), to: &image)  // e_flags
            Self.append(UInt16(64), to: &image)  // e_ehsize
            Self.append(UInt16(56), to: &image)  // e_phentsize
            Self.append(UInt16(0), to: &image)  // e_phnum
            Self.append(sectionEntrySizeOverride ?? 64, to: &image)
            Self.append(useExtendedSectionCount ? 0 : UInt16(sectionCount), to: &image)
            Self.append(UInt16(0), to: &image)  // e_shstrndx

            image += strings
            image += Array(repeating: 0, count: symbolOffset - image.count)
            image += symbolTable
            image += Array(repeating: 0, count: sectionTableOffset - image.count)

            Self.appendSection(type: 0, offset: 0, size: useExtendedSectionCount ? UInt64(sectionCount) : 0, link: 0, entrySize: 0, to: &image)
            Self.appendSection(type: 3, offset: UInt64(stringOffset), size: UInt64(strings.count), link: 0, entrySize: 0, to: &image)
            if includeDynamicSymbols {
                Self.appendSection(
                    type: 11, offset: UInt64(symbolOffset), size: dynamicSymbolSizeOverride ?? UInt64(symbolTable.count),
                    link: dynamicSymbolLinkOverride ?? 1, entrySize: 24, to: &image)
            }
            return image
        }

        /// Appends one 64-byte section header.
        private static func appendSection(type: UInt32, offset: UInt64, size: UInt64, link: UInt32, entrySize: UInt64, to image: inout [UInt8]) {
            append(UInt32(0), to: &image)  // sh_name
            append(type, to: &image)
            append(UInt64(0), to: &image)  // sh_flags
            append(UInt64(0), to: &image)  // sh_addr
            append(offset, to: &image)
            append(size, to: &image)
            append(link, to: &image)
            append(UInt32(0), to: &image)  // sh_info
            append(UInt64(8), to: &image)  // sh_addralign
            append(entrySize, to: &image)
        }

        /// Appends `value` in little-endian byte order.
        private static func append<Value: FixedWidthInteger>(_ value: Value, to image: inout [UInt8]) {
            for position in 0..<(Value.bitWidth / 8) {
                image.append(UInt8(truncatingIfNeeded: value >> (position * 8)))
            }
        }
    }

    /// A small deterministic random number generator, so a failing corruption can be reproduced.
    struct SplitMix64: RandomNumberGenerator {
        /// The generator's state.
        private var state: UInt64

        /// Starts the sequence at `seed`.
        init(seed: UInt64) {
            state = seed
        }

        /// The next pseudo-random number.
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var mixed = state
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            return mixed ^ (mixed >> 31)
        }
    }
}
