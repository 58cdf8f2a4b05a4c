internal import Glibc
import Synchronization

/// The lock of a scope registry and its scopes: a test-and-set spin lock that yields the
/// thread after a few failed tries. A cached resolve holds it for a handful of
/// instructions, so taking it is one compare-and-swap and releasing it one store, where an
/// `NSLock` costs two calls into pthread and two atomic read-modify-writes.
///
/// ThreadSanitizer sees it: the swap (acquiring) and the store (releasing) are atomics
/// compiled into this module, which TSan instruments, unlike `Synchronization.Mutex`'s
/// futex (see Locked.swift). No factory or release callback ever runs under it.
///
/// The one lock besides `Locked`, kept because the scope path measured it: with `Locked` a
/// cached resolve took 278 instructions against 220 with this one, and P4-swinject fell
/// from 26.8x to 21.2x faster than Swinject, under its 25x goal (`scripts/bench --filter
/// P4-dict --filter P4-swinject --runs 1 --instructions`, 2026-11-28). Nothing else uses it.
final class ScopeLock: Sendable {
    private let held = Atomic<Bool>(false)

    @inline(__always)
    func lock() {
        if held.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged { return }
        lockContended()
    }

    @inline(__always)
    func unlock() {
        held.store(false, ordering: .releasing)
    }

    private func lockContended() {
        var tries = 0
        while true {
            // Wait with plain loads, then try again; after a while let the holder run.
            while held.load(ordering: .relaxed) {
                tries += 1
                if tries >= 64 {
                    sched_yield()
                    tries = 0
                }
            }
            if held.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged { return }
        }
    }
}
