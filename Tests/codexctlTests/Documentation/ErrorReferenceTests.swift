import CodexTestSupport
import Foundation
import Testing

/// Docs/Errors.md lists every error code the sources define, and says what `codexctl help errors` says.
@Suite struct ErrorReferenceTests {
    static let root = CommandRunner.repositoryRoot

    /// Every code the sources define: each error type's `public static let x: Code = "…"`, and the codes
    /// `codexctl` raises itself (`code: "…"`).
    static func definedCodes() throws -> Set<String> {
        let types = [
            ("AgentRuntimeError", "Sources/CodexCore/Errors/AgentRuntimeError.swift"), ("MemoryStoreError", "Sources/CodexCore/Memory/MemoryStoreError.swift"),
            ("AgentRecoveryError", "Sources/CodexRecovery/Errors/AgentRecoveryError.swift"), ("CodexSchemaError", "Sources/CodexSchema/Errors/CodexSchemaError.swift"),
            ("SQLiteStoreError", "Sources/CodexStorageSQLite/Errors/SQLiteStoreError.swift"),
            ("PostgresStoreError", "Sources/CodexStoragePostgres/Errors/PostgresStoreError.swift"),
            ("MCPError", "Sources/CodexRuntime/MCP/Protocol/MCPError.swift"),
            ("AgentPriceTableError", "Sources/CodexCore/Usage/AgentPriceTableError.swift"),
        ]
        var codes: Set<String> = []
        for (type, path) in types {
            let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
            let found = text.matches(of: /public static let \w+: Code = "([a-z0-9_]+)"/).map { "\(type) \($0.1)" }
            // The price file's error is small by nature (three codes); every other type has at least ten.
            #expect(found.count >= (type == "AgentPriceTableError" ? 3 : 10), "\(path) defines its codes")
            codes.formUnion(found)
        }
        let cli = FileManager.default.enumerator(atPath: root.appendingPathComponent("Sources/codexctl").path)?.compactMap { $0 as? String } ?? []
        for file in cli where file.hasSuffix(".swift") && !file.hasSuffix("ErrorReference.swift") {
            let text = try String(contentsOf: root.appendingPathComponent("Sources/codexctl/" + file), encoding: .utf8)
            codes.formUnion(text.matches(of: /code: "([a-z0-9_]+)"/).map { "codexctl \($0.1)" })
            codes.formUnion(text.matches(of: /Thrown\(code: "([a-z0-9_]+)"/).map { "codexctl \($0.1)" })
        }
        codes.insert("codexctl usage")
        return codes
    }

    @Test func everyDefinedCodeHasAnEntryWithItsMeaningAndWhatToDo() async throws {
        let reference = try await CommandRunner.codexctl(["help", "errors"])
        #expect(reference.status == 0)
        var listed: Set<String> = []
        var type = ""
        for line in reference.stdout.split(separator: "\n") {
            if let heading = line.firstMatch(of: /^### `(\w+)`$/) { type = String(heading.1) }
            if let row = line.firstMatch(of: /^\| `([a-z0-9_]+)` \| (.+) \| (.+) \|$/) {
                #expect(row.2.count > 20 && row.3.count > 20, "\(row.1) says what it means and what to do")
                listed.insert("\(type) \(row.1)")
            }
        }
        let defined = try Self.definedCodes()
        #expect(defined.subtracting(listed).isEmpty, "codes without an entry: \(defined.subtracting(listed).sorted())")
        #expect(defined.count >= 130, "\(defined.count) codes found")
    }

    @Test func theErrorsPageIsWhatTheReferenceSays() async throws {
        let generated = try await CommandRunner.codexctl(["help", "errors"])
        let page = try String(contentsOf: Self.root.appendingPathComponent("Docs/Errors.md"), encoding: .utf8)
        let marker = "<!-- The section below is generated: codexctl help errors -->\n\n"
        let section = try #require(page.range(of: marker).map { String(page[$0.upperBound...]) })
        #expect(section == generated.stdout.trimmingCharacters(in: .newlines) + "\n", "regenerate with Scripts/update-cli-reference.sh")
    }
}
