/// User input the host sends to a rendered view: an action named `berth.tap`,
/// `berth.toggle`, `berth.type`, `berth.step` or `berth.select`, whose payload is the
/// view's identity, a NUL byte, then the value (text for `type`, `+` or `-` for `step`, an
/// option index for `select`).
enum ViewInputAction {
    static let prefix = "berth."

    static func deliver(_ action: String, payload: [UInt8], inputs: ViewInputs, identities: IdentityTable) throws {
        let parts = payload.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
        let identity = String(decoding: parts.first ?? [], as: UTF8.self)
        let value = parts.count > 1 ? String(decoding: parts[1], as: UTF8.self) : ""
        guard let id = identities.id(of: identity), let input = inputs.input(at: id) else {
            throw BerthError(code: .notFound, message: "no interactive view at \(identity) in the last render")
        }
        switch (action, input) {
        case ("berth.tap", .tap(let perform)): perform()
        case ("berth.toggle", .toggle(let isOn)): isOn.wrappedValue.toggle()
        case ("berth.type", .text(let text)): text.wrappedValue = value
        case ("berth.step", .step(let number, let step)):
            switch value {
            case "+": number.wrappedValue += step
            case "-": number.wrappedValue -= step
            default: throw BerthError(code: .invalidArgument, message: "step takes + or -, got '\(value)'")
            }
        case ("berth.step", .select(let selection, let count)):
            guard count > 0 else { throw BerthError(code: .invalidArgument, message: "\(identity) has no options") }
            switch value {
            case "+": selection.wrappedValue = min(selection.wrappedValue + 1, count - 1)
            case "-": selection.wrappedValue = max(min(selection.wrappedValue, count) - 1, 0)
            default: throw BerthError(code: .invalidArgument, message: "step takes + or -, got '\(value)'")
            }
        case ("berth.select", .select(let selection, let count)):
            guard let index = Int(value), (0..<count).contains(index) else {
                throw BerthError(code: .invalidArgument, message: "select takes an option index from 0 to \(count - 1), got '\(value)'")
            }
            selection.wrappedValue = index
        default:
            throw BerthError(code: .invalidArgument, message: "\(identity) does not take \(action.dropFirst(prefix.count))")
        }
    }
}

/// The input handlers of one render's interactive views and their identity ids, in tree
/// order. Two arrays, not one of pairs: the next render frees all of them at once, and an
/// array of enums is freed without walking a tuple's layout per element.
struct ViewInputs {
    private var identities: [UInt32] = []
    private var handlers: [ViewInput] = []

    mutating func append(_ input: ViewInput, identity: UInt32) {
        identities.append(identity)
        handlers.append(input)
    }

    /// The handler of the view with identity id `identity`, if it is interactive.
    func input(at identity: UInt32) -> ViewInput? {
        identities.firstIndex(of: identity).map { handlers[$0] }
    }
}
