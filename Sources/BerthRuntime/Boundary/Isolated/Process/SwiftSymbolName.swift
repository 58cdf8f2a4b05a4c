@_spi(Engine) import BerthCore
import Foundation

/// A Swift function's linkage name as a person reads it in a crash report:
/// "$s11BerthStress10TrapScreenC6handle6action7payloadySS_Says5UInt8VGtKF" →
/// "TrapScreen.handle(action:payload:)"; a closure keeps its number and where it is
/// ("closure #1 in TrapScreen.body.getter"). The Swift runtime in this process demangles.
enum SwiftSymbolName {
    /// The short, readable name of `symbol`; a name that is not Swift's is returned as is.
    static func readable(_ symbol: String) -> String {
        shortened(demangled(symbol) ?? symbol)
    }

    /// The runtime's full demangling ("BerthStress.TrapScreen.handle(action: Swift.String, …) throws -> ()").
    static func demangled(_ symbol: String) -> String? {
        guard symbol.hasPrefix("$s") || symbol.hasPrefix("_$s") || symbol.hasPrefix("$S") else { return nil }
        return symbol.withCString { name in
            guard let result = swiftDemangle(name, strlen(name), nil, nil, 0) else { return nil }
            defer { free(result) }
            return String(cString: result)
        }
    }

    /// Drops the module, parameter types, effects and result type of a demangled name.
    static func shortened(_ name: String) -> String {
        // A piece of an async function is that function: "(1) await resume partial
        // function for X", "async function pointer to X".
        for marker in [" partial function for ", "async function pointer to "] {
            if let range = name.range(of: marker), name.hasPrefix("(") || range.lowerBound == name.startIndex {
                return shortened(String(name[range.upperBound...]))
            }
        }
        // "->" would read as a closing angle bracket.
        let name = name.replacingOccurrences(of: "->", with: "→")
        if let range = topLevelRange(of: " in ", in: name) {
            // "closure #1 (Int) -> () in X" → "closure #1 in X".
            let kind = name[..<range.lowerBound].split(separator: " ").prefix { !$0.hasPrefix("(") && !$0.hasPrefix("@") }
            return kind.joined(separator: " ") + " in " + shortened(String(name[range.upperBound...]))
        }
        var text = Substring(name)
        var prefix = ""
        for word in ["static ", "merged ", "partial apply for ", "protocol witness for "] where text.hasPrefix(word) {
            prefix += word
            text = text.dropFirst(word.count)
        }
        var head = text
        var labels = ""
        if let open = topLevelIndex(of: "(", in: text) {
            head = text[..<open]
            labels = "(" + parameterLabels(text[text.index(after: open)...]) + ")"
        } else if let typed = text.range(of: " : ") {
            head = text[..<typed.lowerBound]
        }
        // "Module.Type.member": the module is the first component.
        let components = head.split(separator: ".", omittingEmptySubsequences: false)
        let local = components.count > 1 ? components.dropFirst().joined(separator: ".") : String(head)
        return prefix + local + labels
    }

    /// "action: Swift.String, payload: [Swift.UInt8]) throws -> ()" → "action:payload:".
    private static func parameterLabels(_ list: Substring) -> String {
        var labels = ""
        var depth = 0
        var item = ""
        func finish() {
            let trimmed = item.trimmingCharacters(in: .whitespaces)
            if !trimmed.isEmpty {
                let label = trimmed.range(of: ": ").map { String(trimmed[..<$0.lowerBound]) }
                labels += (label.flatMap { $0.contains(" ") || $0.contains("(") ? nil : $0 } ?? "_") + ":"
            }
            item = ""
        }
        for character in list {
            switch character {
            case "(", "[", "<": depth += 1
            case "]", ">": depth -= 1
            case ")":
                if depth == 0 { finish(); return labels }
                depth -= 1
            case "," where depth == 0:
                finish()
                continue
            default: break
            }
            item.append(character)
        }
        return labels
    }

    private static func topLevelIndex(of character: Character, in text: Substring) -> Substring.Index? {
        var depth = 0
        for index in text.indices {
            let current = text[index]
            if current == character, depth == 0 { return index }
            if "([<".contains(current) { depth += 1 } else if ")]>".contains(current) { depth -= 1 }
        }
        return nil
    }

    private static func topLevelRange(of word: String, in text: String) -> Range<String.Index>? {
        var depth = 0
        var index = text.startIndex
        while index < text.endIndex {
            let current = text[index]
            if depth == 0, text[index...].hasPrefix(word) { return index..<text.index(index, offsetBy: word.count) }
            if "([<".contains(current) { depth += 1 } else if ")]>".contains(current) { depth -= 1 }
            index = text.index(after: index)
        }
        return nil
    }
}

/// The Swift runtime's demangler (exported by libswiftCore): a malloc'ed C string, or nil.
@_silgen_name("swift_demangle")
private func swiftDemangle(
    _ mangledName: UnsafePointer<CChar>?, _ mangledNameLength: Int, _ outputBuffer: UnsafeMutablePointer<CChar>?,
    _ outputBufferSize: UnsafeMutablePointer<Int>?, _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?
