/// Text.
public struct Text: PrimitiveView {
    let content: String

    /// Text showing `content`.
    public init(_ content: String) {
        self.content = content
    }

    /// Renders a text node at `identity`. Called by the renderer, not by plugin code.
    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer.leaf(.text, identity: identity, text: content)
    }
}

/// A button: `tap` in the host runs `action`.
public struct Button: PrimitiveView {
    let label: String
    let action: () -> Void

    /// A button labelled `label` that runs `action` when tapped.
    public init(_ label: String, action: @escaping () -> Void) {
        self.label = label
        self.action = action
    }

    /// Renders a button node at `identity`. Called by the renderer, not by plugin code.
    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer.leaf(.button, identity: identity, label: label, input: .tap(action))
    }
}

/// An on/off switch bound to a `Bool`: `toggle` in the host flips it.
public struct Toggle: PrimitiveView {
    let label: String
    let isOn: Binding<Bool>

    /// A switch labelled `label`, bound to `isOn`.
    public init(_ label: String, isOn: Binding<Bool>) {
        self.label = label
        self.isOn = isOn
    }

    /// Renders a toggle node at `identity` with the bound value. Called by the renderer,
    /// not by plugin code.
    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer.leaf(.toggle, identity: identity, label: label, isOn: isOn.wrappedValue, input: .toggle(isOn))
    }
}

/// A text field bound to a `String`: `type ID TEXT` in the host replaces it.
public struct TextField: PrimitiveView {
    let label: String
    let text: Binding<String>

    /// A text field labelled `label`, bound to `text`.
    public init(_ label: String, text: Binding<String>) {
        self.label = label
        self.text = text
    }

    /// Renders a text field node at `identity` with the bound text. Called by the renderer,
    /// not by plugin code.
    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer.leaf(.textField, identity: identity, text: text.wrappedValue, label: label, input: .text(text))
    }
}

/// A stepper bound to an `Int`: `step ID +` or `step ID -` in the host moves it by `step`.
public struct Stepper: PrimitiveView {
    let label: String
    let value: Binding<Int>
    let step: Int

    /// A stepper labelled `label`, bound to `value`, moving by `step`.
    public init(_ label: String, value: Binding<Int>, step: Int = 1) {
        self.label = label
        self.value = value
        self.step = step
    }

    /// Renders a stepper node at `identity` with the bound value. Called by the renderer,
    /// not by plugin code.
    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer.leaf(.stepper, identity: identity, label: label, value: value.wrappedValue, input: .step(value, step: step))
    }
}
