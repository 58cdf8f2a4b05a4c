import ArgumentParser
import BerthRuntime

extension Berth {
    /// `berth validate PATH…`: the checks a plugin must pass before any of its code runs.
    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate plugin folders or manifest files; one `path: field: message` line per problem."
        )

        @Argument(help: "Plugin folders or plugin.json files.")
        var paths: [String]

        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard !paths.isEmpty else { throw ValidationError("give at least one plugin folder or manifest") }
        }

        func run() throws {
            var reports: [ValidationReport] = []
            for path in paths {
                switch PluginValidator.validate(path: path) {
                case .success(let plugin):
                    reports.append(ValidationReport(path: path, id: plugin.manifest.id, valid: true,
                                                    problems: plugin.warnings.map(\.description)))
                case .failure(let failure):
                    reports.append(ValidationReport(path: path, id: nil, valid: false,
                                                    problems: failure.problems.map(\.description)))
                }
            }
            if output.json {
                emitLine(try JSONText.encode(reports))
            } else {
                for report in reports {
                    if report.valid { emitLine("\(report.path): ok (\(report.id ?? ""))") }
                    for problem in report.problems { emitLine(problem) }
                }
            }
            if reports.contains(where: { !$0.valid }) { throw ExitStatus.failure }
        }
    }
}

struct ValidationReport: Encodable {
    var path: String
    var id: String?
    var valid: Bool
    var problems: [String]
}
