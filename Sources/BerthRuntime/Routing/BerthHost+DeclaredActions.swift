@_spi(Engine) import BerthCore
extension BerthHost {
    /// The actions the screen of `router` declares, from the manifest of the generation
    /// running it (else of its plugin as discovered); empty when it declares none.
    package func declaredActions(of router: Router) -> [DeclaredAction] {
        let manifest = router.module?.generation.manifest ?? plugins[router.pluginID]?.source.manifest
        return manifest?.declaredActions(of: router.route) ?? []
    }
}
