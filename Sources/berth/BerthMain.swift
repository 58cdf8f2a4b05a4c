import BerthCLI

/// The `berth` executable: everything lives in BerthCLI so tests can reach it.
@main
enum BerthMain {
    static func main() async {
        await Berth.runAndExit()
    }
}
