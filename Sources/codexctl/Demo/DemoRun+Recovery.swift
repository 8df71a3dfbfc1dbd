import CodexCore
import CodexRecovery
import CodexRuntime
import CodexSchema
import Foundation
import Synchronization

/// The recovery job's typed result.
struct DemoIncidentDigest: AgentStructuredOutput, Codable, Equatable {
    let headline: String
    let incidents: Int
    let severity: String

    static let responseFormat = AgentStructuredOutputFormat(
        name: "incident_digest",
        schema: .object(
            properties: ["headline": .string(), "incidents": .integer, "severity": .string(enum: ["low", "medium", "high"])],
            required: ["headline", "incidents", "severity"], additionalProperties: false
        )
    )
}

/// The host's durable job file (job → input revision, saved handle, committed result, commit count,
/// acknowledgement), written atomically. Commits are idempotent by job and revision.
final class DemoHostJobs: Sendable {
    struct Job: Codable {
        var revision: String
        var handle: AgentStructuredRecoveryHandle?
        var authorizedAttempts: [UUID] = []
        var committed: DemoIncidentDigest?
        var commitCount = 0
        var acknowledged = false
    }

    let url: URL
    private let lock = Mutex(())

    init(url: URL) { self.url = url }

    func job(_ key: String) throws -> Job? { try jobs()[key] }

    private func jobs() throws -> [String: Job] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [:] }
        return try JSONDecoder().decode([String: Job].self, from: Data(contentsOf: url))
    }

    /// One host transaction.
    func update(_ key: String, revision: String, _ change: (inout Job) -> Void) throws {
        try lock.withLock { _ in
            var all = try jobs()
            var job = all[key] ?? Job(revision: revision)
            change(&job)
            all[key] = job
            try JSONEncoder().encode(all).write(to: url, options: .atomic)
        }
    }
}

extension DemoRun {
    private static let job = "incident-digest-2026-12-01"
    private static let revision = "r1"

    /// Steps 5 and 6: a recovery job whose first attempt is cut, whose authorized replacement completes
    /// and saves a receipt; then a new runtime (as after a crash before the host's commit) gets the
    /// receipt back without a request, and the host commits and acknowledges.
    func recovery(_ server: DemoServer) async throws {
        narrator.step(5, "Structured request recovery: a frozen request, a cut stream, an authorized replacement, a saved receipt")
        let host = DemoHostJobs(url: directory.appendingPathComponent("host-jobs.json"))
        let handle = try await firstProcess(server, host)

        narrator.step(6, "The process stops before the host commits; a new one reopens the job")
        let reopened = try makeRuntime(server)
        let store = try AgentStructuredRecoveryStore(directory: recoveryDirectory)
        let requestsBefore = server.seen.recoveryRequests
        let callbacks = Mutex(0)
        guard let saved = try host.job(Self.job)?.handle, saved == handle else {
            throw AgentRecoveryError(code: .stateInvalid, message: "the host's job record lost the handle")
        }
        let digest = try await reopened.sendRecovering(saved, response: DemoIncidentDigest.self, store: store) { _ in
            callbacks.withLock { $0 += 1 }
            return true
        }
        let sent = server.seen.recoveryRequests - requestsBefore
        narrator.say("receipt_returned", "sendRecovering on the saved handle returned the saved receipt: \(sent) requests, "
            + "\(callbacks.withLock { $0 }) authorizations", ["requests": .number(JSONNumber(sent)), "authorizations": .number(JSONNumber(callbacks.withLock { $0 }))])
        var applied = false
        try host.update(Self.job, revision: Self.revision) { job in
            guard job.revision == Self.revision, job.committed == nil else { return }
            job.committed = digest
            job.commitCount += 1
            applied = true
        }
        narrator.say("committed", "the host committed it by job and revision (\(applied ? "applied" : "already committed")): \"\(digest.headline)\"",
                     ["applied": .bool(applied)])
        try await reopened.acknowledgeStructuredRecovery(saved, store: store)
        try host.update(Self.job, revision: Self.revision) { $0.acknowledged = true }
        let status = try await reopened.structuredRecoveryStatus(saved, store: store)
        let commits = try host.job(Self.job)?.commitCount ?? 0
        narrator.say("acknowledged", "acknowledged after the commit; status now \(status.availability.rawValue); host commits: \(commits)",
                     ["availability": .string(status.availability.rawValue), "commits": .number(JSONNumber(commits))])
    }

    /// The first process: prepare, save the handle with the host's job, send with per-attempt
    /// authorization; the first attempt is cut mid-stream and replaced.
    private func firstProcess(_ server: DemoServer, _ host: DemoHostJobs) async throws -> AgentStructuredRecoveryHandle {
        let runtime = try makeRuntime(server)
        let store = try AgentStructuredRecoveryStore(directory: recoveryDirectory)
        let thread = try await runtime.createThread(title: "Ops jobs")
        let handle = try await runtime.prepareStructuredRecovery(
            Request(text: DemoScript.digestPrompt, executionMode: .ephemeral), in: thread.id, response: DemoIncidentDigest.self, store: store,
            maximumAttempts: 3, retryPolicy: AgentRecoveryRetryPolicy(initialBackoff: 0.2), hostJobID: Self.job, inputRevision: Self.revision,
            contractVersion: "v1"
        )
        narrator.say("prepared", "prepared operation \(handle.operationID.uuidString.prefix(8).lowercased()): model and request frozen, "
            + "3 attempts allowed, \(server.seen.recoveryRequests) requests sent", ["operation_id": .string(handle.operationID.uuidString.lowercased())])
        try host.update(Self.job, revision: Self.revision) { $0.handle = handle }
        narrator.say("handle_saved", "the host saved the handle with its job before sending")

        let narrator = self.narrator
        let digest = try await runtime.sendRecovering(handle, response: DemoIncidentDigest.self, store: store) { attempt in
            if attempt.reason == .replacement {
                narrator.say("cut", "attempt \(attempt.number - 1) was cut mid-stream (connection reset before response.completed)")
            }
            try host.update(Self.job, revision: Self.revision) { $0.authorizedAttempts.append(attempt.id) }
            narrator.say("authorized", "the host authorized attempt \(attempt.number) (\(attempt.reason.rawValue))",
                         ["attempt": .number(JSONNumber(attempt.number)), "reason": .string(attempt.reason.rawValue)])
            return true
        }
        let status = try await runtime.structuredRecoveryStatus(handle, store: store)
        narrator.say(
            "receipt_saved", "validated and saved: \"\(digest.headline)\" (\(digest.incidents) incidents, \(digest.severity)); "
                + "\(status.attemptsUsed) of \(status.maximumAttempts) attempts used; status \(status.availability.rawValue)",
            ["attempts_used": .number(JSONNumber(status.attemptsUsed)), "availability": .string(status.availability.rawValue)]
        )
        return handle
    }
}
