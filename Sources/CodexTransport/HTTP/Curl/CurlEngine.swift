private import CCurl
import CodexCore
import Foundation
import Synchronization

/// One libcurl multi handle and the thread that drives it. Every libcurl call on the multi handle and
/// on the easy handles added to it happens on that thread: other threads only queue commands (start a
/// transfer, resume a paused one, stop one) and wake the thread with `curl_multi_wakeup`. The thread
/// blocks in `curl_multi_poll`, never on Swift's cooperative pool.
///
/// The multi handle keeps the connection cache, so keep-alive connections (and HTTP/2 connections,
/// multiplexed) are reused by later transfers of the same client. A transfer stopped before its end
/// is removed from the multi handle, which closes its HTTP/1 connection (it is never handed to a later
/// request) or resets its HTTP/2 stream.
final class CurlEngine: @unchecked Sendable {
    // @unchecked: `multi`, `active` and `releases` are touched only on the engine thread; `commands` is a Mutex.

    enum Command {
        case start(CurlTransfer)
        case resume(CurlTransfer)
        case stop(CurlTransfer, any Error)
        case shutdown
    }

    private struct Queue {
        var commands: [Command] = []
        var stopping = false
    }

    private let multi: UnsafeMutableRawPointer
    private let queue = Mutex(Queue())
    /// Transfers added to the multi handle, by easy handle (engine thread only).
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// Transfers whose waiting consumer gets its bytes once the current pass ends (engine thread only).
    private var releases: [CurlTransfer] = []

    /// Initialises libcurl once per process (thread-safe in the libcurl versions this links against).
    private static let globalInit: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

    /// Whether libcurl is initialised (it is, once, on first use): for an easy handle used on its own.
    static var isReady: Bool { globalInit }

    /// Creates the multi handle and starts its thread.
    /// - Throws: ``CodexCore/AgentRuntimeError`` `transport_failure` when libcurl cannot be set up.
    init(maximumConnections: Int) throws {
        guard Self.globalInit, let multi = curl_multi_init() else {
            throw AgentRuntimeError(.clientSetup("libcurl could not be initialised"))
        }
        self.multi = multi
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(1, maximumConnections))
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        let thread = Thread { [self] in run() }
        thread.name = "codexkit.curl"
        thread.start()
    }

    /// Queues a command for the engine thread and wakes it.
    func submit(_ command: Command) {
        queue.withLock { $0.commands.append(command) }
        curl_multi_wakeup(multi)
    }

    // MARK: - The engine thread

    /// Asks for `transfer`'s waiting consumer to be handed its bytes once the current pass ends (from a
    /// transfer's callback, so on the engine thread). One wake-up per pass, not one per chunk.
    func releaseAfterPass(_ transfer: CurlTransfer) {
        releases.append(transfer)
    }

    private func releaseHeld() {
        guard !releases.isEmpty else { return }
        for transfer in releases { transfer.body.release() }
        releases.removeAll(keepingCapacity: true)
    }

    private func run() {
        var running: Int32 = 0
        while true {
            let (commands, stopping) = queue.withLock { state -> ([Command], Bool) in
                defer { state.commands.removeAll(keepingCapacity: true) }
                for command in state.commands { if case .shutdown = command { state.stopping = true } }
                return (state.commands, state.stopping)
            }
            for command in commands { apply(command) }
            // A resumed transfer hands libcurl's held chunk to its callback at once.
            releaseHeld()
            if stopping, active.isEmpty { break }
            _ = curl_multi_perform(multi, &running)
            releaseHeld()
            readCompletions()
            var timeout: Int = -1
            _ = curl_multi_timeout(multi, &timeout)
            let wait = Int32(timeout < 0 ? 1000 : min(timeout, 1000))
            if wait > 0 { _ = curl_multi_poll(multi, nil, 0, wait, nil) }
        }
        curl_multi_cleanup(multi)
    }

    private func apply(_ command: Command) {
        switch command {
        case .start(let transfer):
            guard let easy = transfer.easy else { return }
            if curl_multi_add_handle(multi, easy) == CURLM_OK {
                active[easy] = transfer
            } else {
                transfer.completed(with: AgentRuntimeError(.clientSetup("the request could not be started")))
            }
        case .resume(let transfer):
            guard let easy = transfer.easy, active[easy] != nil else { return }
            transfer.willResume()
            _ = curl_easy_pause(easy, ccurl_pause_continue())
        case .stop(let transfer, let error):
            guard let easy = transfer.easy, active.removeValue(forKey: easy) != nil else { return }
            curl_multi_remove_handle(multi, easy)
            transfer.completed(with: error)
        case .shutdown:
            break
        }
    }

    private func readCompletions() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let result = message.pointee.data.result
            guard let transfer = active.removeValue(forKey: easy) else { continue }
            curl_multi_remove_handle(multi, easy)
            transfer.completed(with: result == CURLE_OK ? nil : transfer.failure(curlCode: result.rawValue))
        }
    }
}
