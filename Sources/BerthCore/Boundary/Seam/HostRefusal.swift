/// The host's refusal of a plugin's call: a berth.h status and a one-line reason.
package struct HostRefusal: Error, Sendable, Equatable {
    package enum Code: Int32, Sendable {
        case invalidArgument = 1, notFound = 2, unsupported = 3, state = 4, failed = 5, cancelled = 6, decode = 7, denied = 8
        case unavailable = 9, crashed = 10, timedOut = 11
    }

    package var code: Code
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
