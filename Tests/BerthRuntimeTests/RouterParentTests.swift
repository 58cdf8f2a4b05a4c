import Testing
@_spi(Engine) @testable import BerthRuntime

/// A router's parent link (unowned, so routers keep no weak-reference side table) is set
/// exactly while it can be read safely: attach sets it; detach, the parent's release and
/// the parent's deinit clear it, so it never outlives the parent.
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
