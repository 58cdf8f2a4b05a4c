@_spi(Engine) import BerthCore
/// Parsing of ELF64 little-endian shared objects from an in-memory copy of the file.
///
/// Every offset and size in an ELF file comes from the file itself, so every one of them is
/// treated as hostile: sums are computed with overflow checks, each range is compared with the
/// file's length before it is used, and integers are assembled byte by byte instead of by loading
/// through a pointer, which would be undefined behaviour at an unaligned offset.
extension ELFImage {
    /// Parses `bytes` as a 64-bit little-endian ELF shared object.
    ///
    /// `path` is used only to word error messages; nothing is read from it.
    package init(bytes: [UInt8], path: String) throws(ELFImageError) {
        try self.init(LittleEndianBytes(bytes: bytes), path: path)
    }

    /// Parses the open regular file `descriptor` of `size` bytes, reading only the ranges the
    /// parser needs (`ELF64.FileRegions`).
    package init(descriptor: Int32, size: Int, path: String) throws(ELFImageError) {
        try self.init(ELF64.FileRegions.read(descriptor: descriptor, size: size), path: path)
    }

    private init(_ file: LittleEndianBytes, path: String) throws(ELFImageError) {
        let header = try Self.readFileHeader(file, path: path)
        let sections = try Self.locateSectionTable(file, header: header, path: path)
        let symbols = try Self.readExportedSymbols(file, sections: sections, path: path)
        self.init(machine: header.machine, fileType: header.fileType, exportedSymbols: symbols)
    }

    // MARK: - File header

    /// Checks the identification bytes and reads the header fields the parser needs.
    private static func readFileHeader(_ file: LittleEndianBytes, path: String) throws(ELFImageError) -> FileHeader {
        // The magic is compared on whatever prefix exists, so a short text file is reported as
        // "not ELF" while an empty or cut-off ELF file is reported as too short.
        let magic: [UInt8] = [0x7F, 0x45, 0x4C, 0x46]
        for (offset, expected) in magic.enumerated() where offset < file.count {
            guard file.byte(at: offset) == expected else {
                throw ELFImageError(code: .notELF, path: path, detail: "not an ELF file: the first bytes are not 7F 'E' 'L' 'F'")
            }
        }
        guard file.count >= Layout.identificationSize else {
            throw ELFImageError(
                code: .tooShort, path: path,
                detail: "too short: \(file.count) bytes, fewer than the \(Layout.identificationSize)-byte ELF identification")
        }

        switch file.byte(at: Layout.classOffset) {
        case Layout.class64:
            break
        case Layout.class32:
            throw ELFImageError(
                code: .unsupportedClass, path: path,
                detail: "32-bit ELF (ELFCLASS32) is not supported: plugins must be 64-bit shared objects")
        case let other:
            throw ELFImageError(
                code: .unsupportedClass, path: path,
                detail: "unknown ELF class \(other.map(String.init) ?? "?"): only 64-bit (ELFCLASS64) is supported")
        }

        switch file.byte(at: Layout.dataEncodingOffset) {
        case Layout.littleEndian:
            break
        case Layout.bigEndian:
            throw ELFImageError(
                code: .unsupportedByteOrder, path: path,
                detail: "big-endian ELF (ELFDATA2MSB) is not supported: only little-endian is")
        case let other:
            throw ELFImageError(
                code: .unsupportedByteOrder, path: path,
                detail: "unknown ELF data encoding \(other.map(String.init) ?? "?"): "
                    + "only little-endian (ELFDATA2LSB) is supported")
        }

        guard file.count >= Layout.fileHeaderSize,
            let fileType = file.integer(UInt16.self, at: Layout.typeOffset),
            let machine = file.integer(UInt16.self, at: Layout.machineOffset),
            let sectionTableOffset = file.integer(UInt64.self, at: Layout.sectionTableOffsetOffset),
            let sectionEntrySize = file.integer(UInt16.self, at: Layout.sectionTableEntrySizeOffset),
            let sectionCount = file.integer(UInt16.self, at: Layout.sectionTableCountOffset)
        else {
            throw ELFImageError(
                code: .tooShort, path: path,
                detail: "too short: \(file.count) bytes, fewer than the \(Layout.fileHeaderSize)-byte ELF64 header")
        }

        guard fileType == Layout.sharedObjectType else {
            throw ELFImageError(
                code: .notSharedObject, path: path,
                detail: "not a shared object: e_type is \(Self.typeName(fileType)), expected ET_DYN (3)")
        }

        return FileHeader(
            fileType: fileType, machine: machine, sectionTableOffset: sectionTableOffset,
            sectionEntrySize: sectionEntrySize, sectionCount: sectionCount)
    }

