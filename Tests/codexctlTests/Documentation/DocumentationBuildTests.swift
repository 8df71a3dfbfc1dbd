import CodexTestSupport
import Foundation
import Testing

/// Every Swift block of README.md and Docs/*.md compiles, in a scratch package that depends on this
/// checkout by path the way the README tells an application to: its manifest is the README's own
/// `Package.swift` lines with the URL replaced by the path, so a doc cannot drift from the API, and the
/// dependency line is checked as written. A page's blocks are read in order, each seeing the ones before
/// it; what a page assumes (credentials, a store, a directory) is declared in a visible first block that
/// begins with ``DocumentationExamples/preambleMarker``.
@Suite(.timeLimit(.minutes(30))) struct DocumentationBuildTests {
    /// One ```` ```swift ```` block of a page.
    struct Block {
        let page: String
        let index: Int
        let text: String

        /// A `Package.swift` fragment (its first line says so), not application code.
        var isManifest: Bool { text.hasPrefix("// Package.swift") }
        /// Code of a test target (it uses the testing product).
        var isTestCode: Bool { text.contains("import CodexKitTesting") }
        /// A Swift identifier naming the block: `Docs_Runtime_2`.
        var name: String {
            let stem = page.replacingOccurrences(of: ".md", with: "").map { $0.isLetter || $0.isNumber ? $0 : "_" }
            return String(stem) + "_\(index)"
        }
    }

    static let root = CommandRunner.repositoryRoot

    /// Every Swift block of README.md and of each page in Docs/.
    static func blocks() throws -> [Block] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Docs").path).filter { $0.hasSuffix(".md") }.sorted()
        var blocks: [Block] = []
        for page in ["README.md"] + docs.map({ "Docs/" + $0 }) {
            let text = try String(contentsOf: root.appendingPathComponent(page), encoding: .utf8)
            for (index, block) in DocumentationExamples.swiftBlocks(inPage: text, includingPreambles: true).enumerated() {
                blocks.append(Block(page: page, index: index + 1, text: block))
            }
        }
        return blocks
    }

    /// The README's dependency fragment, its URL requirement replaced by `path`.
    static func manifest(readme fragment: String, dependencyPath path: String, testTargets: [String], extraProducts: [String] = []) throws -> String {
        var lines = fragment.split(separator: "\n", omittingEmptySubsequences: false)
        // Products other pages import that the README's lines leave out (a host adds the ones it uses).
        if let app = lines.firstIndex(where: { $0.contains(#".executableTarget(name: "App", dependencies: ["#) }) {
            lines.insert(contentsOf: extraProducts.map { Substring("        .product(name: \"\($0)\", package: \"CodexKit\"),") }, at: app + 1)
        }
        let requirement = try #require(lines.firstIndex { $0.contains(".package(url:") }, "the README names the package by URL")
        #expect(lines[requirement].contains(#"branch: "main")"#), "until releases are tagged, the README depends on the main branch: \(lines[requirement])")
        var body = lines.dropFirst().map(String.init)
        body[requirement - 1] = "    .package(path: \"\(path)\"),"
        var text = body.joined(separator: "\n")
        // The other pages' test targets join the README's targets.
        if !testTargets.isEmpty, let end = text.range(of: "]", options: .backwards) {
            text.replaceSubrange(end, with: testTargets.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: "\n") + "\n]")
        }
        return """
            // swift-tools-version: 6.1
            import PackageDescription

            let package = Package(
                name: "App",
            \(text)
            )

            """
    }

    /// A page's blocks as one source file: their imports at the top, their extensions at file scope, and
    /// the rest run in one function, each block in a scope nested in the one before (a later block sees
    /// what earlier ones declared, and may declare a name again), as a reader reads the page top to bottom.
    static func source(page: String, _ blocks: [Block]) -> String {
        var imports: Set<String> = []
        var fileScope: [String] = []
        var body: [String] = []
        for (nesting, block) in blocks.enumerated() {
            let indent = String(repeating: "    ", count: nesting + 2)
            if nesting > 0 { body.append(String(repeating: "    ", count: nesting + 1) + "do {  // \(block.page), block \(block.index)") }
            var depth = 0
            var inFileScope = false
            for line in block.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
                if depth == 0, line.hasPrefix("import ") {
                    imports.insert(line)
                    continue
                }
                if depth == 0 { inFileScope = line.hasPrefix("extension ") || line.hasPrefix("protocol ") }
                depth += line.filter { $0 == "{" }.count - line.filter { $0 == "}" }.count
                if inFileScope { fileScope.append(line) } else { body.append(line.isEmpty ? "" : indent + line) }
            }
        }
        for nesting in stride(from: blocks.count - 1, to: 0, by: -1) { body.append(String(repeating: "    ", count: nesting + 1) + "}") }
        let name = blocks.first?.name.split(separator: "_").dropLast().joined(separator: "_") ?? "Page"
        return """
            // \(page) (generated by DocumentationBuildTests)
            \(imports.sorted().joined(separator: "\n"))

            \(fileScope.joined(separator: "\n"))

            enum \(name) {
                @MainActor static func run() async throws {
            \(body.joined(separator: "\n"))
                }
            }

            """
    }

    @Test func everySwiftBlockOfTheDocsCompilesInAPackageThatDependsOnThisCheckoutAsTheReadmeSays() async throws {
        let blocks = try Self.blocks()
        #expect(blocks.count >= 30, "\(blocks.count) blocks found")
        let manifests = blocks.filter(\.isManifest)
        let readme = try #require(manifests.first { $0.page == "README.md" })
        let scratch = Self.root.appendingPathComponent(".build/doc-examples")
        let files = FileManager.default
        try? files.removeItem(at: scratch.appendingPathComponent("Sources"))
        try? files.removeItem(at: scratch.appendingPathComponent("Tests"))
        try files.createDirectory(at: scratch.appendingPathComponent("Sources/App"), withIntermediateDirectories: true)
        // The dependency's directory is named as the repository is, so its identity is `CodexKit` whatever
        // the checkout's own directory is called.
        let link = scratch.appendingPathComponent("CodexKit")
        if (try? files.destinationOfSymbolicLink(atPath: link.path)) != Self.root.path {
            try? files.removeItem(at: link)
            try files.createSymbolicLink(atPath: link.path, withDestinationPath: Self.root.path)
        }
        var testTargets: [String] = []
        for fragment in manifests where fragment.page != "README.md" {
            let target = fragment.text.split(separator: "\n").dropFirst().joined(separator: "\n")
            let name = try #require(target.firstMatch(of: /name: "(\w+)"/)?.1, "\(fragment.page) block \(fragment.index) names its target")
            try files.createDirectory(at: scratch.appendingPathComponent("Tests/\(name)"), withIntermediateDirectories: true)
            testTargets.append(target)
        }
        // Library products the pages import beyond the README's (the storage page's PostgreSQL store).
        let listed = Set(readme.text.matches(of: /\.product\(name: "(\w+)"/).map { String($0.1) })
        let imported = Set(blocks.flatMap { $0.text.matches(of: /(?m)^import (Codex\w+)$/).map { String($0.1) } })
        let extra = imported.subtracting(listed).subtracting(["CodexKitTesting", "CodexCore", "CodexSchema", "CodexTransport", "CodexRecovery"]).sorted()
        try Data(try Self.manifest(readme: readme.text, dependencyPath: link.path, testTargets: testTargets, extraProducts: extra).utf8)
            .write(to: scratch.appendingPathComponent("Package.swift"))
        try Data("// The examples are compiled, not run, here.\n".utf8).write(to: scratch.appendingPathComponent("Sources/App/main.swift"))
        let testTarget = try #require(testTargets.first, "a page shows a test target for the testing product's examples")
        let testDirectory = String(try #require(testTarget.firstMatch(of: /name: "(\w+)"/)?.1))
        for (page, code) in Dictionary(grouping: blocks.filter { !$0.isManifest }, by: \.page) {
            let directory = code.contains(where: \.isTestCode) ? "Tests/\(testDirectory)" : "Sources/App"
            let file = page.replacingOccurrences(of: ".md", with: "").replacingOccurrences(of: "/", with: "_")
            try Data(Self.source(page: page, code.sorted { $0.index < $1.index }).utf8).write(to: scratch.appendingPathComponent("\(directory)/\(file).swift"))
        }

        // At the lowest priority: on a fresh checkout this compiles all of CodexKit a second time, and at
        // normal priority it would take both cores from the tests running beside it for a minute or more.
        let build = try await CommandRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["nice", "-n", "19", "swift", "build", "--build-tests", "--package-path", scratch.path], in: scratch
        )
        let errors = (build.stdout + build.stderr).split(separator: "\n").filter { $0.contains("error:") }
        #expect(build.status == 0, "the docs' Swift blocks do not compile:\n\(errors.prefix(40).joined(separator: "\n"))")
    }
}
