import Testing
@_spi(Engine) @testable import BerthRuntime

/// The manifest's name rules on their own (ManifestTests checks the errors that name them).
@Suite("Manifest names: ids, symbols, routes, groups and environment variables")
struct ManifestNamesTests {
    @Test("a plugin id is reverse-DNS: two or more lower-case labels, each starting with a letter")
    func reverseDNS() {
        for good in ["com.example.counter", "a.b", "org.x-y.z9"] { #expect(ManifestNames.isReverseDNS(good), "\(good)") }
        for bad in ["Counter", "com", "com..x", "Com.example", "com.9lives", "com.ex_ample", "com.example."] {
            #expect(!ManifestNames.isReverseDNS(bad), "\(bad)")
        }
    }

    @Test("a C identifier, a route name and a group name each take their own characters")
    func identifiers() {
        #expect(ManifestNames.isCIdentifier("_berth_entry2") && !ManifestNames.isCIdentifier("2entry") && !ManifestNames.isCIdentifier("a-b"))
        #expect(!ManifestNames.isCIdentifier(""))
        #expect(ManifestNames.isRouteName("user-list.v2_x") && !ManifestNames.isRouteName("-list") && !ManifestNames.isRouteName("a/b"))
        #expect(ManifestNames.isGroupName("mail.workers-1_a") && !ManifestNames.isGroupName("") && !ManifestNames.isGroupName("a b"))
        #expect(ManifestNames.isGroupName(String(repeating: "g", count: 64)) && !ManifestNames.isGroupName(String(repeating: "g", count: 65)))
    }

    @Test("variable names are letters, digits and '_' not led by a digit; sockets, BERTH_ and loader variables are withheld")
    func environment() {
        #expect(ManifestNames.isVariableName("LANG") && ManifestNames.isVariableName("_x1"))
        #expect(!ManifestNames.isVariableName("1X") && !ManifestNames.isVariableName("") && !ManifestNames.isVariableName("A-B"))
        #expect(!ManifestNames.isVariableName(String(repeating: "A", count: 129)))
        for withheld in ["SSH_AUTH_SOCK", "xdg_runtime_dir", "BERTH_CONTROL", "LD_PRELOAD", "GLIBC_TUNABLES", "MALLOC_ARENA_MAX", "SWIFT_DEBUG"] {
            #expect(ManifestNames.withheldVariable(withheld) != nil, "\(withheld)")
        }
        #expect(ManifestNames.withheldVariable("LANG") == nil && ManifestNames.withheldVariable("TZ") == nil)
    }
}
