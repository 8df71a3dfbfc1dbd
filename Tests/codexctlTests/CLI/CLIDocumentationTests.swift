import Foundation
import Testing

/// The help pages, `Docs/CLI.md` and the README agree: the reference in `Docs/CLI.md` is generated from
/// the option tables, and the README names every command family.
@Suite struct CLIDocumentationTests {
    private func read(_ path: String) throws -> String {
        try String(contentsOf: CommandRunner.repositoryRoot.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func theCommandReferenceIsWhatTheHelpTablesSay() async throws {
        let generated = try await CommandRunner.codexctl(["help", "--markdown"])
        #expect(generated.status == 0)
        let document = try read("Docs/CLI.md")
        let marker = "<!-- The section below is generated: codexctl help --markdown -->\n\n"
        let reference = try #require(document.range(of: marker).map { String(document[$0.upperBound...]) })
        #expect(reference == generated.stdout.trimmingCharacters(in: .newlines) + "\n", "regenerate with Scripts/update-cli-reference.sh")
        for path in try await CommandMatrixTests.leafCommands() {
            #expect(reference.contains("### `codexctl \(path.joined(separator: " "))`\n"), "\(path) is missing from Docs/CLI.md")
        }
    }

    @Test func theReadmeAndTheCLIDocumentNameEveryCommandFamily() async throws {
        let root = CLIHelpPage(try await CommandRunner.codexctl(["help"]).stdout).subcommands.filter { $0 != "help" }
        #expect(root.count == 19)
        let readme = try read("README.md")
        let document = try read("Docs/CLI.md")
        for family in root {
            #expect(readme.contains("`codexctl \(family)"), "README.md does not name codexctl \(family)")
            #expect(document.contains("`codexctl \(family)`"), "Docs/CLI.md does not name codexctl \(family)")
        }
    }
}
