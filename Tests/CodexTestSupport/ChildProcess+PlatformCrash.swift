public import Foundation

extension ChildProcess.Outcome {
    /// Whether the child died from a segmentation fault whose crashed thread stopped in libdispatch's
    /// event loop (`_dispatch_event_loop_drain`, on the dispatch manager thread).
    ///
    /// That is FoundationNetworking's crash, not ours: its `URLSession` watches libcurl's sockets with
    /// dispatch sources, and tearing one down while its socket closes races inside the platform
    /// (swift-corelibs-foundation issue 4791 and its family). Nothing in CodexKit creates a dispatch
    /// source. Measured on the 2-core machine: 1 crash in 1,362 runs of 250 connection resets each.
    public var isFoundationNetworkingDispatchSourceCrash: Bool {
        guard killed, status == SIGSEGV else { return false }
        let lines = stderr.split(separator: "\n", omittingEmptySubsequences: true)
        guard let crashed = lines.firstIndex(where: { $0.hasPrefix("Thread ") && $0.hasSuffix(" crashed:") }),
            crashed + 1 < lines.count
        else { return false }
        let topFrame = lines[crashed + 1]
        return topFrame.contains(" _dispatch_event_loop_drain ") && topFrame.contains("libdispatch.so")
    }
}

extension ChildProcess {
    /// Runs a child that drives FoundationNetworking's `URLSession` and runs it again, up to `attempts`
    /// times in all, only while it dies from the platform crash `isFoundationNetworkingDispatchSourceCrash`
    /// describes. Any other ending, a failure of ours included, is returned at once; so is the last crash,
    /// so a crash every time still fails the test. Each rerun is written to standard error; `started` gets
    /// the process ID of every attempt.
    public static func runSurvivingFoundationNetworkingCrash(
        _ executable: URL, _ arguments: [String], attempts: Int = 3, started: @Sendable (Int32) async -> Void = { _ in }
    ) async throws -> Outcome {
        var attempt = 1
        while true {
            let outcome = try await run(executable, arguments, started: started)
            guard outcome.isFoundationNetworkingDispatchSourceCrash, attempt < attempts else { return outcome }
            FileHandle.standardError.write(
                Data("\(([executable.lastPathComponent] + arguments).joined(separator: " ")): crashed inside libdispatch's event loop (FoundationNetworking's socket sources); running it again (attempt \(attempt + 1) of \(attempts))\n".utf8)
            )
            attempt += 1
        }
    }
}