    /// Names an `e_type` value the way `readelf` does, so messages are searchable.
    private static func typeName(_ fileType: UInt16) -> String {
        switch fileType {
        case 0: "ET_NONE (0)"
        case 1: "ET_REL (1), a relocatable object"
        case 2: "ET_EXEC (2), an executable"
        case 3: "ET_DYN (3)"
        case 4: "ET_CORE (4), a core dump"
        default: "\(fileType)"
        }
    }

    // MARK: - Section header table

    /// Validates that the whole section header table lies inside the file.
    ///
    /// The table is normally written last, so this is what catches a file that was copied or
    /// downloaded only partly.
    private static func locateSectionTable(
        _ file: LittleEndianBytes, header: FileHeader, path: String
    ) throws(ELFImageError) -> SectionTable {
        guard header.sectionTableOffset != 0 else {
            throw ELFImageError(
                code: .noDynamicSymbolTable, path: path,
                detail: "no dynamic symbol table: the file has no section header table (e_shoff is 0)")
        }
        guard Int(header.sectionEntrySize) >= Layout.sectionHeaderSize else {
            throw ELFImageError(
                code: .truncatedSectionTable, path: path,
                detail: "malformed section header table: e_shentsize is \(header.sectionEntrySize), "
                    + "smaller than the \(Layout.sectionHeaderSize)-byte ELF64 section header")
        }

        var count = UInt64(header.sectionCount)
        if count == 0 {
            // With 0xFF00 or more sections, e_shnum is 0 and the real count is the sh_size of
            // section 0, so that entry alone must be readable first.
            let firstEntry = SectionTable(offset: header.sectionTableOffset, entrySize: UInt64(header.sectionEntrySize), count: 1)
            try requireInside(file, table: firstEntry, path: path)
            let firstSection = try readSectionHeader(file, table: firstEntry, index: 0, path: path)
            count = firstSection.size
        }
        guard count > 0 else {
            throw ELFImageError(
                code: .noDynamicSymbolTable, path: path,
                detail: "no dynamic symbol table: the section header table has no entries")
        }

        let table = SectionTable(offset: header.sectionTableOffset, entrySize: UInt64(header.sectionEntrySize), count: count)
        try requireInside(file, table: table, path: path)
        return table
    }

    /// Throws `truncatedSectionTable` unless every entry of `table` lies inside the file.
    private static func requireInside(_ file: LittleEndianBytes, table: SectionTable, path: String) throws(ELFImageError) {
        let (size, sizeOverflow) = table.count.multipliedReportingOverflow(by: table.entrySize)
        let (end, endOverflow) = table.offset.addingReportingOverflow(size)
        guard !sizeOverflow, !endOverflow else {
            throw ELFImageError(
                code: .truncatedSectionTable, path: path,
                detail: "truncated: section header table (\(table.count) entries of \(table.entrySize) bytes at byte "
                    + "\(table.offset)) ends beyond any possible file size; the file has \(file.count) bytes")
        }
        guard end <= UInt64(file.count) else {
            throw ELFImageError(
                code: .truncatedSectionTable, path: path,
                detail: "truncated: section header table ends at byte \(end) but the file has \(file.count) bytes")
        }
    }

