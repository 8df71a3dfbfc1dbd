import CodexTestSupport
import Foundation
import Testing

/// The one platform crash the child-process transport tests run again: a segfault whose crashed thread
/// stopped in libdispatch's event loop (FoundationNetworking's socket sources). Everything else, and a
/// crash that keeps coming back, still fails the test that saw it.
@Suite struct FoundationNetworkingCrashTests {
    /// The head of a real crash report (`TransportFixture alternating --client urlsession`, 2026-12-03).
    static let crashReport = """

        *** Signal 11: Backtracing from 0x7f6ae440e9ca... done ***

        *** Program crashed: Bad pointer dereference at 0xffff80951bc6aa38 ***

        Platform: x86_64 Linux (Debian GNU/Linux 12 (bookworm))

        Thread 0 "TransportFixtur":

          0      0x00007f6ae2fa1301 sigsuspend + 65 in libc.so.6
          1 [ra] 0x00007f6ae4404c29 _dispatch_sig_thread + 8 in libdispatch.so
        ...

        Thread 2 "-qos.overcommit" crashed:

          0      0x00007f6ae440e9ca _dispatch_event_loop_drain + 1130 in libdispatch.so
          1 [ra] 0x00007f6ae4403ff2 _dispatch_mgr_invoke + 129 in libdispatch.so
          2 [ra] 0x00007f6ae4403f5d _dispatch_mgr_thread + 108 in libdispatch.so
        ...

        """

    @Test func theDispatchEventLoopCrashIsRecognised() {
        #expect(ChildProcess.Outcome(status: SIGSEGV, killed: true, stdout: "", stderr: Self.crashReport).isFoundationNetworkingDispatchSourceCrash)
    }

    @Test func anythingElseIsNot() {
        let ours = Self.crashReport.replacingOccurrences(
            of: "0x00007f6ae440e9ca _dispatch_event_loop_drain + 1130 in libdispatch.so",
            with: "0x000055e504e20cfd LoopbackSocket.acceptConnection() + 92 in TransportFixture"
        )
        let lowerFrame = Self.crashReport.replacingOccurrences(of: "_dispatch_event_loop_drain + 1130", with: "_dispatch_mgr_invoke + 7")
        let cases: [ChildProcess.Outcome] = [
            .init(status: SIGSEGV, killed: true, stdout: "", stderr: ours),
            .init(status: SIGSEGV, killed: true, stdout: "", stderr: lowerFrame),
            .init(status: SIGABRT, killed: true, stdout: "", stderr: Self.crashReport),
            .init(status: SIGSEGV, killed: false, stdout: "", stderr: Self.crashReport),
            .init(status: 1, killed: false, stdout: "", stderr: "transport_failure"),
            .init(status: SIGSEGV, killed: true, stdout: "", stderr: "Thread 2 crashed:"),
        ]
        for outcome in cases { #expect(!outcome.isFoundationNetworkingDispatchSourceCrash, "\(outcome.stderr.prefix(400))") }
    }

    @Test func aChildThatFailsOtherwiseRunsOnce() async throws {
        let started = Starts()
        let outcome = try await ChildProcess.runSurvivingFoundationNetworkingCrash(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "echo ran; exit 3"], started: { _ in await started.count() }
        )
        #expect(outcome.status == 3)
        #expect(outcome.stdout == "ran\n")
        #expect(await started.value == 1)
    }

    @Test func aChildThatKeepsCrashingSoFailsAfterItsAttempts() async throws {
        // A real child that dies from SIGSEGV with the crash report on its standard error, every time.
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("crash-report-\(UUID().uuidString)")
        try Data(Self.crashReport.utf8).write(to: report)
        defer { try? FileManager.default.removeItem(at: report) }
        let started = Starts()
        let outcome = try await ChildProcess.runSurvivingFoundationNetworkingCrash(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "cat '\(report.path)' >&2; kill -SEGV $$"], attempts: 3, started: { _ in await started.count() }
        )
        #expect(outcome.killed)
        #expect(outcome.status == SIGSEGV)
        #expect(outcome.isFoundationNetworkingDispatchSourceCrash)
        #expect(await started.value == 3)
    }
}

/// How many children were started.
private actor Starts {
    var value = 0
    func count() { value += 1 }
}
