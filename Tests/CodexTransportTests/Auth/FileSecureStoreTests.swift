import CodexCore
import CodexTestSupport
@testable import CodexTransport
import Foundation
import Glibc
import Testing

@Suite struct FileSecureStoreTests {
    private func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    @Test func savesLoadsAndDeletesWithPrivatePermissions() throws {
        let root = try temporaryDirectory()
        let store = try FileSecureStore(directory: root.appendingPathComponent("secrets"))
        #expect(try mode(store.directory.path) == 0o700)
        #expect(try store.load("token") == nil)
        try store.save(Array("first".utf8), for: "token")
        try store.save(Array("second".utf8), for: "token")
        #expect(try store.load("token") == Array("second".utf8))
        #expect(try mode(store.directory.appendingPathComponent("token").path) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory.path) == ["token"])
        try store.delete("token")
        try store.delete("token")
        #expect(try store.load("token") == nil)
    }

    @Test func everyEntryItCreatesIsPrivateUnderUmask022() throws {
        let previous = umask(0o022)
        defer { umask(previous) }
        let root = try temporaryDirectory()
        let store = try FileSecureStore(directory: root.appendingPathComponent("secrets"))
        try store.save(Array("a".utf8), for: "one")
        try store.save(Array("b".utf8), for: "two")
        let entries = DirectorySnapshot(store.directory.path).entries
        #expect(entries.map(\.path) == ["", "one", "two"])
        for entry in entries { #expect(entry.mode == (entry.kind == "directory" ? 0o700 : 0o600), "\(entry.path)") }
    }

    @Test func aReadOnlyOpenCreatesAndChangesNothing() throws {
        let root = try temporaryDirectory()
        let missing = root.appendingPathComponent("absent")
        let reader = try FileSecureStore(readingAt: missing)
        #expect(try reader.load("token") == nil)
        #expect(!FileManager.default.fileExists(atPath: missing.path))
        let directory = root.appendingPathComponent("secrets")
        try FileSecureStore(directory: directory).save(Array("s".utf8), for: "token")
        chmod(directory.path, 0o750)
        let before = DirectorySnapshot(directory.path)
        let existing = try FileSecureStore(readingAt: directory)
        #expect(try existing.load("token") == Array("s".utf8))
        #expect(throws: AgentRuntimeError.self) { try existing.save(Array("x".utf8), for: "token") }
        #expect(throws: AgentRuntimeError.self) { try existing.delete("token") }
        #expect(DirectorySnapshot(directory.path).differences(from: before) == [])
    }

    @Test func loosePermissionsOnTheDirectoryAreTightened() throws {
        let root = try temporaryDirectory()
        let directory = root.appendingPathComponent("secrets")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        _ = try FileSecureStore(directory: directory)
        #expect(try mode(directory.path) == 0o700)
    }

    @Test func symlinksAndReadableFilesAreRefused() throws {
        let root = try temporaryDirectory()
        let real = root.appendingPathComponent("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: false)
        let link = root.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        let directoryError = #expect(throws: AgentRuntimeError.self) { try FileSecureStore(directory: link) }
        #expect(directoryError?.code == .secureStoreFailure)

        let store = try FileSecureStore(directory: root.appendingPathComponent("store"))
        let target = root.appendingPathComponent("elsewhere")
        try Data("secret".utf8).write(to: target)
        try FileManager.default.createSymbolicLink(at: store.directory.appendingPathComponent("linked"), withDestinationURL: target)
        let fileError = #expect(throws: AgentRuntimeError.self) { try store.load("linked") }
        #expect(fileError?.code == .secureStoreFailure)
        #expect(fileError?.message == "the secret file is a symbolic link")

        try store.save(Array("x".utf8), for: "open")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: store.directory.appendingPathComponent("open").path)
        let readable = #expect(throws: AgentRuntimeError.self) { try store.load("open") }
        #expect(readable?.message == "the secret file is readable by group or others")
    }

    @Test(arguments: ["", "../escape", ".hidden", "a/b", "spa ce"])
    func badKeysAreRefused(key: String) throws {
        let store = try FileSecureStore(directory: try temporaryDirectory().appendingPathComponent("s"))
        #expect(throws: AgentRuntimeError.self) { try store.save([1], for: key) }
    }

    /// A FIFO where a secret or the Codex CLI's auth.json belongs is refused at once (it once made
    /// `auth status` wait for a writer forever).
    @Test func aFIFOInPlaceOfASecretOrTheAuthFileIsRefusedAtOnce() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = try FileSecureStore(directory: root.appendingPathComponent("secrets"))
        #expect(mkfifo(store.directory.appendingPathComponent("token").path, 0o600) == 0)
        let error = #expect(throws: AgentRuntimeError.self) { _ = try store.load("token") }
        #expect(error?.message == "the secret is not a regular file")
        let home = root.appendingPathComponent("codex-home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        #expect(mkfifo(home.appendingPathComponent("auth.json").path, 0o600) == 0)
        let auth = #expect(throws: AgentRuntimeError.self) { _ = try CodexCLIAuthFile(url: home.appendingPathComponent("auth.json")).read() }
        #expect(auth?.code == .secureStoreFailure)
        #expect(auth?.message.hasSuffix("auth.json is not a regular file") == true, "\(auth?.message ?? "")")
    }

    /// A store or secret of another user is refused wherever it is opened (root can give one away, so
    /// this runs as root, as CI does).
    @Test(.enabled(if: geteuid() == 0, "only root can give a file to another user"))
    func anotherUsersStoreOrSecretIsRefused() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = try FileSecureStore(directory: root.appendingPathComponent("secrets"))
        try store.save(Array("k".utf8), for: "key")
        #expect(chown(store.directory.appendingPathComponent("key").path, 65_534, 65_534) == 0)
        let secret = #expect(throws: AgentRuntimeError.self) { _ = try store.load("key") }
        #expect(secret?.message == "the secret file belongs to another user")
        #expect(chown(store.directory.path, 65_534, 65_534) == 0)
        for open in [{ _ = try FileSecureStore(directory: store.directory) }, { _ = try FileSecureStore(readingAt: store.directory) }, { _ = try store.load("key") }] {
            let refused = #expect(throws: AgentRuntimeError.self) { try open() }
            #expect(refused?.message == "the store directory belongs to another user")
        }
    }

    @Test func onlyASavesOwnTemporaryFilesAreItsLeftovers() {
        #expect(FileSecureStore.isLeftover(".token.123.tmp", of: "token"))
        #expect(!FileSecureStore.isLeftover(".token.old.123.tmp", of: "token"))
        #expect(!FileSecureStore.isLeftover(".token..tmp", of: "token"))
        #expect(!FileSecureStore.isLeftover(".token.12a.tmp", of: "token"))
        #expect(FileSecureStore.isLeftover(".token.old.9.tmp", of: "token.old"))
    }
}
