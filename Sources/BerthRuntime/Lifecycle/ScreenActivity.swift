@_spi(Engine) import BerthCore
/// What the navigator must know of its module instances between its own steps: how many
/// are alive (the open-screen limit), whether a host operation is running, and which
/// instance's render was the last call into plugin code in it. Instances report here
/// through its methods; the navigator reads it and marks operations. Nobody writes its
/// fields from outside.
@MainActor
final class ScreenActivity {
    /// Module instances alive now (created and not yet released): what the open-screen
    /// limit counts, without walking the tree on every open.
    private(set) var liveScreens = 0
    /// How deep in host operations the navigator is (0: idle).
    /// Unchecked exclusivity, as `freshlyRendered`: counted up and down around every host
    /// operation (a context dispatch's dynamic checks here were a tenth of it); main-actor
    /// state changed by integer steps and whole assignments that call out to nothing.
    @exclusivity(unchecked) private(set) var operationDepth = 0
    /// The module whose render (failed or not) was the last call into plugin code in this
    /// operation, or was followed only by screen events that made no call to the host and
    /// left its state alone: the visible screen need not be rendered again when the
    /// operation ends.
    /// Set only inside an operation. Held strongly (a weak reference would give every
    /// instance a side table, and slow each of its retains): cleared when the operation
    /// ends and when the instance is released.
    @exclusivity(unchecked) private(set) var freshlyRendered: ModuleInstance?

    /// True when no host operation is running (nothing would drain queued work soon).
    var isIdle: Bool { operationDepth == 0 }

    func operationBegan() { operationDepth += 1 }
    func operationEnded() { operationDepth -= 1 }
    /// The outermost operation is over: no render of it stands for the next one.
    func forgetRender() { freshlyRendered = nil }

    func instanceCreated() { liveScreens += 1 }

    func instanceReleased(_ module: ModuleInstance) {
        liveScreens -= 1
        if freshlyRendered === module { freshlyRendered = nil }
    }

    /// A call into plugin code begins: the last render may no longer be what shows.
    func pluginCallBegan() { freshlyRendered = nil }

    /// `module` rendered; inside an operation, its end need not render it again.
    func rendered(_ module: ModuleInstance) {
        if !isIdle { freshlyRendered = module }
    }

    /// A screen event that called nothing back and changed no state leaves `module`'s
    /// render standing.
    func renderStillStands(_ module: ModuleInstance) { freshlyRendered = module }
}
