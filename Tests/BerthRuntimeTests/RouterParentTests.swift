import Testing
@testable import BerthRuntime

/// A router's parent link (unretained) is set exactly while it is among its parent's
/// children: it never outlives the parent, whichever way the parent goes.
@Suite("Router parent link") @MainActor
struct RouterParentTests {
    @Test("attach sets the parent; detach, the parent's release and the parent's deinit clear it")
    func parentLinkLifetime() {
        let child = Router(id: 2, kind: .screen)
        do {
            let parent = Router(id: 1, kind: .screen)
            parent.attachChild(child)
            #expect(child.parent === parent)
            parent.detachChild(child)
            #expect(child.parent == nil)
            parent.attachChild(child)
            parent.release()
            #expect(child.parent == nil)
        }
        do {
            let parent = Router(id: 3, kind: .screen)
            parent.attachChild(child)
            #expect(child.parent?.id == 3)
        }
        // The parent went away without a release: its deinit cleared the link.
        #expect(child.parent == nil)
    }
}
