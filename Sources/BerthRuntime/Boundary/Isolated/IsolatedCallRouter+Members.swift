@_spi(Engine) import BerthCore
internal import CBerth

/// Which member of a shared worker a request may act for. The members of a group share one
/// process, so a handle proves nothing: any member can read or forge another's. What the
/// host does know is whose code it is calling, so a request made inside that call acts only
/// for that member; between calls (a plugin's own thread) a capability a request needs must
/// be held by every member of the group.
extension IsolatedCallRouter {
    /// The member whose code `request` runs, when it names one (by plugin or by instance).
    func member(addressedBy request: IsolationRequest) -> UInt64? {
        switch request {
        case .hello(let hello): hello.member
        case .create(let plugin, _, _, _), .unload(let plugin), .callExport(let plugin, _, _): plugin
        case .destroy(let instance), .activate(let instance), .deactivate(let instance), .screenEvent(let instance, _, _),
             .action(let instance, _, _), .actionThenRender(let instance, _, _, _), .delegateReceived(let instance, _, _, _),
             .contextReceived(let instance, _, _), .render(let instance, _), .renderTree(let instance, _), .saveState(let instance),
             .restoreState(let instance, _):
            member(ofInstance: instance)
        default: nil
        }
    }

    /// Why a request naming `claimed` (its plugin handle's member, or its screen's) may not
    /// act for it now; nil when it may. Only a group's worker has more than one member.
    func refusal(_ verb: String, claimed: UInt64, needs capability: Capability? = nil) -> IsolationReply? {
        guard let group = groupName else { return nil }
        if let calling = currentMember {
            guard calling != claimed else { return nil }
            let message = "\(verb): the handle is \(pluginID(of: claimed))'s, but the host is calling \(pluginID(of: calling))'s code; "
                + "in worker group '\(group)' a call acts only for the member the host called"
            return .status(IsolationStatus(code: Int32(BERTH_ERR_DENIED), message: message))
        }
        guard let capability, let lacking = memberLacking(capability) else { return nil }
        let message = "\(verb): made between the host's calls, where the members of worker group '\(group)' cannot be told apart, "
            + "so every member must hold '\(capability.rawValue)', and \(lacking) does not"
        return .status(IsolationStatus(code: Int32(BERTH_ERR_DENIED), message: message))
    }
}

extension IsolationRequest {
    /// The screen a plugin → host request names, if it names one.
    var screenToken: UInt64? {
        guard case .host(let call, let caller) = self, !call.isPluginWide else { return nil }
        return caller
    }
}
