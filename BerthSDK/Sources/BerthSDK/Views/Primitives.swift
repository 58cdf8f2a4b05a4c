/// Text.
public struct Text: PrimitiveView {
    let content: String

    public init(_ content: String) {
        self.content = content
    }

    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer.leaf(.text, identity: identity, text: content)
    }
}

/// A button: `tap` in the host runs `action`.
public struct Button: PrimitiveView {
    let label: String
    let action: () -> Void

    public init(_ label: String, action: @escaping () -> Void) {
        self.label = label
        self.action = action
    }

    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer.leaf(.button, identity: identity, label: label, input: .tap(action))
    }
}

/// An on/off switch bound to a `Bool`: `toggle` in the host flips it.
public struct Toggle: PrimitiveView {
    let label: String
    let isOn: Binding<Bool>

    public init(_ label: String, isOn: Binding<Bool>) {
        self.label = label
        self.isOn = isOn
    }

    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer.leaf(.toggle, identity: identity, label: label, isOn: isOn.wrappedValue, input: .toggle(isOn))
    }
}

/// A text field bound to a `String`: `type ID TEXT` in the host replaces it.
public struct TextField: PrimitiveView {
    let label: String
    let text: Binding<String>

    public init(_ label: String, text: Binding<String>) {
        self.label = label
        self.text = text
    }

    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer.leaf(.textField, identity: identity, text: text.wrappedValue, label: label, input: .text(text))
    }
}

/// A stepper bound to an `Int`: `step ID +` or `step ID -` in the host moves it by `step`.
public struct Stepper: PrimitiveView {
    let label: String
    let value: Binding<Int>
    let step: Int

    public init(_ label: String, value: Binding<Int>, step: Int = 1) {
        self.label = label
        self.value = value
        self.step = step
    }

    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer.leaf(.stepper, identity: identity, label: label, value: value.wrappedValue, input: .step(value, step: step))
    }
}