    /// Reads entry `index` of a section header table already checked by `requireInside`.
    private static func readSectionHeader(
        _ file: LittleEndianBytes, table: SectionTable, index: UInt64, path: String
    ) throws(ELFImageError) -> SectionHeader {
        // The table was bounds-checked as a whole, so these conversions cannot fail for a valid
        // index; the guard keeps a logic error from becoming a crash.
        guard index < table.count,
            let start = Int(exactly: table.offset + index * table.entrySize),
            let type = file.integer(UInt32.self, at: start + Layout.sectionTypeOffset),
            let offset = file.integer(UInt64.self, at: start + Layout.sectionFileOffsetOffset),
            let size = file.integer(UInt64.self, at: start + Layout.sectionSizeOffset),
            let link = file.integer(UInt32.self, at: start + Layout.sectionLinkOffset),
            let entrySize = file.integer(UInt64.self, at: start + Layout.sectionEntrySizeOffset)
        else {
            throw ELFImageError(
                code: .truncatedSectionTable, path: path,
                detail: "truncated: section header \(index) lies outside the file of \(file.count) bytes")
        }
        return SectionHeader(index: index, type: type, offset: offset, size: size, link: link, entrySize: entrySize)
    }

    // MARK: - Dynamic symbols

    /// Finds `.dynsym` and its string table and collects the names other modules can bind to.
    private static func readExportedSymbols(
        _ file: LittleEndianBytes, sections: SectionTable, path: String
    ) throws(ELFImageError) -> Set<String> {
        var dynamicSymbols: SectionHeader?
        var index: UInt64 = 0
        while index < sections.count {
            let section = try readSectionHeader(file, table: sections, index: index, path: path)
            if section.type == Layout.dynamicSymbolSectionType {
                dynamicSymbols = section
                break
            }
            index += 1
        }
        guard let dynamicSymbols else {
            throw ELFImageError(
                code: .noDynamicSymbolTable, path: path,
                detail: "no dynamic symbol table: none of the \(sections.count) sections has type SHT_DYNSYM (11)")
        }

        let symbolBytes = try sectionRange(file, dynamicSymbols, name: "dynamic symbol table", path: path)
        // An entry size of 0 is tolerated as "the standard size", as binutils does; anything
        // smaller than a real entry would make fields overlap the next symbol.
        let stride = dynamicSymbols.entrySize == 0 ? UInt64(Layout.symbolSize) : dynamicSymbols.entrySize
        guard stride >= UInt64(Layout.symbolSize), let strideBytes = Int(exactly: stride) else {
            throw ELFImageError(
                code: .truncatedSection, path: path,
                detail: "malformed dynamic symbol table (section \(dynamicSymbols.index)): entry size \(stride) "
                    + "is smaller than the \(Layout.symbolSize)-byte ELF64 symbol")
        }

        guard dynamicSymbols.link != 0, UInt64(dynamicSymbols.link) < sections.count else {
            throw ELFImageError(
                code: .truncatedSection, path: path,
                detail: "malformed dynamic symbol table (section \(dynamicSymbols.index)): its string table is "
                    + "section \(dynamicSymbols.link), but the file has \(sections.count) sections")
        }
        let stringSection = try readSectionHeader(file, table: sections, index: UInt64(dynamicSymbols.link), path: path)
        let stringBytes = try sectionRange(file, stringSection, name: "dynamic string table", path: path)

        var exported = Set<String>()
        var symbolStart = symbolBytes.lowerBound
        var symbolIndex = 0
        while symbolBytes.upperBound - symbolStart >= Layout.symbolSize {
            defer {
                symbolStart += min(strideBytes, symbolBytes.upperBound - symbolStart)
                symbolIndex += 1
            }
            guard let nameOffset = file.integer(UInt32.self, at: symbolStart + Layout.symbolNameOffset),
                let information = file.byte(at: symbolStart + Layout.symbolInformationOffset),
                let other = file.byte(at: symbolStart + Layout.symbolOtherOffset),
                let sectionIndex = file.integer(UInt16.self, at: symbolStart + Layout.symbolSectionIndexOffset),
                let value = file.integer(UInt64.self, at: symbolStart + Layout.symbolValueOffset)
            else {
                throw ELFImageError(
                    code: .truncatedSection, path: path,
                    detail: "truncated: dynamic symbol \(symbolIndex) lies outside the file of \(file.count) bytes")
            }
            guard isExported(information: information, other: other, sectionIndex: sectionIndex, value: value) else {
                continue
            }
            let name = try symbolName(
                file, strings: stringBytes, offset: nameOffset, symbolIndex: symbolIndex, path: path)
            if !name.isEmpty {
                exported.insert(name)
            }
        }
        return exported
    }

