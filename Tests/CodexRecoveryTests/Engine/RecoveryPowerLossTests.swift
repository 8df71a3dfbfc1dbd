import CodexCore
@testable import CodexRecovery
import CodexTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

/// Simulated power loss: a whole lifecycle runs on `PowerLossFileSystem`, then for every file-system
/// call and three ways the disk could have been left (only what was fsynced; directory operations
/// ahead of unsynced data; everything the process wrote) the disk is rebuilt and a real store is opened
/// over it.
@Suite(.timeLimit(.minutes(6 * Sanitizer.slowdown))) struct RecoveryPowerLossTests {
    /// The plain lifecycle, and one suspended between `prepare` and `sendRecovering` (the only lifecycle
    /// that writes the control record: `suspended`, then `active` again when the run starts).
    @Test(arguments: [false, true])
    func everyPrefixOfALifecycleRecoversToAStateTheAPIPromised(suspendedFirst: Bool) async throws {
        let scratchTop = try ScratchDirectory()
        let top = scratchTop.url.appendingPathComponent("disk")
        try FileManager.default.createDirectory(at: top, withIntermediateDirectories: true)
        let topPath = top.standardizedFileURL.path
        let fileSystem = PowerLossFileSystem(top: topPath)
        // When the host was asked about an attempt, and when the server received a generation request,
        // counted in file-system calls made before it: a power loss from then on must find that attempt
        // on disk (its ID pending or spent), and every request sent counted as a spent attempt.
        let outside = Mutex<(authorized: [(calls: Int, id: UUID)], requests: [Int])>(([], []))
        let harness = try RecoveryHarness(
            replies: [], fallback: Streams.complete(), fileSystem: fileSystem, storeDirectory: top.appendingPathComponent("store"),
            onRequest: { outside.withLock { $0.requests.append(fileSystem.step) } }
        )
        let log = AuthorizationLog(onAuthorize: { attempt in outside.withLock { $0.authorized.append((fileSystem.step, attempt.id)) } })
        let handle = try await harness.prepare()
        let prepared = fileSystem.step
        if suspendedFirst { try await harness.recovery.suspend(handle, store: harness.store) }
        let suspended = suspendedFirst ? fileSystem.step : nil
        _ = try await harness.send(handle, log)
        let completed = fileSystem.step
        try await harness.recovery.acknowledge(handle, store: harness.store)
        let acknowledged = fileSystem.step
        let history = fileSystem.history
        let id = handle.operationID
        let (authorized, requests) = outside.withLock { ($0.authorized, $0.requests) }

        let violations = try await runOffCooperativePool { () -> [String] in
            var violations: [String] = []
            var lastAttempts = 0
            for (index, image) in history.enumerated() {
                let calls = index + 1
                for variant in PowerLossFileSystem.Variant.allCases {
                    let where_ = "after call \(calls) (\(image.step)), \(variant.rawValue)"
                    let disk = scratchTop.url.appendingPathComponent("replay-\(index)-\(variant.rawValue)")
                    try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: true)
                    defer { try? FileManager.default.removeItem(at: disk) }
                    try PowerLossFileSystem.materialize(image, variant: variant, top: topPath, into: disk.path)
                    let storeURL = disk.appendingPathComponent("store")
                    guard FileManager.default.fileExists(atPath: storeURL.path) else {
                        if calls >= prepared { violations.append("\(where_): the store is gone after prepare returned") }
                        continue
                    }
                    let store: AgentStructuredRecoveryStore
                    do {
                        store = try AgentStructuredRecoveryStore(directory: storeURL)
                    } catch {
                        violations.append("\(where_): the store does not open: \(error)")
                        continue
                    }
                    var record: RecoveryOperationRecord?
                    var disposition: RecoveryDispositionRecord?
                    var control: RecoveryControlRecord?
                    do {
                        let partition = try store.locate(id)
                        record = try partition?.load(RecoveryOperationRecord.self, id)
                        disposition = try partition?.load(RecoveryDispositionRecord.self, id)
                        control = try partition?.load(RecoveryControlRecord.self, id)
                    } catch {
                        // Failing closed is allowed only where the API had promised nothing yet.
                        if calls >= prepared { violations.append("\(where_): \(error)") }
                        continue
                    }
                    if calls >= prepared, record == nil, disposition == nil {
                        violations.append("\(where_): the prepared operation is missing")
                    }
                    if calls >= completed, record?.completedPayload == nil, disposition?.state != .acknowledged {
                        violations.append("\(where_): the delivered result has no receipt")
                    }
                    if calls >= acknowledged, disposition?.state != .acknowledged {
                        violations.append("\(where_): the acknowledgement is missing")
                    }
                    // Once the suspension was acknowledged, a power loss never forgets it before the run that
                    // clears it: the command on disk says so until the run writes `active`.
                    if let suspended, calls >= suspended, (authorized.first.map { calls < $0.calls } ?? true) {
                        if control?.command != .suspended, control?.command != .active {
                            violations.append("\(where_): the suspension is not on disk")
                        }
                    }
                    if disposition == nil {
                        for asked in authorized where calls >= asked.calls {
                            if record?.pendingAttemptID != asked.id, record?.attempts.contains(where: { $0.id == asked.id }) != true {
                                violations.append("\(where_): the attempt the host was asked about is not on disk")
                            }
                        }
                        let sent = requests.filter { calls >= $0 }.count
                        if sent > 0, (record?.attemptsUsed ?? 0) < sent {
                            violations.append("\(where_): \(sent) requests sent, \(record?.attemptsUsed ?? 0) attempts spent on disk")
                        }
                    }
                    if let record {
                        if record.completedPayload != nil, record.attempts.last?.state != .completed {
                            violations.append("\(where_): a receipt without its completed attempt")
                        }
                        if variant == .durable {
                            if record.attemptsUsed < lastAttempts { violations.append("\(where_): attempts went back to \(record.attemptsUsed)") }
                            lastAttempts = max(lastAttempts, record.attemptsUsed)
                        }
                    }
                }
            }
            return violations
        }
        // What the lifecycle changes on disk, in calls: 3 directories, 4 record writes (the record with
        // its first attempt's ID, the spent attempt with the next one's ID, the receipt, the
        // acknowledgement marker), 12 fsyncs, 4 renames, 1 unlink. Opens are left out of the count: while
        // the request is out, the run polls the control record, and when one exists (after a suspension)
        // each poll opens it, as many times as the exchange takes polls.
        let changes = history.filter { !$0.step.hasPrefix("open ") }.count
        #expect(changes == (suspendedFirst ? 24 + Self.suspensionChanges : 24), "\(changes)")
        #expect(authorized.count == 1 && requests.count == 1 && prepared < authorized[0].calls && authorized[0].calls <= requests[0])
        #expect(prepared > 0 && prepared < completed && completed < acknowledged && acknowledged == history.count)
        #expect(suspended.map { prepared < $0 && $0 < authorized[0].calls } ?? true)
        #expect(violations.isEmpty, "\(violations.prefix(5))")
    }

    /// What a suspension before the run adds on disk: the `suspended` command and the suspended record,
    /// then the run's `active` command and its reopened record; four atomic replacements, each a write, a
    /// file fsync, a rename and a directory fsync.
    static let suspensionChanges = 16
}
