import CodexCore
@testable import CodexRecovery
import CodexTestSupport
import CodexTransport
import Foundation
import Glibc
import Testing

/// ENOSPC and EIO injected at the n-th file-system call of a whole lifecycle (prepare → send →
/// acknowledge), once and persistently, for n = 1, 2, … until the lifecycle completes untouched. After
/// every fault the store is healed and the host simply tries again, as a real host would.
@Suite(.serialized, .timeLimit(.minutes(3 * Sanitizer.slowdown))) struct RecoveryFaultLoopTests {
    struct Case: Sendable, CustomStringConvertible {
        let operation: RecoveryFileOperation
        let errorNumber: Int32
        let persistent: Bool
        var description: String { "\(operation.rawValue) errno \(errorNumber)\(persistent ? " persistent" : "")" }
    }

    static let cases: [Case] = [
        Case(operation: .write, errorNumber: ENOSPC, persistent: false),
        Case(operation: .write, errorNumber: ENOSPC, persistent: true),
        Case(operation: .syncFile, errorNumber: EIO, persistent: false),
        Case(operation: .syncDirectory, errorNumber: EIO, persistent: true),
        Case(operation: .rename, errorNumber: ENOSPC, persistent: false),
        Case(operation: .open, errorNumber: EIO, persistent: false),
    ]

    @Test(arguments: cases)
    func aFaultAtEveryCallNeverDeliversWithoutAReceiptOrLosesOne(_ fault: Case) async throws {
        var faultsHit = 0
        for n in 1...400 {
            let faults = FaultInjectingFileSystem()
            let harness = try RecoveryHarness(replies: [], fallback: Streams.complete(), fileSystem: faults)
            faults.fail(fault.operation, errno: fault.errorNumber, at: n, persistent: fault.persistent)
            let callsBefore = faults.calls(fault.operation)
            var delivered: Verdict?
            var handle: AgentStructuredRecoveryHandle?
            var failedWith: (any Error)?
            do {
                let prepared = try await harness.prepare()
                handle = prepared
                delivered = try await harness.send(prepared)
                try await harness.recovery.acknowledge(prepared, store: harness.store)
            } catch {
                failedWith = error
            }
            let reachedFault = faults.calls(fault.operation) - callsBefore >= n
            faults.heal()
            guard reachedFault else {
                // The whole lifecycle ran with fewer calls than n: nothing left to break.
                #expect(failedWith == nil, "\(fault) n=\(n): \(String(describing: failedWith))")
                break
            }
            faultsHit += 1
            if let error = failedWith {
                // A fault is a typed storage error, never anything else.
                #expect((error as? AgentRecoveryError)?.isStorageFailure == true, "\(fault) n=\(n): \(error)")
            }
            // Invariants after the fault, before recovery: a delivered result has a durable receipt (or
            // was acknowledged); POSTs never exceed the attempts the store recorded.
            if let handle {
                let record = try? harness.record(handle)
                let posts = harness.generationRequests.count
                if delivered != nil, failedWith != nil {
                    let state = try? await harness.status(handle).state
                    #expect(record?.completedPayload != nil || state == .acknowledged, "\(fault) n=\(n)")
                }
                if let record {
                    #expect(posts <= record.attemptsUsed, "\(fault) n=\(n): \(posts) POSTs, \(record.attemptsUsed) attempts")
                }
                // Once storage works again the host carries on from where it was: it sends (or reopens)
                // unless it already holds the result, then acknowledges (repeatable).
                do {
                    if delivered == nil {
                        let verdict = try await harness.send(handle)
                        #expect(verdict.ok, "\(fault) n=\(n)")
                    }
                    try await harness.recovery.acknowledge(handle, store: harness.store)
                } catch {
                    Issue.record("\(fault) n=\(n): the host could not finish after healing: \(error) (first failure: \(String(describing: failedWith)))")
                    continue
                }
                #expect(try harness.record(handle) == nil)
                #expect(try await harness.status(handle).state == .acknowledged)
                #expect(harness.generationRequests.count <= 3, "\(fault) n=\(n)")
            }
        }
        // At least one fault point per record write: the record, the spent attempt, the receipt and the
        // acknowledgement marker.
        #expect(faultsHit >= 4, "\(fault): only \(faultsHit) fault points")
    }
}
