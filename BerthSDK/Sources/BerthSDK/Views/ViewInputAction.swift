/// User input the host sends to a rendered view: an action named `berth.tap`,
/// `berth.toggle`, `berth.type` or `berth.step`, whose payload is the view's identity, a
/// NUL byte, then the value (text for `type`, `+` or `-` for `step`).
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
