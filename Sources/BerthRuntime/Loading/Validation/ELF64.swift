@_spi(Engine) import BerthCore
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The ELF64 format as `ELFImage`'s parser reads it: the header and section records it keeps,
/// the specification's offsets and constants, and the file's bytes behind reads that return
/// nil instead of trapping when out of range.
enum ELF64 {
    /// The fields of the ELF header that the parser uses after validation.
    struct FileHeader {
        /// `e_type`.
        let fileType: UInt16
        /// `e_machine`.
        let machine: UInt16
        /// `e_shoff`: where the section header table starts.
        let sectionTableOffset: UInt64
        /// `e_shentsize`: bytes per section header entry.
        let sectionEntrySize: UInt16
        /// `e_shnum`: number of entries, or 0 when the real count is stored in section 0.
        let sectionCount: UInt16
    }

    /// Where the section header table is and how many entries it holds.
    struct SectionTable {
        /// Byte offset of entry 0.
        let offset: UInt64
        /// Bytes per entry, at least the size of an ELF64 section header.
        let entrySize: UInt64
        /// Number of entries.
        let count: UInt64
    }

    /// The fields of one section header that the parser uses.
    struct SectionHeader {
        /// Position in the section header table, for messages.
        let index: UInt64
        /// `sh_type`.
        let type: UInt32
        /// `sh_offset`: where the section's bytes start in the file.
        let offset: UInt64
        /// `sh_size`: how many bytes the section occupies in the file.
        let size: UInt64
        /// `sh_link`: for a symbol table, the index of its string table.
        let link: UInt32
        /// `sh_entsize`: bytes per entry for tables.
        let entrySize: UInt64
    }

    /// Offsets, sizes and constant values from the ELF64 specification.
    enum Layout {
        /// Length of `e_ident`, which holds the magic, class and data encoding.
        static let identificationSize = 16
        /// Position of `EI_CLASS` in `e_ident`.
        static let classOffset = 4
        /// Position of `EI_DATA` in `e_ident`.
        static let dataEncodingOffset = 5
        /// `ELFCLASS32`.
        static let class32: UInt8 = 1
        /// `ELFCLASS64`.
        static let class64: UInt8 = 2
        /// `ELFDATA2LSB`.
        static let littleEndian: UInt8 = 1
        /// `ELFDATA2MSB`.
        static let bigEndian: UInt8 = 2

        /// Size of `Elf64_Ehdr`.
        static let fileHeaderSize = 64
        /// Position of `e_type` in the file header.
        static let typeOffset = 16
        /// Position of `e_machine` in the file header.
        static let machineOffset = 18
        /// Position of `e_shoff` in the file header.
        static let sectionTableOffsetOffset = 40
        /// Position of `e_shentsize` in the file header.
        static let sectionTableEntrySizeOffset = 58
        /// Position of `e_shnum` in the file header.
        static let sectionTableCountOffset = 60
        /// `ET_DYN`.
        static let sharedObjectType: UInt16 = 3

        /// Size of `Elf64_Shdr`.
        static let sectionHeaderSize = 64
        /// Position of `sh_type` in a section header.
        static let sectionTypeOffset = 4
        /// Position of `sh_offset` in a section header.
        static let sectionFileOffsetOffset = 24
        /// Position of `sh_size` in a section header.
        static let sectionSizeOffset = 32
        /// Position of `sh_link` in a section header.
        static let sectionLinkOffset = 40
        /// Position of `sh_entsize` in a section header.
        static let sectionEntrySizeOffset = 56
        /// `SHT_DYNSYM`.
        static let dynamicSymbolSectionType: UInt32 = 11

        /// Size of `Elf64_Sym`.
        static let symbolSize = 24
        /// Position of `st_name` in a symbol.
        static let symbolNameOffset = 0
        /// Position of `st_info` (binding and type) in a symbol.
        static let symbolInformationOffset = 4
        /// Position of `st_other` (visibility) in a symbol.
        static let symbolOtherOffset = 5
        /// Position of `st_shndx` in a symbol.
        static let symbolSectionIndexOffset = 6
        /// Position of `st_value` in a symbol.
        static let symbolValueOffset = 8
        /// `SHN_UNDEF`: the symbol is imported.
        static let undefinedSectionIndex: UInt16 = 0

        /// `STB_GLOBAL`.
        static let globalBinding: UInt8 = 1
        /// `STB_WEAK`.
        static let weakBinding: UInt8 = 2
        /// `STB_GNU_UNIQUE`.
        static let uniqueBinding: UInt8 = 10
        /// `STT_NOTYPE`.
        static let noType: UInt8 = 0
        /// `STT_OBJECT`.
        static let objectType: UInt8 = 1
        /// `STT_FUNC`.
        static let functionType: UInt8 = 2
        /// `STT_GNU_IFUNC`.
        static let indirectFunctionType: UInt8 = 10
        /// `STV_INTERNAL`.
        static let internalVisibility: UInt8 = 1
        /// `STV_HIDDEN`.
        static let hiddenVisibility: UInt8 = 2
    }

    /// The file's bytes with reads that return nil instead of trapping when out of range.
    struct LittleEndianBytes {
        /// The parts of the file in memory: the whole file, or the ranges `FileRegions` read.
        private let regions: [(start: Int, bytes: [UInt8])]
        /// The file's length in bytes.
        let count: Int

        init(bytes: [UInt8]) {
            regions = [(0, bytes)]
            count = bytes.count
        }

        /// Some ranges of a file of `count` bytes; a read anywhere else reads as outside it.
        init(regions: [(start: Int, bytes: [UInt8])], count: Int) {
            self.regions = regions
            self.count = count
        }

