public import Foundation

/// The Swift examples of a documentation page and of the test that runs them, for tests that check a
/// page shows exactly the examples that compile and run.
public enum DocumentationExamples {
    /// The first line of a block that declares what a page's examples assume (imports, credentials, a
    /// store): compiled with the page, never one of the examples a runnable test compares.
    public static let preambleMarker = "// What the examples on this page assume"

    /// The bodies of the page's ```` ```swift ```` blocks, in order. With `section`, only the blocks
    /// under that `## ` heading (up to the next one); with `before`, only the blocks above that heading.
    /// A preamble block (``preambleMarker``) is left out unless `includingPreambles`.
    public static func swiftBlocks(inPage page: String, section: String? = nil, before: String? = nil, includingPreambles: Bool = false) -> [String] {
        var blocks: [String] = []
        var block: [String]?
        var inSection = section == nil
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if let before, line == before { break }
            if let section, line.hasPrefix("## ") { inSection = line == section }
            guard inSection else { continue }
            if line == "```swift" { block = [] } else if line == "```", let current = block {
                if includingPreambles || current.first?.hasPrefix(preambleMarker) != true { blocks.append(current.joined(separator: "\n")) }
                block = nil
            } else {
                block?.append(String(line))
            }
        }
        return blocks
    }

    /// The texts between `// example N` and `// end` lines of a test's source, with the test's
    /// eight-space indentation removed.
    public static func examples(inSource source: String) -> [String] {
        var examples: [String] = []
        var example: [String]?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// example ") { example = [] } else if trimmed == "// end", let current = example {
                examples.append(current.map { $0.hasPrefix("        ") ? String($0.dropFirst(8)) : $0 }.joined(separator: "\n"))
                example = nil
            } else {
                example?.append(String(line))
            }
        }
        return examples
    }

    /// The repository's root directory.
    public static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The text of a page, by its path from the repository's root (`Docs/MCP.md`).
    public static func page(_ path: String) throws -> String {
        try String(contentsOf: repositoryRoot.appendingPathComponent(path), encoding: .utf8)
    }

    /// `blocks` without their `import` lines (the examples a test runs sit inside a test, below its imports).
    public static func withoutImports(_ blocks: some Sequence<String>) -> [String] {
        blocks.map { block in block.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("import ") }.joined(separator: "\n") }
    }
}
