import CodexCore
import CodexSchema
public import Foundation

/// The OAuth issuer that signs ChatGPT sessions in and refreshes them (`https://auth.openai.com` by
/// default; tests point it at a loopback server).
public struct AuthIssuer: Sendable, Hashable {
    /// The issuer base URL.
    public let baseURL: URL
    /// The OAuth client ID.
    public let clientID: String

    /// The public Codex issuer and client.
    public static let openAI = AuthIssuer(builtIn: "https://auth.openai.com", clientID: "app_EMoamEEZ73f0CkXaXp7hrann")

    private init(builtIn base: String, clientID: String) {
        baseURL = URL(string: base) ?? URL(fileURLWithPath: "/")
        self.clientID = clientID
    }

    /// A custom issuer (validated like an endpoint: https, or http to loopback).
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `invalid_endpoint`.
    public init(baseURL: URL, clientID: String = AuthIssuer.openAI.clientID) throws {
        try ResponsesEndpoint.validate(baseURL)
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        self.baseURL = URL(string: text) ?? baseURL
        self.clientID = clientID
    }

    func url(_ path: String) -> URL { baseURL.appendingPathComponent(path) }

    /// POSTs a JSON body and returns status and body (body capped at 1 MiB).
    func post(_ path: String, json: JSONValue, using http: any HTTPClient) async throws -> (status: Int, body: JSONValue?) {
        try await post(path, body: json.canonicalBytes(), contentType: "application/json", using: http)
    }

    /// POSTs a form body.
    func post(_ path: String, form: [(String, String)], using http: any HTTPClient) async throws -> (status: Int, body: JSONValue?) {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let text = form.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        return try await post(path, body: Array(text.utf8), contentType: "application/x-www-form-urlencoded", using: http)
    }

    private func post(_ path: String, body: [UInt8], contentType: String, using http: any HTTPClient) async throws -> (status: Int, body: JSONValue?) {
        let request = HTTPRequest(
            method: "POST", url: url(path), headers: ["Content-Type": contentType, "Accept": "application/json"], body: body,
            timeouts: HTTPTimeouts(connect: .seconds(30), firstByte: .seconds(60), idle: .seconds(60), total: .seconds(120))
        )
        let response = try await http.send(request)
        let bytes = try await response.body.prefix(upTo: 1024 * 1024)
        return (response.statusCode, try? JSONValue(parsing: bytes, options: .init(maximumDepth: 32)))
    }
}
