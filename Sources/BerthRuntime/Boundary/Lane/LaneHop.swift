@_spi(Engine) import BerthCore
#if canImport(Glibc)
internal import Glibc
#endif

/// What one call on a lane carries back to the main actor with each of the plugin's
/// requests: the scopes that were current when the host made the call (a resolve answers
/// in them, as it would on the main actor's own stack), and where the work the plugin asks
/// for waits until the call is over (so a plugin is never re-entered mid-call).
package struct LaneCallContext: @unchecked Sendable {
    // @unchecked: scopes are thread-safe; `held` is only touched on the main actor.
    let screen: Scope?
    let request: Scope?
    let held: HeldRequests

    /// The context of the call running on this lane thread, if any.
    static var current: LaneCallContext? {
        guard let box = pthread_getspecific(key) else { return nil }
        return Unmanaged<Box>.fromOpaque(box).takeUnretainedValue().context
    }

    /// Runs `body` (on a lane's thread) as the call `self` describes.
    func during<T>(_ body: () -> T) -> T {
        let box = Unmanaged.passRetained(Box(context: self))
        let previous = pthread_getspecific(Self.key)
        pthread_setspecific(Self.key, box.toOpaque())
        defer {
            pthread_setspecific(Self.key, previous)
            box.release()
        }
        return body()
    }

    private final class Box {
        let context: LaneCallContext
        init(context: LaneCallContext) { self.context = context }
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
}

/// Work a plugin asked for during a call on its lane (navigation, delegate and context
/// deliveries): it runs, in order, in the operation that ends the call.
@MainActor
package final class HeldRequests {
    private(set) var work: [() -> Void] = []

    nonisolated init() {}

    func append(_ item: @escaping () -> Void) { work.append(item) }

    /// Hands the work over once (the call is over).
    func take() -> [() -> Void] {
        defer { work = [] }
        return work
    }
}

/// A plugin's call back into the host, answered on the main actor: directly when the main
/// actor is the caller's own stack (a blocking call), else handed to the main actor, with
/// the lane waiting for the answer. The main actor is never the one that waits.
enum LaneHop {
    /// Where plugin requests wait (`Navigator.enqueue`): set on the main actor while a hop's
    /// body runs, and while a blocking push or present activates its screen
    /// (`Navigator.activateHoldingRequests`).
    @MainActor static var holding: HeldRequests?
    /// Set on the main actor while a hop's body runs: the lane waiting for it (a call into
    /// that lane's plugin then runs nested on it, `PluginLane.runNested`).
    @MainActor static var answering: PluginLane?

    /// Runs `body` on the main actor for the plugin's call and returns its answer.
    static func toMain<T: Sendable>(_ body: @escaping @MainActor () -> T) -> T {
        guard let lane = PluginLane.current, let context = LaneCallContext.current else {
            return MainActor.assumeIsolated(body)
        }
        let answer = Locked<T?>(nil)
        lane.waitForMain({
            let value = MainActor.assumeIsolated {
                ScopeRegistry.$currentScreen.withValue(context.screen) {
                    ScopeRegistry.$currentRequest.withValue(context.request) {
                        let (outerHolding, outerLane) = (holding, answering)
                        (holding, answering) = (context.held, lane)
                        defer { (holding, answering) = (outerHolding, outerLane) }
                        return body()
                    }
                }
            }
            answer.withLock { $0 = value }
            lane.wake()
        }, answered: { answer.withLock { $0 != nil } })
        return answer.withLock { $0! }
    }
}
