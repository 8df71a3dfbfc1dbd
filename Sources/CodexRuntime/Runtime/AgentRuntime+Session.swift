import CodexCore
import Foundation
public import CodexTransport

extension AgentRuntime {
    /// Runs `obtain` (a device-code or browser sign-in) and keeps the session it returns in the
    /// runtime's secure store; a sign-in that finishes after a sign-out or another session is dropped.
    ///
    /// ```swift
    /// let signIn = DeviceCodeSignIn(httpClient: http)
    /// let state = try await runtime.signIn {
    ///     let code = try await signIn.requestCode()
    ///     show(code.userCode, code.verificationURL)
    ///     return try await signIn.waitForApproval(code)
    /// }
    /// ```
    ///
    /// - Returns: The signed-in account.
    /// - Throws: ``CodexCore/AgentRuntimeError`` `session_management_unsupported` when the auth provider
    ///   keeps no session, `session_replaced`, `secure_store_failure`, or `obtain`'s error.
    public func signIn(_ obtain: @Sendable () async throws -> ChatGPTSession) async throws -> AgentAuthenticationState {
        try await sessionManager().signIn(obtain)
    }

    /// Keeps `session` (saved before this returns) and uses it from now on, replacing any other.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `session_management_unsupported` or `secure_store_failure`.
    public func useSession(_ session: ChatGPTSession) async throws {
        try await sessionManager().useSession(session)
    }

    /// Forgets the signed-in session, in memory and in the secure store; model requests then fail with
    /// `not_signed_in` until a session is used again. Active persistent turns are interrupted and running
    /// structured recovery sends are suspended first (their budgets and saved completions are kept).
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `session_management_unsupported` or `secure_store_failure`.
    public func signOut() async throws {
        let manager = try sessionManager()
        // The sends are suspended and have unwound before the credentials go, so none of them finishes
        // (or fails) with a signed-out account.
        let running = stopActiveWork()
        await running.suspended.value
        await recoveries.waitUntilEnded(running.recoveries)
        try await manager.signOut()
    }

    /// Interrupts every active persistent turn now, cancels the automatic memory captures and asks the structured recovery sends running now to
    /// suspend (their budgets and saved completions are kept): what sign-out and background expiry do
    /// first. Work started afterwards is not touched.
    /// - Returns: The sends asked to stop, and the task that asks them.
    @discardableResult
    func stopActiveWork() -> (recoveries: [UUID], suspended: Task<Void, Never>) {
        activeTurns.interruptAll()
        memoryCaptures.cancelAll()
        let running = recoveries.snapshot()
        let recoveries = self.recoveries
        return (running, Task { await recoveries.suspend(running) })
    }

    /// Who is signed in: read from the secure store once, never from the network.
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `session_management_unsupported` or `secure_store_failure`.
    public func authenticationState() async throws -> AgentAuthenticationState {
        try await sessionManager().authenticationState()
    }

    private func sessionManager() throws -> any AgentSessionManaging {
        guard let manager = configuration.authProvider as? any AgentSessionManaging else {
            throw AgentRuntimeError(
                code: .sessionManagementUnsupported,
                message: "the runtime's auth provider keeps no session; configure a secure store or a ChatGPTSessionManager"
            )
        }
        return manager
    }

    /// The provider the runtime uses, checked against `secureStore`: a secure store needs a
    /// ``CodexTransport/ChatGPTSessionManager`` over that same store as the auth provider (the one the
    /// backend also uses), so a sign-in, switch or sign-out reaches every model request.
    static func sessionAuthProvider(_ configuration: Configuration) throws -> (any AuthProvider)? {
        guard let secureStore = configuration.secureStore else { return configuration.authProvider }
        guard let manager = configuration.authProvider as? ChatGPTSessionManager else {
            throw AgentRuntimeError(
                code: .invalidConfiguration,
                message: "a secure store needs a ChatGPTSessionManager over it as the auth provider (pass the same manager to the backend)"
            )
        }
        guard manager.sessionStore?.store.directory.standardizedFileURL == secureStore.directory.standardizedFileURL else {
            throw AgentRuntimeError(code: .invalidConfiguration, message: "the session manager keeps its session in another secure store")
        }
        return manager
    }
}
