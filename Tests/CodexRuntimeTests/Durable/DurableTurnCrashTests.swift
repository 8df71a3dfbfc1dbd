import CodexCore
import CodexRuntime
import CodexStorageSQLite
import CodexTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

/// The durable-turn proof with real processes: a host runs a turn with three tools (idempotent,
/// side-effecting, approval-gated) against the loopback server and is killed with SIGKILL at each
/// journal boundary, and mid-stream in each model request; new processes resume it (the approval is
/// answered by `codexctl approvals approve`) until it completes. After every kill the charge's effect
/// happens exactly once, no finished result is run again, the tool outputs reach the model in its call
/// order, the answer is committed once, and the history is the uninterrupted one.
@Suite(.serialized, .timeLimit(.minutes(10 * Sanitizer.slowdown))) struct DurableTurnCrashTests {
    static let fixture = ChildProcess.product("RuntimeFixture")
    static let codexctl = ChildProcess.product("codexctl")

    /// How a scenario stops its first host.
    enum Stop: Sendable, Equatable {
        /// SIGKILL right after journal entry `sequence` is durable.
        case boundary(Int)
        /// SIGKILL while the model request of `pass` streams (the server holds the response).
        case midStream(pass: Int)
        /// SIGKILL inside the charge, after its effect and before its result is recorded.
        case inCharge
    }

    /// What a scenario ended with.
    struct Outcome {
        var history: [String] = []
        var runs: [String: Int] = [:]
        var effects = 0
        var authorizations = 0
        var outputOrder: [String] = []
        var committedEntries = 0
        var killed = false
        var processes = 0
        var failures: [String] = []
    }

    /// Serves the script; for `.midStream`, the first request of that pass gets half a response and is
    /// held until the host is killed.
    final class Model: Sendable {
        let holdPass: Int?
        private let held = Mutex(false)
        init(holdPass: Int?) { self.holdPass = holdPass }

        func reply(_ request: RecordedRequest) -> ScriptedReply {
            let pass = DurableTurnScript.carriesOutputs(request.body) ? 2 : 1
            if pass == holdPass, held.withLock({ held in defer { held = true }; return !held }) {
                let stream = pass == 1 ? DurableTurnScript.toolCalls() : DurableTurnScript.finalAnswer()
                let half = String(stream.prefix(stream.count / 2))
                return ScriptedReply(headers: [.init(name: "Content-Type", value: "text/event-stream")], parts: [.bytes(Array(half.utf8)), .hold], framing: .chunked)
            }
            return DurableTurnScript.reply(request)
        }
    }

    static func run(_ stop: Stop, unfinished: String = "run_again") async throws -> Outcome {
        let directory = try temporaryDirectory("durable-crash")
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let holdPass: Int? = if case .midStream(let pass) = stop { pass } else { nil }
        let model = Model(holdPass: holdPass)
        let server = try LoopbackHTTPServer(handler: { request in model.reply(request) })
        defer {
            server.releaseHeld()
            server.shutdown()
        }
        let thread = AgentThreadID()
        let base = [
            "durable", "--db", path("state.sqlite"), "--server", server.baseURL.appendingPathComponent("v1").absoluteString, "--thread", thread.rawValue,
            "--runs", path("runs"), "--effects", path("effects"), "--authorizations", path("authorizations"), "--unfinished", unfinished,
        ]
        var outcome = Outcome()
        var resume = false
        // The second request comes only after the approval was answered: only that host is killed mid-stream.
        var answered = false
        while outcome.processes < 8 {
            if resume, let turn = try await SQLiteRuntimeStateStore(readingAt: path("state.sqlite")).latestTurn(of: thread), turn.status == .completed { break }
            var arguments = base + (resume ? ["--resume"] : [])
            if !outcome.killed {
                switch stop {
                case .boundary(let sequence): arguments += ["--kill-at", String(sequence)]
                case .inCharge: arguments += ["--kill-in-charge"]
                case .midStream: break
                }
            }
            outcome.processes += 1
            let killsMidStream = !outcome.killed && (holdPass == 1 || (holdPass == 2 && answered))
            let result = try await ChildProcess.run(Self.fixture, arguments) { pid in
                guard killsMidStream else { return }
                // Killed once the held request arrived (the server records it before answering).
                let wanted = holdPass == 1 ? 1 : 2
                _ = await server.waitForRequests(count: wanted, timeout: .hangGuard)
                kill(pid, SIGKILL)
            }
            if result.killed {
                outcome.killed = true
                resume = true
                continue
            }
            switch result.status {
            case 0:
                resume = true
                if try await SQLiteRuntimeStateStore(readingAt: path("state.sqlite")).latestTurn(of: thread)?.status == .completed { break }
                continue
            case 3:
                // Parked at the refund's approval: another process answers it.
                let pending = try await SQLiteRuntimeStateStore(readingAt: path("state.sqlite")).approvals(in: thread).filter(\.isPending)
                guard let approval = pending.first else {
                    outcome.failures.append("parked with no pending approval")
                    return outcome
                }
                let approved = try await ChildProcess.run(Self.codexctl, ["approvals", "approve", approval.id.rawValue, "--db", path("state.sqlite")])
                if approved.status != 0 { outcome.failures.append("approve: \(approved.stderr)") }
                answered = true
                resume = true
                continue
            default:
                outcome.failures.append("host \(outcome.processes) exited \(result.status): \(result.stderr)")
                return outcome
            }
            break
        }
        let store = try SQLiteRuntimeStateStore(readingAt: path("state.sqlite"))
        let turn = try await store.latestTurn(of: thread)
        if turn?.status != .completed { outcome.failures.append("the turn is \(turn?.status.rawValue ?? "missing") after \(outcome.processes) hosts") }
        let items = try await DurableTurnTests.history(store, thread)
        do { try AgentHistoryReplay.validate(items) } catch { outcome.failures.append("the history does not replay: \(error)") }
        outcome.history = DurableTurnTests.describe(items)
        for line in try String(contentsOfFile: path("runs"), encoding: .utf8).split(separator: "\n") {
            outcome.runs[String(line.split(separator: " ")[0]), default: 0] += 1
        }
        outcome.effects = ((try? String(contentsOfFile: path("effects"), encoding: .utf8)) ?? "").split(separator: "\n").count
        outcome.authorizations = ((try? String(contentsOfFile: path("authorizations"), encoding: .utf8)) ?? "").split(separator: "\n").count
        outcome.outputOrder = server.requests.last(where: { DurableTurnScript.carriesOutputs($0.body) }).map { DurableTurnScript.outputOrder($0.body) } ?? []
        if let turn { outcome.committedEntries = try await store.journal(of: turn.id).filter { $0 == .committed }.count }
        return outcome
    }

    /// The journal of the uninterrupted turn has 13 entries (0…12): begin, request 1, the batch, the
    /// lookup's and the charge's start and result, the refund's approval asked and answered (the turn
    /// parks in between), its start and result, request 2, commit.
    @Test(arguments: Array(0...12))
    func aHostKilledAtEachJournalBoundaryIsResumedToTheSameOutcome(_ sequence: Int) async throws {
        let outcome = try await Self.run(.boundary(sequence))
        #expect(outcome.failures.isEmpty, "\(outcome.failures)")
        #expect(outcome.killed, "the host was killed after entry \(sequence)")
        #expect(outcome.history == DurableTurnTests.uninterrupted, "after entry \(sequence)")
        #expect(outcome.effects == 1, "the charge's effect, once")
        #expect(outcome.runs == ["lookup_order": 1, "charge_card": 1, "refund_order": 1], "no finished result was computed again: \(outcome.runs)")
        #expect(outcome.outputOrder == DurableTurnScript.callIDs)
        #expect(outcome.committedEntries <= 1)
        // A request that may have been sent (its entry is durable, its answer is not) is sent again only
        // as an attempt the host authorized: after entries 1 (request 1) and 11 (request 2).
        #expect(outcome.authorizations == ([1, 11].contains(sequence) ? 1 : 0), "after entry \(sequence)")
    }

    @Test(arguments: [1, 2])
    func aHostKilledMidStreamIsResumedWithAnAuthorizedNewAttempt(_ pass: Int) async throws {
        let outcome = try await Self.run(.midStream(pass: pass))
        #expect(outcome.failures.isEmpty, "\(outcome.failures)")
        #expect(outcome.killed)
        #expect(outcome.history == DurableTurnTests.uninterrupted, "the partial response left nothing behind")
        #expect(outcome.effects == 1)
        #expect(outcome.runs == ["lookup_order": 1, "charge_card": 1, "refund_order": 1])
        #expect(outcome.authorizations == 1)
        #expect(outcome.outputOrder == DurableTurnScript.callIDs)
    }

    @Test func aChargeCutShortAfterItsEffectRunsAgainWithTheSameKeyAndTakesEffectOnce() async throws {
        let outcome = try await Self.run(.inCharge)
        #expect(outcome.failures.isEmpty, "\(outcome.failures)")
        #expect(outcome.runs["charge_card"] == 2, "run again, with the same key")
        #expect(outcome.effects == 1, "the key made the second run a no-op")
        #expect(outcome.history == DurableTurnTests.uninterrupted)
    }

    @Test func aChargeCutShortIsReportedAsAnUnknownOutcomeWhenThePolicySaysSo() async throws {
        let outcome = try await Self.run(.inCharge, unfinished: "report_unknown_outcome")
        #expect(outcome.failures.isEmpty, "\(outcome.failures)")
        #expect(outcome.runs["charge_card"] == 1, "not run again")
        #expect(outcome.effects == 1)
        let unknown = outcome.history.first { $0.hasPrefix("result call_charge") }
        #expect(unknown?.hasPrefix("result call_charge failure The outcome of this call is unknown") == true, "\(unknown ?? "-")")
    }

    @Test func twoHostsRacingToResumeOneTurnEndWithExactlyOneOwner() async throws {
        let directory = try temporaryDirectory("durable-race")
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let server = try LoopbackHTTPServer(handler: DurableTurnScript.reply)
        defer { server.shutdown() }
        let thread = AgentThreadID()
        let base = [
            "durable", "--db", path("state.sqlite"), "--server", server.baseURL.appendingPathComponent("v1").absoluteString, "--thread", thread.rawValue,
            "--runs", path("runs"), "--effects", path("effects"), "--authorizations", path("authorizations"),
        ]
        let first = try await ChildProcess.run(Self.fixture, base + ["--kill-at", "4"])
        #expect(first.killed)
        async let one = ChildProcess.run(Self.fixture, base + ["--resume"])
        async let two = ChildProcess.run(Self.fixture, base + ["--resume"])
        let statuses = try await [one.status, two.status].sorted()
        // One resumes the turn and parks at the refund's approval (3). The other either finds the turn
        // taken by a live owner or loses the claim (4, thread_busy), or, when it comes after the first has
        // already parked, finds the turn waiting for its approval (3). Never do both resume: the charge
        // runs once, in one host.
        #expect(statuses == [3, 4] || statuses == [3, 3], "\(statuses)")
        let runs = try String(contentsOfFile: path("runs"), encoding: .utf8).split(separator: "\n").map { $0.split(separator: " ")[0] }
        #expect(runs == ["lookup_order", "charge_card"], "the charge ran once, in the one host that resumed")
    }
}
