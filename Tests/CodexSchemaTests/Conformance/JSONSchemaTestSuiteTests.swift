import CodexSchema
import Testing

@Suite struct JSONSchemaTestSuiteTests {
    static let supportedFiles: [String] = (try? Fixtures.files(in: "jsonschema/supported")) ?? []

    @Test func supportedCorpusHasAllFiles() {
        #expect(Self.supportedFiles.count == 25)
    }

    @Test(arguments: supportedFiles)
    func everySupportedTestAgrees(file: String) throws {
        let outcomes = try JSONSchemaTestSuite.run(fileContents: try Fixtures.bytes("jsonschema/supported/\(file)"))
        #expect(!outcomes.isEmpty)
        for outcome in outcomes where !outcome.passed {
            Issue.record("\(file): \(outcome.group) / \(outcome.test): \(outcome.detail)")
        }
    }

    @Test func supportedCorpusRunsAll344Tests() throws {
        var total = 0
        var passed = 0
        for file in Self.supportedFiles {
            let outcomes = try JSONSchemaTestSuite.run(fileContents: try Fixtures.bytes("jsonschema/supported/\(file)"))
            total += outcomes.count
            passed += outcomes.filter(\.passed).count
        }
        #expect(total == 344)
        #expect(passed == 344)
    }

    @Test func everyRejectedSchemaFailsWithItsLocation() throws {
        let outcomes = try JSONSchemaTestSuite.run(fileContents: try Fixtures.bytes("jsonschema/rejected.json"))
        #expect(outcomes.count == 297)
        for outcome in outcomes where !outcome.passed {
            Issue.record("\(outcome.group): \(outcome.detail)")
        }
        #expect(outcomes.filter(\.passed).count == 297)
    }

    @Test func aGroupWhoseSchemaDoesNotCompileFailsEveryTest() throws {
        let file = #"[{"description":"g","schema":{"pattern":"x"},"tests":[{"description":"t","data":1,"valid":true}]}]"#
        let outcomes = try JSONSchemaTestSuite.run(fileContents: Array(file.utf8))
        #expect(outcomes.count == 1)
        #expect(outcomes[0].passed == false)
    }

    @Test func aFileThatIsNotASuiteIsATypedError() {
        #expect(throws: CodexSchemaError.self) { try JSONSchemaTestSuite.run(fileContents: Array(#"{"a":1}"#.utf8)) }
    }
}
