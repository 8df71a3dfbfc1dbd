import CodexSchema
import CodexTestSupport
import Foundation
import Testing

/// Files a command reads or writes: size-checked before they are read, and every failure names the
/// path and the system's cause (never "an unexpected CocoaError error" or a bare "the state store failed").
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct FileErrorTests {
    /// Runs `codexctl` as a user without the power to override file permissions: as root, with the
    /// DAC-override capabilities dropped (so a 0400 file or a 0500 directory stops it as it stops anyone).
    private func unprivileged(_ arguments: [String], environment: [String: String]) async throws -> CommandResult {
        guard geteuid() == 0 else { return try await CommandRunner.codexctl(arguments, environment: environment) }
        return try await CommandRunner.run(
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            ["--bounding-set=-dac_override,-dac_read_search", CommandRunner.productsDirectory.appendingPathComponent("codexctl").path] + arguments,
            environment: environment
        )
    }

    private func sparseFile(_ url: URL, size: Int) {
        let descriptor = open(url.path, O_WRONLY | O_CREAT, 0o600)
        #expect(descriptor >= 0)
        #expect(ftruncate(descriptor, off_t(size)) == 0)
        close(descriptor)
    }

    @Test func anOversizedImageOrSchemaIsRefusedFromItsSize() async throws {
        let directory = try temporaryDirectory("file-size")
        defer { try? FileManager.default.removeItem(at: directory) }
        let image = directory.appendingPathComponent("huge.png")
        sparseFile(image, size: 600_000_000)
        let schema = directory.appendingPathComponent("huge.schema.json")
        sparseFile(schema, size: 2 << 20)
        let environment = SendCommandTests.environment(directory)
        let big = try await CommandRunner.codexctl(["send", "Look.", "--ephemeral", "--image", image.path], environment: environment)
        #expect(big.status == 64)
        #expect(big.stderr.hasPrefix("Error: the image \(image.path) is larger than 50 MiB, the most an image may be\nUsage: codexctl send"), "\(big.stderr)")
        let long = try await CommandRunner.codexctl(["send", "Decide.", "--ephemeral", "--schema", schema.path], environment: environment)
        #expect(long.status == 64)
        #expect(long.stderr.hasPrefix("Error: the schema \(schema.path) is larger than 1 MiB, the most a schema may be\n"), "\(long.stderr)")
    }

    @Test func anUnreadableImageNamesThePathAndTheCause() async throws {
        let directory = try temporaryDirectory("file-image")
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = SendCommandTests.environment(directory)
        let missing = directory.appendingPathComponent("missing.png").path
        let absent = try await CommandRunner.codexctl(["send", "Look.", "--ephemeral", "--image", missing], environment: environment)
        #expect(absent.stderr.hasPrefix("Error: cannot open the image \(missing): No such file or directory\n"), "\(absent.stderr)")
        let folder = directory.appendingPathComponent("folder.png")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        let notFile = try await CommandRunner.codexctl(["send", "Look.", "--ephemeral", "--image", folder.path], environment: environment)
        #expect(notFile.stderr.hasPrefix("Error: cannot read the image \(folder.path): Is a directory\n"), "\(notFile.stderr)")
        #expect([absent.status, notFile.status] == [64, 64])
    }

    @Test func aDatabaseTheUserMayNotWriteIsRefusedNamingThePathAndTheCause() async throws {
        let directory = try temporaryDirectory("file-readonly-db")
        defer {
            _ = chmod(directory.appendingPathComponent("db").path, 0o700)
            try? FileManager.default.removeItem(at: directory)
        }
        let server = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply(["Hi."]))])
        defer { server.shutdown() }
        let folder = directory.appendingPathComponent("db")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        let database = folder.appendingPathComponent("state.sqlite").path
        let endpoint = server.baseURL.appendingPathComponent("v1").absoluteString
        let environment = SendCommandTests.environment(directory)
        let first = try await CommandRunner.codexctl(["send", "Hi", "--db", database, "--endpoint", endpoint], environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(chmod(database, 0o400) == 0)
        let readOnlyFile = try await unprivileged(["send", "Again", "--db", database, "--endpoint", endpoint], environment: environment)
        #expect(readOnlyFile.status == 1)
        #expect(readOnlyFile.stderr == "Error: sqlite_read_only: cannot open for writing \(database): permission denied\n")
        #expect(chmod(database, 0o600) == 0)
        for companion in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + companion) }
        #expect(chmod(folder.path, 0o500) == 0)
        let readOnlyDirectory = try await unprivileged(["send", "Again", "--db", database, "--endpoint", endpoint], environment: environment)
        #expect(readOnlyDirectory.status == 1)
        #expect(readOnlyDirectory.stderr == "Error: sqlite_read_only: cannot write in \(folder.path), the directory of \(database): permission denied\n")
        #expect(server.requests.count == 1, "nothing was sent for a store that cannot be written")
    }

    @Test func aHomeTheUserMayNotWriteNamesThePathAndTheCause() async throws {
        let directory = try temporaryDirectory("file-readonly-home")
        let home = directory.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: false)
        #expect(chmod(home.path, 0o500) == 0)
        defer {
            _ = chmod(home.path, 0o700)
            try? FileManager.default.removeItem(at: directory)
        }
        var environment = SendCommandTests.environment(directory)
        environment["HOME"] = home.path
        environment["XDG_STATE_HOME"] = ""
        let run = try await unprivileged(["send", "Hi", "--endpoint", "http://127.0.0.1:9/v1"], environment: environment)
        #expect(run.status == 1)
        #expect(run.stderr == "Error: file_system_error: cannot write \(home.path)/.local: Permission denied\n", "\(run.stderr)")
    }

    /// The XDG Base Directory specification: a relative path in `XDG_STATE_HOME` is invalid and ignored,
    /// so the default store is under `$HOME/.local/state`, never under whatever directory the command runs in.
    @Test func aRelativeStateHomeIsIgnored() async throws {
        let directory = try temporaryDirectory("file-xdg")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try LoopbackHTTPServer(replies: [.sse(SendCommandTests.reply(["Hi."]))])
        defer { server.shutdown() }
        let workingDirectory = directory.appendingPathComponent("cwd")
        try FileManager.default.createDirectory(at: workingDirectory, withIntermediateDirectories: false)
        var environment = SendCommandTests.environment(directory)
        environment["HOME"] = directory.appendingPathComponent("home").path
        environment["XDG_STATE_HOME"] = "relative-state"
        let run = try await CommandRunner.codexctl(
            ["send", "Hi", "--endpoint", server.baseURL.appendingPathComponent("v1").absoluteString], in: workingDirectory, environment: environment
        )
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: workingDirectory.path).isEmpty)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("home/.local/state/codexkit/state.sqlite").path))
    }

    /// Paths Foundation's `NSString` path methods trap on (one character), a symbolic link loop, a
    /// forgotten `--db` value: typed errors, never a crash, and nothing made where it should not be.
    @Test func shortPathsLoopsAndForgottenValuesAreTypedErrors() async throws {
        let directory = try temporaryDirectory("file-short")
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = SendCommandTests.environment(directory)
        for name in ["a", "é"] {
            let listed = try await CommandRunner.codexctl(["threads", "list", "--db", name], in: directory, environment: environment)
            #expect(listed.status == 1, "\(listed.stderr)")
            #expect(listed.stderr == "Error: sqlite_not_found: cannot open \(name): no such file\n")
            let checked = try await CommandRunner.codexctl(["db", "check", "--db", name], in: directory, environment: environment)
            #expect(checked.status == 1, "\(checked.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        let made = try await CommandRunner.codexctl(["db", "migrate", "--db", "q"], in: directory, environment: environment)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("q").path))

        let loop = directory.appendingPathComponent("loop").path
        #expect(symlink(loop, loop) == 0)
        let looped = try await CommandRunner.codexctl(["threads", "list", "--db", loop], environment: environment)
        #expect(looped.status == 1)
        #expect(looped.stderr == "Error: sqlite_io_failure: cannot inspect \(loop): too many levels of symbolic links (errno 40)\n", "\(looped.stderr)")

        let forgotten = try await CommandRunner.codexctl(["db", "migrate", "--db", "--json"], in: directory, environment: environment)
        #expect(forgotten.status == 64)
        // `--json` on the line asks for the JSON form of the error, on standard output.
        let error = try JSONValue(parsing: Array(forgotten.stdout.utf8))["error"]
        #expect(error?["code"]?.stringValue == "usage")
        #expect(error?["message"]?.stringValue == "Missing value for '--db' ('--json' is an option; a value that is an option's name is written '--db=--json')")
        // An alias counts as the option it stands for.
        let plain = try await CommandRunner.codexctl(["send", "Hi", "--db", "-m", "gpt-5.6-sol"], in: directory, environment: environment)
        #expect(plain.status == 64)
        #expect(plain.stderr.hasPrefix("Error: Missing value for '--db' ('-m' is an option; a value that is an option's name is written '--db=-m')\n"), "\(plain.stderr)")
        // Only an option's name is refused: a value that merely contains one is a value.
        let equals = try await CommandRunner.codexctl(["threads", "list", "--db", "=--json"], in: directory, environment: environment)
        #expect(equals.status == 1, "\(equals.stderr)")
        #expect(equals.stderr == "Error: sqlite_not_found: cannot open =--json: no such file\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["loop", "q"])
    }

    /// `db migrate` on a machine where no command has run yet makes the default store, directory and all.
    @Test func migrateMakesTheDefaultStoreOnANewMachine() async throws {
        let directory = try temporaryDirectory("file-fresh")
        defer { try? FileManager.default.removeItem(at: directory) }
        var environment = SendCommandTests.environment(directory)
        environment["XDG_STATE_HOME"] = directory.appendingPathComponent("new/state").path
        let migrated = try await CommandRunner.codexctl(["db", "migrate"], environment: environment)
        #expect(migrated.status == 0, "\(migrated.stderr)")
        let folder = directory.appendingPathComponent("new/state/codexkit").path
        #expect(FileManager.default.fileExists(atPath: folder + "/state.sqlite"))
        var info = stat()
        #expect(stat(folder, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
    }
}
