internal import CBerth

/// User input the host sends to a rendered view: an action named by berth.h's
/// `BERTH_INPUT_*` constants, whose payload `berth_input_split` takes apart into the view's
/// identity and the value (text for type, `BERTH_INPUT_STEP_UP`/`_DOWN` for step, an option
/// index for select).
enum ViewInputAction {
    static let prefix = BERTH_INPUT_PREFIX

    static func deliver(_ action: String, payload: berth_bytes, inputs: ViewInputs, identities: IdentityTable) throws {
        var identityBytes = berth_bytes()
        var valueBytes = berth_bytes()
        berth_input_split(payload, &identityBytes, &valueBytes)
        let identity = String(decoding: identityBytes.array, as: UTF8.self)
        let value = String(decoding: valueBytes.array, as: UTF8.self)
        guard let id = identities.id(of: identity), let input = inputs.input(at: id) else {
            throw BerthError(code: .notFound, message: "no interactive view at \(identity) in the last render")
        }
        switch (action, input) {
        case (BERTH_INPUT_TAP, .tap(let perform)): perform()
        case (BERTH_INPUT_TOGGLE, .toggle(let isOn)): isOn.wrappedValue.toggle()
        case (BERTH_INPUT_TYPE, .text(let text)): text.wrappedValue = value
        case (BERTH_INPUT_STEP, .step(let number, let step)):
            number.wrappedValue += try direction(value) * step
        case (BERTH_INPUT_STEP, .select(let selection, let count)):
            guard count > 0 else { throw BerthError(code: .invalidArgument, message: "\(identity) has no options") }
            selection.wrappedValue = max(min(min(selection.wrappedValue, count) + (try direction(value)), count - 1), 0)
        case (BERTH_INPUT_SELECT, .select(let selection, let count)):
            guard let index = Int(value), (0..<count).contains(index) else {
                throw BerthError(code: .invalidArgument, message: "select takes an option index from 0 to \(count - 1), got '\(value)'")
            }
            selection.wrappedValue = index
        default:
            throw BerthError(code: .invalidArgument, message: "\(identity) does not take \(action.dropFirst(prefix.count))")
        }
    }

    /// +1 for `BERTH_INPUT_STEP_UP`, -1 for `BERTH_INPUT_STEP_DOWN`.
    private static func direction(_ value: String) throws -> Int {
        switch value {
        case BERTH_INPUT_STEP_UP: 1
        case BERTH_INPUT_STEP_DOWN: -1
        default: throw BerthError(code: .invalidArgument, message: "step takes \(BERTH_INPUT_STEP_UP) or \(BERTH_INPUT_STEP_DOWN), got '\(value)'")
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
