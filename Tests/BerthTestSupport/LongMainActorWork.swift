@_spi(Engine) import BerthRuntime

/// Long work on the main actor, which every main-actor test shares (loading several plugins
/// in a setup, a loop of loads): one test at a time does such work, and in slices. `begin()`
/// waits, suspended, while another test's long work is under way; `pause()` suspends once the
/// current slice has held the actor for `slice`, so the jobs other tests have waiting (a poll,
/// a watcher's turn) run in between; `end()` lets the next one begin. Without turns, every
/// test's setup is queued on the main actor at once, and a test's single turn waits behind
/// all of them. A pause is a trip to the back of the main actor's queue, so a slice is long
/// enough that a long loop pauses tens of times, not thousands. Not nested: a test ends one
/// before it begins the next.
public struct LongMainActorWork {
    private static let turns = Turns()
    private let slice: Duration
    private var sliceStarted = ContinuousClock.now

    private init(slice: Duration) {
        self.slice = slice
    }

    /// Waits until no other test's long work is under way, and starts the first slice.
    public static func begin(slice: Duration = .milliseconds(500)) async -> LongMainActorWork {
        await turns.take()
        return LongMainActorWork(slice: slice)
    }

    /// Suspends if the current slice is spent, and starts the next one.
    public mutating func pause(isolation: isolated (any Actor)? = #isolation) async {
        guard sliceStarted.duration(to: .now) >= slice else { return }
        await Task.yield()
        sliceStarted = .now
    }

    /// Lets the next test's long work begin.
    public func end() {
        Self.turns.give()
    }
}

/// One turn, handed to the waiting tests in the order they asked.
private final class Turns: Sendable {
    private let state = Locked<(taken: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func take() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if !state.taken {
                    state.taken = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    func give() {
        let next = state.withLock { state in
            if state.waiting.isEmpty {
                state.taken = false
                return nil
            }
            return state.waiting.removeFirst()
        } as CheckedContinuation<Void, Never>?
        next?.resume()
    }
}