        /// The region holding `range`, and where `range` starts in it.
        private func region(holding range: Range<Int>) -> (bytes: [UInt8], offset: Int)? {
            for region in regions where range.lowerBound >= region.start && range.upperBound <= region.start + region.bytes.count {
                return (region.bytes, range.lowerBound - region.start)
            }
            return nil
        }

        /// The byte at `offset`, or nil outside the file.
        func byte(at offset: Int) -> UInt8? {
            guard offset >= 0, offset < count, let (bytes, position) = region(holding: offset..<offset + 1) else { return nil }
            return bytes[position]
        }

        /// The unsigned integer stored little-endian at `offset`, or nil if any of its bytes is outside the file.
        func integer<Value: FixedWidthInteger & UnsignedInteger>(_: Value.Type, at offset: Int) -> Value? {
            let width = Value.bitWidth / 8
            guard offset >= 0, offset <= count - width, let (bytes, position) = region(holding: offset..<offset + width) else { return nil }
            var value: Value = 0
            for index in 0..<width {
                value |= Value(bytes[position + index]) << (index * 8)
            }
            return value
        }

        /// The index of the first zero byte in `range`, or nil if there is none.
        func firstZero(in range: Range<Int>) -> Int? {
            let clamped = range.clamped(to: 0..<count)
            guard let (bytes, position) = region(holding: clamped) else { return nil }
            return bytes[position..<position + clamped.count].firstIndex(of: 0).map { $0 - position + clamped.lowerBound }
        }

        /// The bytes in `range` as text; invalid UTF-8 is replaced rather than rejected, since a
        /// name that is not valid UTF-8 simply cannot match any symbol the host looks for.
        func text(in range: Range<Int>) -> String {
            let clamped = range.clamped(to: 0..<count)
            guard let (bytes, position) = region(holding: clamped) else { return "" }
            return String(decoding: bytes[position..<position + clamped.count], as: UTF8.self)
        }
    }

    /// Reads, from an open file, only the ranges the parser uses: the header, the section
    /// table, and `.dynsym` with its string table, never the code. A library of hundreds of
    /// megabytes costs the host its symbol tables, not its size. Every offset comes from the
    /// file and is checked against its size; what cannot be read is left out, and the parser
    /// then reports it as outside the file.
    enum FileRegions {
        static func read(descriptor: Int32, size: Int) -> LittleEndianBytes {
            var regions: [(start: Int, bytes: [UInt8])] = []
            func add(_ start: UInt64, _ length: UInt64) {
                let (end, overflow) = start.addingReportingOverflow(length)
                guard !overflow, end <= UInt64(size), length > 0, let bytes = pread(descriptor, Int(start), Int(length)) else { return }
                regions.append((Int(start), bytes))
            }
            add(0, UInt64(min(size, Layout.fileHeaderSize)))
            var file = LittleEndianBytes(regions: regions, count: size)
            guard let tableOffset = file.integer(UInt64.self, at: Layout.sectionTableOffsetOffset),
                  let entrySize = file.integer(UInt16.self, at: Layout.sectionTableEntrySizeOffset).map(UInt64.init),
                  var entries = file.integer(UInt16.self, at: Layout.sectionTableCountOffset).map(UInt64.init),
                  tableOffset != 0, entrySize >= UInt64(Layout.sectionHeaderSize) else { return file }
            if entries == 0 {
                // 0xFF00 sections or more: the count is section 0's size.
                add(tableOffset, entrySize)
                file = LittleEndianBytes(regions: regions, count: size)
                entries = file.integer(UInt64.self, at: Int(clamping: tableOffset) + Layout.sectionSizeOffset) ?? 0
            }
            let (tableBytes, overflow) = entries.multipliedReportingOverflow(by: entrySize)
            guard !overflow else { return file }
            add(tableOffset, tableBytes)
            file = LittleEndianBytes(regions: regions, count: size)
            func field<Value: FixedWidthInteger & UnsignedInteger>(_ type: Value.Type, _ index: UInt64, _ offset: Int) -> Value? {
                let (start, overflow) = tableOffset.addingReportingOverflow(index &* entrySize)
                guard !overflow, start < UInt64(Int.max) - 64 else { return nil }
                return file.integer(type, at: Int(start) + offset)
            }
            guard let symbols = (0..<entries).first(where: { field(UInt32.self, $0, Layout.sectionTypeOffset) == Layout.dynamicSymbolSectionType }),
                  let symbolsOffset = field(UInt64.self, symbols, Layout.sectionFileOffsetOffset),
                  let symbolsSize = field(UInt64.self, symbols, Layout.sectionSizeOffset) else { return file }
            add(symbolsOffset, symbolsSize)
            if let link = field(UInt32.self, symbols, Layout.sectionLinkOffset).map(UInt64.init), link < entries,
               let stringsOffset = field(UInt64.self, link, Layout.sectionFileOffsetOffset),
               let stringsSize = field(UInt64.self, link, Layout.sectionSizeOffset) {
                add(stringsOffset, stringsSize)
            }
            return LittleEndianBytes(regions: regions, count: size)
        }

        /// `length` bytes at `offset`, or nil when they cannot all be read.
        private static func pread(_ descriptor: Int32, _ offset: Int, _ length: Int) -> [UInt8]? {
            var bytes = [UInt8](repeating: 0, count: length)
            var got = 0
            while got < length {
                let count = bytes.withUnsafeMutableBytes { buffer in
                    Glibc.pread(descriptor, buffer.baseAddress! + got, length - got, off_t(offset + got))
                }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return nil }
                got += count
            }
            return bytes
        }
    }
}
