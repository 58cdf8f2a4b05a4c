import BerthRuntime

/// A rendered screen as text: one view per line, indented by depth; interactive views get
/// a number for `tap N`, `toggle N`, `type N TEXT`, `step N +/-` and `select N INDEX`;
/// a title and a style follow the view after a `·` (`"Inbox" · bold red`).
enum ViewTreeText {
    /// The text, and the identity behind each number.
    static func render(_ tree: ViewNode?, header: String) -> (text: String, numbers: [Int: String]) {
        var lines = [header]
        var numbers: [Int: String] = [:]
        guard let tree else { return ((lines + ["  (this screen does not render views)"]).joined(separator: "\n"), numbers) }
        func visit(_ node: ViewNode, depth: Int) {
            let indent = String(repeating: "  ", count: depth + 1)
            var marker = ""
            if node.isInteractive {
                let number = numbers.count + 1
                numbers[number] = node.id
                marker = "[\(number)] "
            }
            lines.append(indent + marker + describe(node) + decoration(node))
            for child in node.children { visit(child, depth: depth + 1) }
        }
        visit(tree, depth: 0)
        return (lines.joined(separator: "\n"), numbers)
    }

    private static func describe(_ node: ViewNode) -> String {
        let fields = node.fields
        switch node.type {
        case "Text": return "\"\(fields["text"] ?? "")\""
        case "Button": return "Button \"\(fields["label"] ?? "")\""
        case "Toggle": return "Toggle \"\(fields["label"] ?? "")\" \(fields["isOn"] == "true" ? "on" : "off")"
        case "TextField": return "TextField \"\(fields["label"] ?? "")\": \"\(fields["text"] ?? "")\""
        case "Stepper": return "Stepper \"\(fields["label"] ?? "")\" = \(fields["value"] ?? "?")"
        case "if": return "if → \(fields["branch"] == "true" ? "#true" : "#false")"
        case "Picker":
            let index = Int(fields["value"] ?? "") ?? -1
            let chosen = node.children.indices.contains(index) ? " \"\(node.children[index].fields["text"] ?? "")\"" : ""
            return "Picker \"\(fields["label"] ?? "")\" = \(fields["value"] ?? "?")\(chosen)"
        default: return node.type
        }
    }

    /// ` · title "Inbox" · bold red padding 1 border`, or nothing for a plain view.
    private static func decoration(_ node: ViewNode) -> String {
        var parts: [String] = []
        if let title = node.fields["title"] { parts.append("title \"\(title)\"") }
        let style = node.style
        if !style.isPlain {
            var words = [(style.bold, "bold"), (style.italic, "italic"), (style.underline, "underline"), (style.dim, "dim")].filter(\.0).map(\.1)
            if let foreground = style.foreground { words.append(foreground) }
            if style.padding > 0 { words.append("padding \(style.padding)") }
            if style.border { words.append("border") }
            parts.append(words.joined(separator: " "))
        }
        return parts.map { " · " + $0 }.joined()
    }
}
