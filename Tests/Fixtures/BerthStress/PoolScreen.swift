import BerthSDK
import Dispatch
import Glibc
import Synchronization

/// Keeps libdispatch's global pool busy for about two seconds, for the sandbox test of
/// workers that use Tasks and queues: action "saturate" queues eight blocks that each
/// sleep 400 ms, more than the pool has threads, so the pool monitor's once-a-second
/// check finds work waiting and reads each worker thread's `/proc/<tid>/stat`.
/// The view says `finished N of 8`. Action "sleep" (payload: milliseconds, in decimal)
/// holds its caller that long: a plugin busy with honest work (the lane benchmark R1).
final class PoolScreen: Screen {
    static let route = "pool"
    static let actions: [ScreenAction] = ["saturate", "sleep"]
    static let blocks = 8
    private let finished = FinishedCount()

    init(context: ScreenContext) {}

    var body: some View {
        Text("finished \(finished.value.load(ordering: .acquiring)) of \(Self.blocks)")
    }

    func handle(action: String, payload: [UInt8]) throws {
        if action == "sleep" {
            usleep(UInt32(min(Int(String(decoding: payload, as: UTF8.self)) ?? 0, 4_000)) * 1_000)
            return
        }
        guard action == "saturate" else {
            throw BerthError(code: .notFound, message: "pool has no action '\(action)' (\(Self.actions.map(\.name).joined(separator: ", ")))")
        }
        for _ in 0..<Self.blocks {
            DispatchQueue.global().async { [finished] in
                usleep(400_000)
                finished.value.add(1, ordering: .releasing)
            }
        }
    }
}

/// How many of the pool screen's blocks have run, shared with the blocks.
final class FinishedCount: Sendable {
    let value = Atomic(0)
}
