/// Sends HTTP requests and streams their responses: the one seam between CodexKit and the network.
///
/// Implementation requirements: return once the response headers arrive, with the body still
/// streaming; never follow redirects silently to another origin; honour the request's
/// ``HTTPTimeouts``; cancelling the calling task (or the body's consumer) closes the connection;
/// transport failures throw ``CodexCore/AgentRuntimeError`` (`transport_failure`, `timed_out`) or
/// `CancellationError`.
public protocol HTTPClient: Sendable {
    /// Sends `request` and returns when the response headers have arrived.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
