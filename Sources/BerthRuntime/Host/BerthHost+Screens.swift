internal import CBerth

/// Where an open screen was, so a reload can reopen it in the same place.
struct OpenRoute {
    let pluginID: String
    let route: String
}

extension BerthHost {
    /// Open screens, oldest first.
    public var openScreens: [ModuleInstance] {
        screens.keys.sorted().compactMap { screens[$0] }
    }

    /// Opens `route` ("plugin.id/route", or a bare route when one loaded plugin has it):
    /// create → activate → didLoad.
    @discardableResult
    public func open(_ route: String) throws(ScreenError) -> ModuleInstance {
        let (pluginID, name) = try resolve(route)
        guard let generation = generation(of: pluginID) else {
            throw ScreenError(.pluginNotLoaded, screen: 0, "\(pluginID) is not loaded (load it first)")
        }
        let id = takeScreenID()
        let screen = try ModuleInstance(id: id, route: name, generation: generation)
        emit(.created, "screen \(id)", "\(pluginID)/\(name) created (generation \(generation.number))")
        screens[id] = screen
        do {
            try screen.activate()
        } catch {
            screens[id] = nil
            try? screen.release()
            emit(.released, "screen \(id)", "released after failed activation")
            throw error
        }
        emit(.activated, "screen \(id)", "active")
        screen.send(event: Int32(BERTH_EVENT_DID_LOAD), flag: false)
        return screen
    }

    /// Closes a screen: deactivate → release.
    public func close(screen id: Int) throws(ScreenError) {
        guard let screen = screens[id] else { throw ScreenError(.noSuchScreen, screen: id, "no open screen \(id)") }
        screen.deactivate()
        emit(.deactivated, "screen \(id)", "inactive")
        screens[id] = nil
        try screen.release()
        emit(.released, "screen \(id)", "released (\(screen.pluginID)/\(screen.route))")
    }

    /// Closes every screen of `pluginID`, newest first; returns their routes for reopening.
    @discardableResult
    func closeScreens(of pluginID: String) -> [OpenRoute] {
        let closing = openScreens.filter { $0.pluginID == pluginID }.reversed()
        for screen in closing {
            try? close(screen: screen.id)
        }
        return closing.reversed().map { OpenRoute(pluginID: $0.pluginID, route: $0.route) }
    }

    /// Reopens routes (after a reload) with fresh instances, in their old order.
    func reopen(_ routes: [OpenRoute]) {
        for route in routes {
            do {
                try open("\(route.pluginID)/\(route.route)")
            } catch {
                emit(.failed, route.pluginID, "reopening \(route.route) failed: \(error.message)")
            }
        }
    }

    private func resolve(_ route: String) throws(ScreenError) -> (plugin: String, route: String) {
        if let slash = route.lastIndex(of: "/") {
            return (String(route[..<slash]), String(route[route.index(after: slash)...]))
        }
        let owners = plugins.values.compactMap(\.generation).filter { $0.manifest.routes.contains(route) }.map(\.pluginID).sorted()
        guard owners.count == 1, let owner = owners.first else {
            let reason = owners.isEmpty ? "no loaded plugin provides route '\(route)'" : "route '\(route)' is provided by \(owners.joined(separator: " and ")); name one as PLUGIN/ROUTE"
            throw ScreenError(.unknownRoute, screen: 0, reason)
        }
        return (owner, route)
    }

    private func takeScreenID() -> Int {
        defer { nextScreenID += 1 }
        return nextScreenID
    }
}

extension BerthHost {
    /// Sends an action to an open, active screen.
    public func send(screen id: Int, action: String, payload: [UInt8]) throws(ScreenError) {
        guard let screen = screens[id] else { throw ScreenError(.noSuchScreen, screen: id, "no open screen \(id)") }
        try screen.handle(action: action, payload: payload)
    }
}
