public import CodexCore

extension AgentRuntime {
    /// The threads, most recently updated first: now, and again after each thread is created, updated,
    /// changes status or pending wait, or is deleted.
    ///
    /// - Parameter buffering: `.latest` (default) or `.buffered(limit:)`.
    public func observeThreads(buffering: AgentObservationBuffering = .latest) -> AgentObservation<[AgentThread]> {
        observation(buffering: buffering, relevant: { change in
            if case .history = change { return false }
            return true
        }, read: { store, _ in
            .value(try await store.threads())
        })
    }

    /// One thread: now, and again after each change to it (title, configuration, status, pending wait).
    /// The sequence ends when the thread is deleted.
    ///
    /// - Throws: (from the sequence) `thread_not_found` when the thread does not exist.
    public func observeThread(id: AgentThreadID, buffering: AgentObservationBuffering = .latest) -> AgentObservation<AgentThread> {
        observation(buffering: buffering, relevant: { change in
            if case .history = change { return false }
            return change.threadID == id
        }, read: { store, change in
            guard let thread = try await store.thread(id) else {
                if change == nil { throw AgentRuntimeError(code: .threadNotFound, message: "no such thread") }
                return .finished
            }
            return .value(thread)
        })
    }

    /// A thread's messages (every role, in history order): now, and again after each turn or steer adds
    /// messages. The sequence ends when the thread is deleted.
    ///
    /// After the first read, each snapshot is the previous one plus the messages just appended: the
    /// history is not read again, so a long thread costs only what changed. Each snapshot is a whole
    /// list: a `.buffered(limit:)` reader that falls behind holds up to `limit` of them.
    ///
    /// - Throws: (from the sequence) `thread_not_found` when the thread does not exist.
    public func observeMessages(in threadID: AgentThreadID, buffering: AgentObservationBuffering = .latest) -> AgentObservation<[AgentMessage]> {
        let messages = ObservedMessages()
        return observation(buffering: buffering, relevant: { change in
            if case .thread = change { return false }
            return change.threadID == threadID
        }, read: { store, change in
            switch change {
            case nil:
                guard try await store.thread(threadID) != nil else {
                    throw AgentRuntimeError(code: .threadNotFound, message: "no such thread")
                }
                return .value(messages.replace(with: try await Self.messages(of: threadID, in: store)))
            case .deleted?:
                return .finished
            case .thread?:
                return .unchanged
            case .history(_, let items)?:
                var added: [AgentMessage] = []
                for case .message(let message) in items { added.append(message) }
                return added.isEmpty ? .unchanged : .value(messages.append(added))
            }
        })
    }

    /// One page of a thread's history (every item: messages, tool calls and results, reasoning, system
    /// events), read after every write the runtime accepted before it.
    ///
    /// - Throws: `thread_not_found`, or the state store's error.
    public func history(of threadID: AgentThreadID, query: AgentHistoryQuery = AgentHistoryQuery()) async throws -> AgentHistoryPage {
        try await writer.read { store in
            guard try await store.thread(threadID) != nil else { throw AgentRuntimeError(code: .threadNotFound, message: "no such thread") }
            return try await store.history(of: threadID, query: query)
        }
    }

    /// Every message of a thread, oldest first.
    static func messages(of threadID: AgentThreadID, in store: any RuntimeStateStore) async throws -> [AgentMessage] {
        var messages: [AgentMessage] = []
        var cursor: String?
        repeat {
            let page = try await store.history(of: threadID, query: AgentHistoryQuery(limit: 1024, cursor: cursor))
            for case .message(let message) in page.items { messages.append(message) }
            cursor = page.nextCursor
        } while cursor != nil
        return messages
    }
}

/// The message list an observation keeps between reads (touched only by its reads, which run inside
/// write queue steps, one at a time).
private final class ObservedMessages: @unchecked Sendable {
    private var messages: [AgentMessage] = []

    func replace(with messages: [AgentMessage]) -> [AgentMessage] {
        self.messages = messages
        return messages
    }

    func append(_ added: [AgentMessage]) -> [AgentMessage] {
        messages += added
        return messages
    }
}
