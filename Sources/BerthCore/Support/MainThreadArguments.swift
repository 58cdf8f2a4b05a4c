/// Arguments of a plugin's main-thread C call (raw pointers, not Sendable), carried into
/// the main actor's isolation while the lane that made the call waits, so nothing of them
/// is used from two threads at once.
package struct MainThreadArguments<Value>: @unchecked Sendable {
    package let value: Value

    package init(value: Value) {
        self.value = value
    }
}