    /// Applies the export rules documented on ``exportedSymbols`` to one symbol's fields.
    private static func isExported(information: UInt8, other: UInt8, sectionIndex: UInt16, value: UInt64) -> Bool {
        // An undefined symbol is something this library imports, not something it offers.
        guard sectionIndex != Layout.undefinedSectionIndex else { return false }

        let binding = information >> 4
        guard binding == Layout.globalBinding || binding == Layout.weakBinding || binding == Layout.uniqueBinding else {
            return false
        }

        // Hidden and internal symbols can sit in .dynsym, but the dynamic linker never binds
        // another module to them, so `dlsym` would not find them either.
        let visibility = other & 0x3
        guard visibility != Layout.internalVisibility, visibility != Layout.hiddenVisibility else { return false }

        switch information & 0xF {
        case Layout.functionType, Layout.objectType, Layout.indirectFunctionType:
            return true
        case Layout.noType:
            // Untyped symbols with a value are usually assembler labels or linker-script symbols
            // that do resolve; a zero value marks a placeholder.
            return value != 0
        default:
            return false
        }
    }

    /// Reads the NUL-terminated name at `offset` inside the string table.
    private static func symbolName(
        _ file: LittleEndianBytes, strings: Range<Int>, offset: UInt32, symbolIndex: Int, path: String
    ) throws(ELFImageError) -> String {
        guard let relativeStart = Int(exactly: offset), relativeStart < strings.count else {
            throw ELFImageError(
                code: .truncatedSection, path: path,
                detail: "malformed dynamic symbol \(symbolIndex): name offset \(offset) lies outside the "
                    + "\(strings.count)-byte string table")
        }
        let start = strings.lowerBound + relativeStart
        guard let terminator = file.firstZero(in: start..<strings.upperBound) else {
            throw ELFImageError(
                code: .truncatedSection, path: path,
                detail: "truncated: the name of dynamic symbol \(symbolIndex) runs past the end of the string table")
        }
        return file.text(in: start..<terminator)
    }

    /// Converts a section's offset and size into a byte range, or throws `truncatedSection`.
    private static func sectionRange(
        _ file: LittleEndianBytes, _ section: SectionHeader, name: String, path: String
    ) throws(ELFImageError) -> Range<Int> {
        let (end, overflow) = section.offset.addingReportingOverflow(section.size)
        guard !overflow, end <= UInt64(file.count) else {
            let ending = overflow ? "ends beyond any possible file size" : "ends at byte \(end)"
            throw ELFImageError(
                code: .truncatedSection, path: path,
                detail: "truncated: \(name) (section \(section.index)) \(ending) but the file has \(file.count) bytes")
        }
        // Both bounds are at most the file's length, so they fit in Int.
        return Int(section.offset)..<Int(end)
    }
}

// MARK: - Helper types

extension ELFImage {
    private typealias FileHeader = ELF64.FileHeader
    private typealias SectionTable = ELF64.SectionTable
    private typealias SectionHeader = ELF64.SectionHeader
    private typealias Layout = ELF64.Layout
    private typealias LittleEndianBytes = ELF64.LittleEndianBytes
}
