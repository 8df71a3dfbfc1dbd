public import CodexCore
import CodexRecovery

/// The SDK-owned way a backend takes part in structured recovery: the recovery engine with the
/// backend's endpoint, HTTP client and credentials, plus the backend's request settings. Only
/// ``CodexResponsesBackend`` can make one (there is no public initializer), so a wrapper backend can
/// delegate it (``AgentBackendStructuredRecoverySupporting``) but cannot bypass its gates: endpoint
/// checks, the account binding, fresh authentication, per-attempt authorization and the tool-free body.
public final class AgentStructuredRecoveryAdapter: Sendable {
    let recovery: AgentStructuredRecovery
    let enableReasoningSummaries: Bool
    let baseInstructions: String?

    init(recovery: AgentStructuredRecovery, enableReasoningSummaries: Bool, baseInstructions: String?) {
        self.recovery = recovery
        self.enableReasoningSummaries = enableReasoningSummaries
        self.baseInstructions = baseInstructions
    }
}

/// A backend whose structured requests can be recovered (``CodexResponsesBackend``, or a wrapper that
/// returns the wrapped backend's adapter). Any other backend is not recoverable:
/// ``AgentRuntime/prepareStructuredRecovery(_:in:response:store:maximumAttempts:expiresAt:retryPolicy:scope:hostJobID:inputRevision:contractVersion:previousOperationID:)``
/// fails with `structured_recovery_unsupported` and nothing is saved or sent.
public protocol AgentBackendStructuredRecoverySupporting: AgentBackend {
    /// The adapter recovery runs through.
    var structuredRecoveryAdapter: AgentStructuredRecoveryAdapter { get }
}
