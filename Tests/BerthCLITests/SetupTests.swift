import BerthTestSupport
import Foundation
import Testing

/// The README's two commands on a machine with only the image's packages: scripts/setup
/// installs what scripts/system-packages lists, and libedit is bound at run time.
@Suite("A fresh machine: the set-up script and the REPL without libedit", .blocking)
struct SetupTests {
    private var setup: String { BuildProducts.packageRoot + "/scripts/setup" }

    @Test("Without libedit the REPL says so in one line and reads plain lines")
    func replWithoutLibedit() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let terminal = try TerminalSession(
            ["run", "--plugins", "plugins", "--no-socket", "--state-dir", "state"], in: workspace.root,
            environment: ["BERTH_LIBEDIT": "/nonexistent/libedit.so.2"])
        #expect(terminal.waitFor("line editing, history and completion are off: libedit could not be loaded (/nonexistent/libedit.so.2"),
                "\(terminal.screen)")
        #expect(terminal.waitFor("berth> "), "\(terminal.screen)")
        let mark = terminal.mark
        terminal.type("open counter\r")
        #expect(terminal.waitFor("screen 1: active", since: mark), "\(terminal.text(since: mark))")
        #expect(terminal.waitFor("berth> ", since: mark))
        // Ctrl-D at the start of a line: the terminal ends the input, the host leaves.
        terminal.type("\u{04}")
        #expect(terminal.waitForExit() == 0, "\(terminal.screen)")
        #expect(!FileManager.default.fileExists(atPath: workspace.root + "/state/berth/history"))
    }

    @Test("scripts/setup --check names each missing package and why, in one line")
    func checkNamesMissingPackages() throws {
        let workspace = PluginWorkspace()
        let list = workspace.root + "/packages"
        try "berth-no-such-module  berth-no-such-dev  the test's missing header\nlibffi libffi-dev libffi's header\n"
            .write(toFile: list, atomically: true, encoding: .utf8)
        let (status, output) = try ToolProcess.run(setup, ["--check", "--packages", list], in: workspace.root)
        #expect(status == 1)
        #expect(output == "setup: missing system packages: berth-no-such-dev (the test's missing header)\n", "\(output)")
    }

    @Test("scripts/setup without a package manager fails in one line naming what to install")
    func noPackageManager() throws {
        let workspace = PluginWorkspace()
        let list = workspace.root + "/packages"
        try "berth-no-such-module berth-no-such-dev the test's missing header\n".write(toFile: list, atomically: true, encoding: .utf8)
        // A PATH with the tools the script uses and no apt-get.
        let bin = workspace.root + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        for tool in ["bash", "pkg-config", "id", "dirname"] {
            let (found, path) = try ToolProcess.run("/bin/sh", ["-c", "command -v \(tool)"], in: workspace.root)
            try #require(found == 0, "\(tool) is not on this machine's PATH")
            try FileManager.default.createSymbolicLink(atPath: bin + "/" + tool,
                                                       withDestinationPath: path.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let (status, output) = try ToolProcess.run(bin + "/bash", [setup, "--packages", list], in: workspace.root,
                                                   environment: ["PATH": bin])
        #expect(status == 1)
        #expect(output == "setup: cannot install berth-no-such-dev: no apt-get on this machine (install their equivalents, then run this again)\n",
                "\(output)")
    }

    @Test("Every system library Package.swift names is in scripts/system-packages, which the machine has")
    func everySystemLibraryIsListed() throws {
        let package = try String(contentsOfFile: BuildProducts.packageRoot + "/Package.swift", encoding: .utf8)
        let list = try String(contentsOfFile: BuildProducts.packageRoot + "/scripts/system-packages", encoding: .utf8)
        let listed = Set(list.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: " ").first.map(String.init) })
        let named = package.components(separatedBy: "pkgConfig: \"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        #expect(!named.isEmpty)
        for module in named {
            #expect(listed.contains(module), "Package.swift's pkgConfig \"\(module)\" is not in scripts/system-packages: the README's commands would not install it")
        }
        // What the README's commands install is what this machine now has.
        let (status, output) = try ToolProcess.run(setup, ["--check"], in: BuildProducts.packageRoot)
        #expect(status == 0, "\(output)")
    }
}
