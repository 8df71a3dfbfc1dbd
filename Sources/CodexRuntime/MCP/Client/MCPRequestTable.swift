import CodexSchema

/// The client's outstanding requests, and what each message from the server means for them: a pure
/// state machine (no locks, no tasks) whose methods return what to do, so every rule is testable
/// without a server. `Waiter` is whatever the caller resumes when a reply arrives.
struct MCPRequestTable<Waiter> {
    /// One request awaiting its reply.
    struct Entry {
        /// The request's ID.
        let id: Int64
        /// Its method.
        let method: String
        /// The progress token it carries, when it asked for progress.
        let progressToken: String?
        /// Who waits for the reply.
        let waiter: Waiter
    }

    /// What one message from the server asks of the client.
    enum Action {
        /// A reply to `entry`: resume its waiter.
        case complete(Entry, Result<JSONValue, MCPRemoteError>)
        /// Progress for `entry`'s request.
        case progress(Entry, MCPProgress)
        /// The server's tool list changed.
        case toolsChanged
        /// Answer a server request with this message.
        case reply(MCPMessage)
        /// A log line from the server (`notifications/message`): its level and text.
        case log(level: String, text: String)
        /// Nothing to do (a late reply to a cancelled request, an unknown notification).
        case ignore
        /// An error reply that names no request: the server could not read something the client sent.
        case unattributedError(MCPRemoteError)
    }

    private var nextID: Int64 = 1

    private var entries: [Int64: Entry] = [:]

    /// How many requests await replies.
    var count: Int { entries.count }

    /// Registers a request and returns its entry (with a fresh ID, and a progress token when asked).
    mutating func open(method: String, wantsProgress: Bool, waiter: Waiter) -> Entry {
        let id = nextID
        nextID += 1
        let entry = Entry(id: id, method: method, progressToken: wantsProgress ? "ck-progress-\(id)" : nil, waiter: waiter)
        entries[id] = entry
        return entry
    }

    /// Whether request `id` still waits for its reply.
    func contains(_ id: Int64) -> Bool { entries[id] != nil }

    /// Removes the request `id` (cancelled or timed out), returning it when it was still waiting.
    mutating func remove(_ id: Int64) -> Entry? { entries.removeValue(forKey: id) }

    /// Removes every request (the connection ended), returning them in ID order.
    mutating func drain() -> [Entry] {
        defer { entries.removeAll() }
        return entries.values.sorted { $0.id < $1.id }
    }

    /// What `message` asks of the client; a reply removes its request.
    mutating func receive(_ message: MCPMessage) -> Action {
        switch message {
        case .result(let id, let result):
            guard case .number(let number) = id, let entry = entries.removeValue(forKey: number) else { return .ignore }
            return .complete(entry, .success(result))
        case .error(let id, let error):
            guard let id else { return .unattributedError(error) }
            guard case .number(let number) = id, let entry = entries.removeValue(forKey: number) else { return .ignore }
            return .complete(entry, .failure(error))
        case .notification(let method, let params):
            return notification(method, params)
        case .request(let id, let method, _):
            if method == "ping" { return .reply(.result(id: id, result: .object(JSONObject()))) }
            // Sampling, elicitation, roots and anything newer: this client declares none of them, and
            // answers each with JSON-RPC's "method not found", as the specification says for roots.
            return .reply(.error(id: id, MCPRemoteError(code: MCPRemoteError.methodNotFound, message: "Method not found: this client does not support \(method.prefix(64))")))
        }
    }

    private func notification(_ method: String, _ params: JSONValue?) -> Action {
        switch method {
        case "notifications/progress":
            guard let params, let token = params["progressToken"].flatMap(Self.tokenText),
                  let entry = entries.values.first(where: { $0.progressToken == token }),
                  let progress = params["progress"]?.numberValue?.doubleValue, progress.isFinite
            else { return .ignore }
            let total = params["total"]?.numberValue?.doubleValue
            return .progress(entry, MCPProgress(progress: progress, total: total.flatMap { $0.isFinite ? $0 : nil }, message: params["message"]?.stringValue))
        case "notifications/tools/list_changed":
            return .toolsChanged
        case "notifications/message":
            let level = params?["level"]?.stringValue ?? "info"
            let data = params?["data"]
            let text = data?.stringValue ?? data.map { $0.compactString() } ?? ""
            return .log(level: level, text: text)
        default:
            return .ignore
        }
    }

    private static func tokenText(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): return text
        case .number(let number): return number.description
        default: return nil
        }
    }
}

extension MCPRequestTable.Entry: Sendable where Waiter: Sendable {}
