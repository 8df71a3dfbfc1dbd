public import CodexCore
public import CodexSchema
import Foundation

/// Remote context compaction: `POST {base}/responses/compact` with the history to compact, answered by
/// one JSON object whose `output` items replace that history in later requests (they can include
/// `compaction` items with `encrypted_content`, replayed as they are).
///
/// ```swift
/// let client = ResponsesCompactionClient(endpoint: .chatGPT, httpClient: DefaultHTTPClient(), authProvider: auth)
/// let replacement = try await client.compact(model: "gpt-6-astra", instructions: nil, input: history)
/// ```
public struct ResponsesCompactionClient: Sendable {
    /// The largest reply read: 256 MiB (more is refused while reading).
    public static let maximumReplyBytes = 256 * 1024 * 1024

    private let endpoint: ResponsesEndpoint
    private let httpClient: any HTTPClient
    private let authProvider: any AuthProvider
    private let wallClock: any AgentWallClock
    private let timeouts: HTTPTimeouts

    /// Creates a client.
    /// - Parameter timeouts: Compaction is one unary request; the default allows a slow summary (total 10 minutes).
    public init(
        endpoint: ResponsesEndpoint, httpClient: any HTTPClient, authProvider: any AuthProvider, wallClock: any AgentWallClock = SystemWallClock(),
        timeouts: HTTPTimeouts = HTTPTimeouts(connect: .seconds(10), firstByte: .seconds(300), idle: .seconds(300), total: .seconds(600))
    ) {
        self.endpoint = endpoint
        self.httpClient = httpClient
        self.authProvider = authProvider
        self.wallClock = wallClock
        self.timeouts = timeouts
    }

    /// The body sent: `model`, `input`, and `instructions` when not empty.
    public static func body(model: String, instructions: String?, input: [ResponsesInputItem]) -> JSONValue {
        var object: JSONObject = ["model": .string(model), "input": .array(input.map(\.jsonValue))]
        if let instructions, !instructions.isEmpty { object["instructions"] = .string(instructions) }
        return .object(object)
    }

    /// Compacts `input`; the items that replace it.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` as for a Responses request (HTTP status, auth,
    ///   transport), `response_too_large` past ``maximumReplyBytes``, `responses_event_malformed` when
    ///   the reply has no `output` array of objects, `compaction_invalid` when its items break a rule of
    ///   ``ResponsesCompactionReply`` (none, an undocumented type, instructions it was not sent). A 401
    ///   is retried once with recovered credentials.
    public func compact(model: String, instructions: String?, input: [ResponsesInputItem]) async throws -> [JSONValue] {
        let body = Array(Self.body(model: model, instructions: instructions, input: input).compactString().utf8)
        var credentials = try await authProvider.credentials()
        var recovered = false
        while true {
            var headers: HTTPHeaders = ["Content-Type": "application/json", "Accept": "application/json", "originator": "codexkit"]
            AuthenticationMiddleware.authorize(&headers, with: credentials)
            let request = HTTPRequest(method: "POST", url: endpoint.url("responses/compact"), headers: headers, body: body, timeouts: timeouts)
            let response = try await httpClient.send(request)
            if response.statusCode == 401, !recovered, let renewed = try await authProvider.recoverAfterUnauthorized(credentials) {
                response.body.cancel()
                credentials = renewed
                recovered = true
                continue
            }
            guard response.isSuccess else {
                let errorBody = (try? await response.body.prefix(upTo: ResponsesErrorMapper.maximumErrorBodyBytes)) ?? []
                throw ResponsesErrorMapper.error(status: response.statusCode, headers: response.headers, body: errorBody, now: wallClock.now())
                    .redacting(credentials.secrets)
            }
            let reply = try await response.body.collect(upTo: Self.maximumReplyBytes)
            let output = try Self.output(of: reply)
            try ResponsesCompactionReply.validate(output, input: input, instructions: instructions)
            return output
        }
    }

    /// The `output` items of a compaction reply.
    /// - Throws: `responses_event_malformed` when the reply is not an object with an `output` array of objects.
    public static func output(of reply: [UInt8]) throws -> [JSONValue] {
        let malformed = AgentRuntimeError(.malformed("the compaction reply has no output items"))
        guard let document = try? JSONValue(parsing: reply), case .array(let items)? = document["output"] else { throw malformed }
        guard items.allSatisfy({ $0.objectValue != nil }) else { throw malformed }
        return items
    }
}
