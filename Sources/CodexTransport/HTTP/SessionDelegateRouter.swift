import CodexCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The delegate of a ``URLSessionHTTPClient``'s one long-lived session: forwards each task's callbacks
/// to the handler registered for that task (its own buffer, limits, timeouts and spill file), and
/// forgets the handler when the task completes. Redirects are never followed.
final class SessionDelegateRouter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: the only state is `handlers`, a Mutex.
    private let handlers = Mutex<[Int: StreamingTaskDelegate]>([:])

    /// Routes `task`'s callbacks to `handler` until it completes.
    func register(_ handler: StreamingTaskDelegate, for task: URLSessionTask) {
        handlers.withLock { $0[task.taskIdentifier] = handler }
    }

    private func handler(_ task: URLSessionTask) -> StreamingTaskDelegate? {
        handlers.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64
    ) {
        handler(task)?.urlSession(
            session, task: task, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent, totalBytesExpectedToSend: totalBytesExpectedToSend
        )
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let handler = handler(dataTask) else { return completionHandler(.cancel) }
        handler.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        handler(dataTask)?.urlSession(session, dataTask: dataTask, didReceive: data)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    /// Asked for when a kept-alive connection turns out dead before any reply and the request is to go
    /// out again on a new connection. FoundationNetworking can only rewind a stream body (a data body
    /// would stop the process, and an unanswered request waits for its first-byte timeout), so there the
    /// transfer fails at once with `transport_failure`, which the Responses client retries as any
    /// failure before output. Elsewhere the body is given again from its start.
    func urlSession(_ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping (InputStream?) -> Void) {
        #if canImport(FoundationNetworking)
        completionHandler(nil)
        guard let handler = handler(task) else { return }
        // Not from inside this callback: it runs within libcurl's seek, where cancelling the task traps.
        DispatchQueue.global().async {
            handler.fail(AgentRuntimeError(.cannotResendBody))
        }
        #else
        completionHandler(task.originalRequest?.httpBody.map { InputStream(data: $0) })
        #endif
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let handler = handlers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        handler?.urlSession(session, task: task, didCompleteWithError: error)
    }
}
