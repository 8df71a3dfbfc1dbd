@testable import CodexRecovery
import Foundation
import Testing

/// The operation lifecycle as one table: every state against every transition, allowed or refused,
/// written out here independently of the code.
@Suite struct RecoveryTransitionTests {
    typealias State = RecoveryOperationRecord.State
    typealias Transition = RecoveryOperationRecord.Transition

    /// `expected[transition][state]`: the state reached, or nil when refused.
    static let expected: [Transition: [State: State?]] = [
        .reopen: [.prepared: nil, .running: .interrupted, .interrupted: nil, .completed: nil, .failed: nil, .cancelled: nil, .suspended: .interrupted],
        .startAttempt: [.prepared: .running, .running: nil, .interrupted: .running, .completed: nil, .failed: nil, .cancelled: nil, .suspended: nil],
        .interrupt: [
            .prepared: .interrupted, .running: .interrupted, .interrupted: .interrupted, .completed: nil, .failed: nil, .cancelled: nil, .suspended: nil,
        ],
        .fail: [.prepared: nil, .running: .failed, .interrupted: nil, .completed: nil, .failed: nil, .cancelled: nil, .suspended: nil],
        .complete: [.prepared: nil, .running: .completed, .interrupted: nil, .completed: nil, .failed: nil, .cancelled: nil, .suspended: nil],
        .suspend: [
            .prepared: .suspended, .running: .suspended, .interrupted: .suspended, .completed: nil, .failed: nil, .cancelled: nil, .suspended: nil,
        ],
        .cancel: [
            .prepared: .cancelled, .running: .cancelled, .interrupted: .cancelled, .completed: .cancelled, .failed: .cancelled,
            .cancelled: .cancelled, .suspended: .cancelled,
        ],
    ]

    static let allStates: [State] = [.prepared, .running, .interrupted, .completed, .failed, .cancelled, .suspended]

    @Test func everyStateAndTransitionFollowsTheTable() {
        #expect(Set(Self.expected.keys) == Set(Transition.allCases))
        var checked = 0
        for transition in Transition.allCases {
            for state in Self.allStates {
                let row = Self.expected[transition] ?? [:]
                #expect(row.keys.contains(state), "the table lists \(state) for \(transition)")
                let want = row[state] ?? nil
                #expect(RecoveryOperationRecord.state(after: transition, from: state) == want, "\(transition) from \(state)")
                checked += 1
            }
        }
        #expect(checked == 49)
    }

    @Test func applyingARefusedTransitionIsStateInvalidAndChangesNothing() throws {
        for transition in Transition.allCases {
            for state in Self.allStates {
                var record = RecoveryTestRecords.operation(state: state)
                let before = record
                let want = Self.expected[transition]?[state] ?? nil
                if let want {
                    try record.apply(transition)
                    #expect(record.state == want)
                } else {
                    let error = #expect(throws: AgentRecoveryError.self) { try record.apply(transition) }
                    #expect(error?.code == .stateInvalid)
                    #expect(error?.message == "an operation that is \(state.rawValue) cannot \(transition.rawValue)")
                    #expect(record == before)
                }
            }
        }
    }
}

/// An attempt's lifecycle as one table, like the operation's: every state against every transition.
@Suite struct RecoveryAttemptTransitionTests {
    typealias State = RecoveryOperationRecord.Attempt.State
    typealias Transition = RecoveryOperationRecord.Attempt.Transition

    static let expected: [Transition: [State: State?]] = [
        .authorize: [.reserved: .transmissionAuthorized, .transmissionAuthorized: nil, .failed: nil, .completed: nil],
        .fail: [.reserved: .failed, .transmissionAuthorized: .failed, .failed: .failed, .completed: nil],
        .complete: [.reserved: nil, .transmissionAuthorized: .completed, .failed: nil, .completed: nil],
    ]

    static let allStates: [State] = [.reserved, .transmissionAuthorized, .failed, .completed]

    @Test func everyStateAndTransitionFollowsTheTable() throws {
        #expect(Set(Self.expected.keys) == Set(Transition.allCases))
        let operationID = UUID()
        var checked = 0
        for transition in Transition.allCases {
            for state in Self.allStates {
                let row = Self.expected[transition] ?? [:]
                #expect(row.keys.contains(state), "the table lists \(state) for \(transition)")
                let want = row[state] ?? nil
                #expect(RecoveryOperationRecord.Attempt.state(after: transition, from: state) == want, "\(transition) from \(state)")
                var attempt = RecoveryOperationRecord.Attempt(id: UUID(), number: 1, reason: "initial", reservedAt: Date(timeIntervalSince1970: 0), state: state)
                let before = attempt
                if let want {
                    try attempt.apply(transition, operationID: operationID)
                    #expect(attempt.state == want)
                } else {
                    let error = #expect(throws: AgentRecoveryError.self) { try attempt.apply(transition, operationID: operationID) }
                    #expect(error?.code == .stateInvalid)
                    #expect(error?.message == "an attempt that is \(state.rawValue) cannot \(transition.rawValue)")
                    #expect(attempt == before)
                }
                checked += 1
            }
        }
        #expect(checked == 12)
    }
}
