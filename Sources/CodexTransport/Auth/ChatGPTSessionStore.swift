import CodexCore
import Foundation

/// Saves a ``ChatGPTSession`` as JSON in a ``FileSecureStore``.
public struct ChatGPTSessionStore: Sendable {
    /// The store.
    public let store: FileSecureStore
    /// The key.
    public let key: String

    /// Creates a session store.
    public init(store: FileSecureStore, key: String = "chatgpt-session.json") {
        self.store = store
        self.key = key
    }

    /// Saves the session.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `secure_store_failure`.
    public func save(_ session: ChatGPTSession) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        try store.save([UInt8](try encoder.encode(session)), for: key)
    }

    /// The saved session, or `nil`.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `secure_store_failure` when the file is unsafe or unreadable.
    public func load() throws -> ChatGPTSession? {
        guard let bytes = try store.load(key) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        do {
            return try decoder.decode(ChatGPTSession.self, from: Data(bytes))
        } catch {
            throw AgentRuntimeError(.secureStore("the saved session is not readable"))
        }
    }

    /// Removes the saved session.
    public func delete() throws {
        try store.delete(key)
    }
}
