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
        private enum Source {
            /// The whole file, read into memory.
            case memory([UInt8])
            /// An open file, read a page at a time where the parser looks.
            case file(PagedFile)
        }

        private let source: Source
        /// The file's length in bytes.
        let count: Int

        init(bytes: [UInt8]) {
            source = .memory(bytes)
            count = bytes.count
        }

        init(file: PagedFile) {
            source = .file(file)
            count = file.size
        }

        /// The byte at `offset`, or nil outside the file.
        func byte(at offset: Int) -> UInt8? {
            guard offset >= 0, offset < count else { return nil }
            switch source {
            case .memory(let bytes): return bytes[offset]
            case .file(let file): return file.byte(at: offset)
            }
        }

        /// The unsigned integer stored little-endian at `offset`, or nil if any of its bytes is outside the file.
        func integer<Value: FixedWidthInteger & UnsignedInteger>(_: Value.Type, at offset: Int) -> Value? {
            let width = Value.bitWidth / 8
            guard offset >= 0, offset <= count - width else { return nil }
            var value: Value = 0
            for position in 0..<width {
                guard let byte = byte(at: offset + position) else { return nil }
                value |= Value(byte) << (position * 8)
            }
            return value
        }

        /// The index of the first zero byte in `range`, or nil if there is none.
        func firstZero(in range: Range<Int>) -> Int? {
            let clamped = range.clamped(to: 0..<count)
            if case .memory(let bytes) = source { return bytes[clamped].firstIndex(of: 0) }
            return clamped.first { byte(at: $0) == 0 }
        }

        /// The bytes in `range` as text; invalid UTF-8 is replaced rather than rejected, since a
        /// name that is not valid UTF-8 simply cannot match any symbol the host looks for.
        func text(in range: Range<Int>) -> String {
            let clamped = range.clamped(to: 0..<count)
            if case .memory(let bytes) = source { return String(decoding: bytes[clamped], as: UTF8.self) }
            return String(decoding: clamped.compactMap { byte(at: $0) }, as: UTF8.self)
        }
    }

    /// An open file read a page at a time, only where the parser looks: the header, the
    /// section table, `.dynsym` and its strings, never the code. A library of hundreds of
    /// megabytes costs the host its symbol tables, not its size. A page that cannot be read
    /// reads as outside the file.
    final class PagedFile {
        static let pageSize = 16 * 1024
        let descriptor: Int32
        let size: Int
        private var pages: [Int: [UInt8]] = [:]
        private var lastPage: (index: Int, bytes: [UInt8])?

        /// `descriptor` stays the caller's: it must stay open while this is used.
        init(descriptor: Int32, size: Int) {
            self.descriptor = descriptor
            self.size = size
        }

        func byte(at offset: Int) -> UInt8? {
            let index = offset / Self.pageSize
            let page: [UInt8]
            if let last = lastPage, last.index == index {
                page = last.bytes
            } else if let cached = pages[index] {
                page = cached
            } else {
                guard let read = read(page: index) else { return nil }
                pages[index] = read
                page = read
            }
            lastPage = (index, page)
            let position = offset - index * Self.pageSize
            return position < page.count ? page[position] : nil
        }

        private func read(page index: Int) -> [UInt8]? {
            let start = index * Self.pageSize
            let length = min(Self.pageSize, size - start)
            guard length > 0 else { return nil }
            var page = [UInt8](repeating: 0, count: length)
            var got = 0
            while got < length {
                let count = page.withUnsafeMutableBytes { buffer in
                    pread(descriptor, buffer.baseAddress! + got, length - got, off_t(start + got))
                }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return nil }
                got += count
            }
            return page
        }
    }
}
