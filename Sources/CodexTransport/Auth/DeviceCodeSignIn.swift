public import CodexCore
import CodexSchema
public import Foundation

/// Device-code sign-in for ChatGPT accounts: show the user a code and a URL, poll until they approve,
/// then exchange the result for a session.
///
/// ```swift
/// let signIn = DeviceCodeSignIn(issuer: .openAI, httpClient: DefaultHTTPClient())
/// let code = try await signIn.requestCode()
/// print("Open \(code.verificationURL) and enter \(code.userCode)")
/// let session = try await signIn.waitForApproval(code)
/// ```
public struct DeviceCodeSignIn: Sendable {
    /// What to show the user.
    public struct DeviceCode: Sendable, Hashable {
        /// The issuer's handle for this sign-in.
        public let deviceAuthID: String
        /// The code the user types.
        public let userCode: String
        /// Where the user types it.
        public let verificationURL: URL
        /// How often to poll.
        public let interval: Duration
    }

    /// The longest wait for approval: 15 minutes.
    public static let maximumWait: Duration = .seconds(15 * 60)

    private let issuer: AuthIssuer
    private let httpClient: any HTTPClient
    private let clock: any Clock<Duration>
    private let wallClock: any AgentWallClock

    /// Creates a sign-in flow.
    ///
    /// - Parameters:
    ///   - issuer: The issuer.
    ///   - httpClient: The HTTP seam.
    ///   - clock: The clock poll waits use.
    ///   - wallClock: The date recorded as the session's refresh time.
    public init(issuer: AuthIssuer = .openAI, httpClient: any HTTPClient, clock: any Clock<Duration> = ContinuousClock(),
                wallClock: any AgentWallClock = SystemWallClock()) {
        self.issuer = issuer
        self.httpClient = httpClient
        self.clock = clock
        self.wallClock = wallClock
    }

    /// Asks the issuer for a user code.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `device_code_unavailable` (HTTP 404) or `provider_error`.
    public func requestCode() async throws -> DeviceCode {
        let (status, body) = try await issuer.post("api/accounts/deviceauth/usercode", json: ["client_id": .string(issuer.clientID)], using: httpClient)
        if status == 404 { throw AgentRuntimeError(.deviceCodeUnavailable) }
        guard (200..<300).contains(status), let id = body?["device_auth_id"]?.stringValue,
              let userCode = body?["user_code"]?.stringValue ?? body?["usercode"]?.stringValue else {
            throw AgentRuntimeError(.issuer("the issuer did not return a device code (HTTP \(status))", status: status))
        }
        let seconds = body?["interval"]?.stringValue.flatMap(Double.init) ?? body?["interval"]?.numberValue?.doubleValue ?? 5
        // Between one second and the code's whole 15 minutes: an issuer's 1e300 once overflowed the conversion.
        let interval = Duration.milliseconds(Int64(min(900, max(1, seconds.isFinite ? seconds : 5)) * 1000))
        return DeviceCode(deviceAuthID: id, userCode: userCode, verificationURL: issuer.url("codex/device"), interval: interval)
    }

    /// Polls until the user approves (HTTP 403/404 mean "not yet"), then exchanges the authorization code
    /// for tokens.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `device_code_expired` after 15 minutes, `provider_error` for
    ///   other statuses, or `CancellationError`.
    public func waitForApproval(_ code: DeviceCode) async throws -> ChatGPTSession {
        var waited = Duration.zero
        while true {
            let (status, body) = try await issuer.post(
                "api/accounts/deviceauth/token",
                json: ["device_auth_id": .string(code.deviceAuthID), "user_code": .string(code.userCode)],
                using: httpClient
            )
            if (200..<300).contains(status) {
                guard let authorizationCode = body?["authorization_code"]?.stringValue, let verifier = body?["code_verifier"]?.stringValue else {
                    throw AgentRuntimeError(.issuer("the device-code approval is missing its authorization code"))
                }
                return try await exchange(authorizationCode: authorizationCode, verifier: verifier)
            }
            guard status == 403 || status == 404 else {
                throw AgentRuntimeError(.issuer("device-code polling failed with HTTP \(status)", status: status))
            }
            guard waited + code.interval <= Self.maximumWait else {
                throw AgentRuntimeError(.deviceCodeExpired)
            }
            try await clock.sleep(for: code.interval)
            waited += code.interval
        }
    }

    private func exchange(authorizationCode: String, verifier: String) async throws -> ChatGPTSession {
        let (status, body) = try await issuer.post(
            "oauth/token",
            form: [
                ("grant_type", "authorization_code"), ("code", authorizationCode),
                ("redirect_uri", issuer.url("deviceauth/callback").absoluteString), ("client_id", issuer.clientID), ("code_verifier", verifier),
            ],
            using: httpClient
        )
        guard (200..<300).contains(status), let idToken = body?["id_token"]?.stringValue, let accessToken = body?["access_token"]?.stringValue,
              let refreshToken = body?["refresh_token"]?.stringValue else {
            throw AgentRuntimeError(.issuer("exchanging the device code failed (HTTP \(status))", status: status))
        }
        var session = try ChatGPTSession(idToken: idToken, accessToken: accessToken, refreshToken: refreshToken, lastRefresh: wallClock.now())
        // Renewed where it was issued: another issuer's refresh token never goes to OpenAI's.
        session.issuer = issuer == .openAI ? nil : issuer.baseURL
        return session
    }
}
