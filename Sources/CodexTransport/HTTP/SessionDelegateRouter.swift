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

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let handler = handlers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        handler?.urlSession(session, task: task, didCompleteWithError: error)
    }
}
