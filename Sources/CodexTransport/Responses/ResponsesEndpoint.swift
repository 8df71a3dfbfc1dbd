import CodexCore
public import Foundation

/// Where model requests go: a base URL and how to authenticate against it.
///
/// Two profiles exist: the ChatGPT/Codex backend (`https://chatgpt.com/backend-api/codex`, bearer token
/// plus `ChatGPT-Account-ID`) and the public API (`https://api.openai.com/v1`, API key). Any base must be
/// `https`, or `http` to a loopback host; it may not carry userinfo, a query or a fragment.
public struct ResponsesEndpoint: Sendable, Hashable {
    /// Which backend family the endpoint speaks to.
    public enum Profile: String, Sendable, Hashable {
        /// The ChatGPT/Codex backend.
        case chatGPT
        /// The public OpenAI API.
        case publicAPI
    }

    /// The validated base URL, without a trailing slash.
    public let baseURL: URL
    /// The profile.
    public let profile: Profile

    /// The ChatGPT/Codex backend.
    public static let chatGPT = ResponsesEndpoint(builtIn: "https://chatgpt.com/backend-api/codex", profile: .chatGPT)
    /// The public API.
    public static let publicAPI = ResponsesEndpoint(builtIn: "https://api.openai.com/v1", profile: .publicAPI)

    /// A built-in endpoint from a constant, known-valid URL.
    private init(builtIn base: String, profile: Profile) {
        self.baseURL = URL(string: base) ?? URL(fileURLWithPath: "/")
        self.profile = profile
    }

    /// Validates and creates an endpoint.
    ///
    /// - Throws: ``AgentRuntimeError`` with code `invalid_endpoint`.
    public init(baseURL: URL, profile: Profile) throws {
        try Self.validate(baseURL)
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        guard let normalized = URL(string: text) else {
            throw AgentRuntimeError(.invalidEndpoint(reason: "the endpoint URL is not valid"))
        }
        self.baseURL = normalized
        self.profile = profile
    }

    /// `{base}/{path}` (a query may follow in `query`).
    public func url(_ path: String, query: [(String, String)] = []) -> URL {
        var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)
        if !query.isEmpty { components?.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) } }
        return components?.url ?? baseURL.appendingPathComponent(path)
    }

    /// Checks the rules: `https`, or `http` only to a loopback host (an IPv4 literal in 127.0.0.0/8, the
    /// IPv6 literal `::1`, or the name `localhost`); a host; no userinfo, query or fragment. Nothing is
    /// looked up: `http://127.example.com` is a name, not a loopback address, and is refused.
    ///
    /// - Throws: ``AgentRuntimeError`` with code `invalid_endpoint`.
    public static func validate(_ url: URL) throws {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty else {
            throw AgentRuntimeError(.invalidEndpoint(reason: "the endpoint URL needs a scheme and a host"))
        }
        if components.user != nil || components.password != nil {
            throw AgentRuntimeError(.invalidEndpoint(reason: "the endpoint URL may not contain user information"))
        }
        if components.query != nil || components.fragment != nil {
            throw AgentRuntimeError(.invalidEndpoint(reason: "the endpoint URL may not contain a query or a fragment"))
        }
        if let port = components.port, !(1...65_535).contains(port) {
            throw AgentRuntimeError(.invalidEndpoint(reason: "the endpoint's port must be between 1 and 65535"))
        }
        switch scheme {
        case "https":
            return
        case "http" where isLoopback(host):
            return
        default:
            throw AgentRuntimeError(.invalidEndpoint(
                reason: "the endpoint must use https; plain http is allowed only to a loopback address (an IPv4 literal in 127.0.0.0/8, [::1]) or the name localhost"
            ))
        }
    }

    /// Whether `host` is loopback by its spelling alone: a dotted-quad IPv4 literal whose first byte is
    /// 127, the IPv6 literal `::1` in any spelling (brackets optional), or `localhost`. Never resolved.
    static func isLoopback(_ host: String) -> Bool {
        var bare = host.lowercased()
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = String(bare.dropFirst().dropLast()) }
        if bare == "localhost" { return true }
        var ipv4 = in_addr()
        if inet_pton(AF_INET, bare, &ipv4) == 1 {
            // s_addr is in network order: its first byte in memory is the first octet.
            return withUnsafeBytes(of: &ipv4.s_addr) { $0.first } == 127
        }
        var ipv6 = in6_addr()
        if inet_pton(AF_INET6, bare, &ipv6) == 1 {
            return withUnsafeBytes(of: &ipv6) { Array($0) } == Array(repeating: 0, count: 15) + [1]
        }
        return false
    }
}
