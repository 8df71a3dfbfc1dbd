// StorageFixture: appends turns to a SQLite state store from a separate process, for the storage
// concurrency and crash tests. Each turn is one appendHistory call (one transaction) of six items.
//   --db PATH --thread UUID --writer NAME [--seconds S | --turns N]
//   [--umask OCTAL] [--image] [--lease]: set the umask first; append one message with an image; take a
//   runtime owner lease (the permissions test creates every file a store makes this way).
//   [--ready PATH]: create the file PATH once the first turn is committed (the kill test waits for it).
//   --probe-shared-lock PATH: print "held" when another process holds a lock on the database file's
//   shared-lock range (SQLite's SHARED lock, which each open connection of a WAL database keeps), else "free".
// Prints the number of turns it appended; exits 1 with the error on any failure.
import CodexCore
import CodexStorageSQLite
import Foundation

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

/// Whether another process holds a read or write lock on SQLite's shared-lock range of `path`.
func sharedLockHeld(_ path: String) throws -> Bool {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw SQLiteStoreError(code: .failure, message: "cannot open \(path)") }
    defer { close(descriptor) }
    var lock = flock()
    lock.l_type = Int16(F_WRLCK)
    lock.l_whence = Int16(SEEK_SET)
    lock.l_start = 0x4000_0000 + 2   // SQLite's PENDING_BYTE + 2: the first byte of the shared range
    lock.l_len = 510
    guard fcntl(descriptor, F_GETLK, &lock) == 0 else { throw SQLiteStoreError(code: .failure, message: "F_GETLK failed") }
    return lock.l_type != Int16(F_UNLCK)
}

func run() async throws -> Int {
    guard let path = option("--db"), let threadText = option("--thread"), let writer = option("--writer") else {
        throw SQLiteStoreError(code: .failure, message: "usage: --db PATH --thread UUID --writer NAME [--seconds S | --turns N]")
    }
    if let mask = option("--umask"), let value = UInt32(mask, radix: 8) { umask(mode_t(value)) }
    let store = try SQLiteRuntimeStateStore(path: path)
    let thread = AgentThreadID(rawValue: threadText)
    if try await store.thread(thread) == nil {
        try await store.upsertThread(AgentThread(id: thread, title: "shared"))
    }
    let lease = CommandLine.arguments.contains("--lease") ? try store.acquireOwnerLease() : nil
    defer { withExtendedLifetime(lease) {} }
    if CommandLine.arguments.contains("--image") {
        let image = AgentImageAttachment.png(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 1, count: 64)))
        try await store.appendHistory([.message(AgentMessage(threadID: thread, role: .user, text: "picture", images: [image]))], to: thread)
    }
    let deadline = Date().addingTimeInterval(Double(option("--seconds") ?? "0") ?? 0)
    let limit = Int(option("--turns") ?? "") ?? .max
    var turns = 0
    while turns < limit, limit != .max || Date() < deadline {
        let turn = AgentTurnID()
        let call = ToolInvocation(id: ToolInvocationID(rawValue: "\(writer)-call-\(turns)"), toolName: "lookup", arguments: #"{"n":\#(turns)}"#)
        try await store.appendHistory([
            .message(AgentMessage(threadID: thread, role: .user, text: "\(writer) turn \(turns)")),
            .reasoning(AgentReasoningItem(itemID: "\(writer)-rs-\(turns)", summary: ["s"], encryptedContent: "gAAA")),
            .toolCall(call),
            .toolResult(.success(call, text: "result \(turns)")),
            .message(AgentMessage(threadID: thread, role: .assistant, text: "\(writer) answer \(turns)", phase: .finalAnswer)),
            .systemEvent(AgentSystemEvent(type: .turnCompleted, turnID: turn)),
        ], to: thread)
        turns += 1
        if turns == 1, let ready = option("--ready") {
            _ = FileManager.default.createFile(atPath: ready, contents: Data())
        }
    }
    return turns
}

do {
    if let probed = option("--probe-shared-lock") {
        print(try sharedLockHeld(probed) ? "held" : "free")
        exit(0)
    }
    print(try await run())
    exit(0)
} catch {
    FileHandle.standardError.write(Data("storage fixture: \(error)\n".utf8))
    exit(1)
}
