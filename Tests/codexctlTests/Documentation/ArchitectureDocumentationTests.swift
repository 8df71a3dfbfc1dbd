import Foundation
import Testing

/// `Docs/Architecture.md` is checked against the tree: every module it names exists and every module
/// exists in its table, every file and folder it names is there, and every import it says is absent
/// (or limited to one file) is so in the sources.
@Suite struct ArchitectureDocumentationTests {
    static let root = CommandRunner.repositoryRoot
    static var page: String { (try? String(contentsOf: root.appendingPathComponent("Docs/Architecture.md"), encoding: .utf8)) ?? "" }

    /// Every Swift file under `Sources/`, as paths relative to `Sources/`.
    static let sourceFiles: [String] = {
        let sources = root.appendingPathComponent("Sources").path
        let names = FileManager.default.enumerator(atPath: sources)?.compactMap { $0 as? String } ?? []
        return names.filter { $0.hasSuffix(".swift") }.sorted()
    }()

    static func matches(_ pattern: String, in text: String) -> [[String]] {
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return [] }
        let range = NSRange(text.startIndex..., in: text)
        return expression.matches(in: text, range: range).map { match in
            (1..<match.numberOfRanges).map { index in
                Range(match.range(at: index), in: text).map { String(text[$0]) } ?? ""
            }
        }
    }

    /// The files under `Sources/<module>/` that import `imported` (any attributes or access level).
    static func files(in module: String, importing imported: String) throws -> [String] {
        try sourceFiles.filter { $0.hasPrefix(module + "/") }.filter { path in
            let text = try String(contentsOf: root.appendingPathComponent("Sources").appendingPathComponent(path), encoding: .utf8)
            return !matches(#"(?m)^\s*(?:@\w+\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+"# + imported + #"\b"#, in: text).isEmpty
        }
    }

    @Test func theModuleTableNamesExactlyTheModules() throws {
        let page = Self.page
        #expect(!page.isEmpty)
        let tabled = Set(Self.matches(#"(?m)^\| `(\w+)` \| "#, in: page).map { $0[0] })
        let targets = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources").path)
        let swiftModules = Set(targets.filter { !$0.hasPrefix("C") || $0.hasPrefix("Codex") })
        #expect(tabled == swiftModules, "the module table lists \(tabled.sorted()), the tree has \(swiftModules.sorted())")
        for systemLibrary in targets where systemLibrary.hasPrefix("C") && !systemLibrary.hasPrefix("Codex") {
            #expect(page.contains("`\(systemLibrary)`") || page.contains(systemLibrary + " "), "\(systemLibrary) is not described")
        }
    }

    @Test func everyFileAndFolderItNamesExists() throws {
        let page = Self.page
        let swiftPaths = Set(Self.matches(#"`([\w+/]+/[\w+]+\.swift)`"#, in: page).map { $0[0] })
        #expect(swiftPaths.count >= 12, "the page names its files: \(swiftPaths.count)")
        for path in swiftPaths {
            let found = FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(path).path)
                || Self.sourceFiles.contains { $0 == path || $0.hasSuffix("/" + path) }
            #expect(found, "\(path) is named in Docs/Architecture.md but does not exist")
        }
        // The folders of "Where each kind of code lives": `Module/` and the `Area/` examples of its row.
        let section = page.components(separatedBy: "## Where each kind of code lives").last?.components(separatedBy: "\n## ").first ?? ""
        var checked = 0
        for row in section.split(separator: "\n") where row.hasPrefix("| ") && row.contains("`") {
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3, let module = Self.matches(#"`(\w+)/"#, in: cells[1]).first?[0] else { continue }
            let folders = Self.sourceFiles.filter { $0.hasPrefix(module + "/") }.flatMap { path in
                path.split(separator: "/").dropLast().map(String.init)
            }
            for folder in Self.matches(#"`(\w+)/`"#, in: cells[2]).map({ $0[0] }) {
                #expect(Set(folders).contains(folder), "\(module) has no folder \(folder)/")
                checked += 1
            }
        }
        #expect(checked >= 20, "the table's folders were read: \(checked)")
    }

    @Test func theImportsItSaysAreAbsentOrLimitedAreSo() throws {
        let page = Self.page
        let absent = Self.matches(#"`(\w+)` never imports `(\w+)`"#, in: page)
        #expect(!absent.isEmpty)
        for pair in absent {
            #expect(try Self.files(in: pair[0], importing: pair[1]).isEmpty, "\(pair[0]) imports \(pair[1])")
        }
        // "`A` imports `B` only in `x.swift`, `y.swift` and `z.swift`:" names every file that does.
        let limited = Self.matches(#"`(\w+)` imports `(\w+)` only in ([^:]+):"#, in: page)
        #expect(!limited.isEmpty)
        for triple in limited {
            let named = Self.matches(#"`([^`]+\.swift)`"#, in: triple[2]).map { triple[0] + "/" + $0[0] }.sorted()
            let importing = try Self.files(in: triple[0], importing: triple[1])
            #expect(importing == named, "\(triple[0]) imports \(triple[1]) in \(importing), the page names \(named)")
        }
        #expect(!page.contains("does not yet"), "a promise about the future is not a description of the code")
    }
}
