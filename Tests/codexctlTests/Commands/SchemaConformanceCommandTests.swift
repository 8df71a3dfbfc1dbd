import CodexTestSupport
import Foundation
import Testing

/// `schema conformance` never passes having tested nothing: a directory without suite files is an
/// error, and a directory inside it that cannot be read fails the run by name.
@Suite struct SchemaConformanceCommandTests {
    static let suite = #"[{"description":"d","schema":true,"tests":[{"description":"t","data":1,"valid":true}]}]"#

    @Test func aDirectoryWithoutSuiteFilesIsAnErrorNotAPass() async throws {
        let directory = try temporaryDirectory("conformance")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("{}".utf8).write(to: directory.appendingPathComponent("notes.txt"))
        let text = try await CommandRunner.codexctl(["schema", "conformance", directory.path])
        #expect(text.status == 2)
        #expect(text.stdout == "")
        #expect(text.stderr == "Error: no_suite_files: '\(directory.path)' holds no *.json suite file\n")
        let json = try await CommandRunner.codexctl(["schema", "conformance", directory.path, "--json"])
        #expect(json.status == 2)
        #expect(json.stdout == #"{"error":{"code":"no_suite_files","message":"'\#(directory.path)' holds no *.json suite file"}}"# + "\n")
    }

    /// Run as an unprivileged user (through `setpriv` when the tests run as root, whom permissions do not
    /// stop), so the directory really cannot be read.
    @Test func aDirectoryInsideThatCannotBeReadFailsTheRunByName() async throws {
        let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("codexctl-conformance-\(UUID().uuidString)")
        let closed = directory.appendingPathComponent("closed")
        try FileManager.default.createDirectory(at: closed.appendingPathComponent("sub"), withIntermediateDirectories: true)
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: closed.path)
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.appendingPathComponent("listed").path)
            try? FileManager.default.removeItem(at: directory)
        }
        try Data(Self.suite.utf8).write(to: directory.appendingPathComponent("a.json"))
        try Data(Self.suite.utf8).write(to: closed.appendingPathComponent("sub/b.json"))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: directory.appendingPathComponent("a.json").path)
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: closed.path)
        // Listed but not entered: its names are there, but nothing in it can be looked at.
        let listed = directory.appendingPathComponent("listed")
        try FileManager.default.createDirectory(at: listed, withIntermediateDirectories: true)
        try Data(Self.suite.utf8).write(to: listed.appendingPathComponent("c.json"))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: listed.path)
        let codexctl = CommandRunner.productsDirectory.appendingPathComponent("codexctl").path
        let result = getuid() == 0
            ? try await CommandRunner.run(
                URL(fileURLWithPath: "/usr/bin/setpriv"),
                ["--reuid=65534", "--regid=65534", "--clear-groups", codexctl, "schema", "conformance", directory.path], in: URL(fileURLWithPath: "/")
            )
            : try await CommandRunner.codexctl(["schema", "conformance", directory.path])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout == """
            closed/: error: unreadable_input: Cannot read directory 'closed'
            listed/c.json: error: unreadable_input: Cannot read 'listed/c.json'
            a.json: 1 passed, 0 failed
            1 passed, 2 failed

            """)
    }
}
