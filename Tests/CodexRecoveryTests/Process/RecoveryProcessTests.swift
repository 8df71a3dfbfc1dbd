@testable import CodexRecovery
import CodexTestSupport
import Foundation
import Glibc
import Testing

/// Spec 000's crash table proven with real processes: the fixture host exits (or is SIGKILLed) at each
/// durable boundary, and a fresh process finishes the job without a second commit.
@Suite(.serialized, .timeLimit(.minutes(3 * Sanitizer.slowdown))) struct RecoveryProcessTests {
    @Test func exitAfterTheReceiptIsSavedThenAFreshProcessCommitsOnce() async throws {
        let world = try FixtureWorld()
        let seed = try await world.run(["--exit-after", "receipt"])
        #expect(seed.status == 73, "\(seed.stderr)")
        #expect(world.posts.count == 1)
        #expect(try world.host()["commitCount"] as? Int == 0)
        let finish = try await world.run()
        #expect(finish.status == 0, "\(finish.stderr)")
        let again = try await world.run()
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try world.host()["commitCount"] as? Int == 1)
        #expect(try world.host()["acknowledged"] as? Bool == true)
        #expect(world.posts.count == 1)
        #expect(world.authorizedAttemptIDs().count == 1)
    }

    @Test func exitAfterTheHostCommitThenAFreshProcessAcknowledgesWithoutRecommitting() async throws {
        let world = try FixtureWorld()
        let seed = try await world.run(["--exit-after", "commit"])
        #expect(seed.status == 74, "\(seed.stderr)")
        #expect(try world.host()["commitCount"] as? Int == 1)
        #expect(try world.host()["acknowledged"] as? Bool == false)
        let finish = try await world.run()
        #expect(finish.status == 0, "\(finish.stderr)")
        #expect(try world.host()["commitCount"] as? Int == 1)
        #expect(try world.host()["acknowledged"] as? Bool == true)
        #expect(world.posts.count == 1)
    }

    /// SIGKILL right after the n-th call of `operation` in the store, for n = 1, 2, … until a run
    /// completes unharmed; after every kill a fresh process must finish the job with one commit, at most
    /// one extra POST (a replacement for an attempt whose receipt was not yet durable), only authorized
    /// attempt IDs on the wire, and identical bodies.
    @Test(arguments: ["syncDirectory", "rename", "syncFile"])
    func aKillAtEveryDurableBoundaryIsFinishedByAFreshProcess(operation: String) async throws {
        var kills = 0
        var rows: Set<String> = []
        for n in 1...64 {
            let world = try FixtureWorld()
            let victim = try await world.run(["--kill-at", "\(operation):\(n)"])
            if !victim.killed {
                #expect(victim.status == 0, "\(operation):\(n) \(victim.stderr)")
                break
            }
            kills += 1
            #expect(victim.status == 9, "\(operation):\(n)")
            rows.insert(try world.crashTableRow())
            try await finishesOnce(world, "\(operation):\(n)")
        }
        // Every lifecycle makes several durable writes; each one was a kill point. Kills after a directory
        // fsync land in every row of the crash table that a store write separates; kills after a file
        // fsync or a rename hit the states in between.
        // Four record writes per lifecycle (the record with its first attempt's ID, the spent attempt
        // with the next one's ID, the receipt, the acknowledgement marker), plus directory creation and
        // removal syncs.
        #expect(kills >= 4, "\(operation): only \(kills) kill points")
        let expected: Set<String> = [
            "before SDK request persistence", "SDK record saved, before host stores handle", "host handle saved, before attempt authorization",
            "pending attempt ID saved, before/during host authorization", "authorized attempt count saved, before/while sending",
            "validated completion saved, before host commit", "acknowledgement marker saved, before payload removal",
        ]
        if operation == "syncDirectory" {
            // No store write separates the host's saved handle from its authorization callback (the
            // attempt's ID was saved with the record), so the victim stops at those two rows itself.
            for (point, status) in [("handle", Int32(75)), ("authorization", Int32(76))] {
                let world = try FixtureWorld()
                let victim = try await world.run(["--exit-after", point])
                #expect(victim.status == status, "\(point) \(victim.stderr)")
                rows.insert(try world.crashTableRow())
                try await finishesOnce(world, point)
                if point == "authorization" {
                    // The host is asked again about the same attempt, by the ID it was asked about first.
                    let asked = world.authorizedAttemptIDs()
                    #expect(asked.count == 2 && asked[0] == asked[1], "\(asked)")
                }
            }
            // A stop right after each directory fsync, or at those two points, reaches every row.
            #expect(expected.subtracting(rows).isEmpty, "rows never hit: \(expected.subtracting(rows).sorted())")
        }
    }

    /// A fresh process finishes the job that a victim left in `world`: one commit, acknowledged, at most
    /// one extra POST, only authorized attempt IDs on the wire, identical bodies.
    private func finishesOnce(_ world: FixtureWorld, _ label: String) async throws {
        let finish = try await world.run()
        #expect(finish.status == 0, "\(label) \(finish.stderr)")
        let host = try world.host()
        #expect(host["commitCount"] as? Int == 1, "\(label)")
        #expect(host["acknowledged"] as? Bool == true, "\(label)")
        let posts = world.posts
        #expect((1...2).contains(posts.count), "\(label) saw \(posts.count) POSTs")
        let authorized = Set(world.authorizedAttemptIDs())
        #expect(posts.allSatisfy { authorized.contains($0.header("x-client-request-id") ?? "") }, "\(label)")
        #expect(Set(posts.map(\.body)).count == 1, "\(label)")
    }

    @Test func aKillWhileTheGenerationStreamsSpendsTheAttemptAndAFreshProcessReplacesIt() async throws {
        let held = ScriptedReply.sse([Streams.created("resp_inflight"), Streams.delta("{\"ok\"", 1)]).with(parts: [.hold])
        let world = try FixtureWorld(reply: held)
        let server = world.server
        let victim = try await world.run { pid in
            _ = await server.waitForRequests(count: 1, timeout: .hangGuard)
            kill(pid, SIGKILL)
        }
        #expect(victim.killed)
        #expect(try world.crashTableRow() == "authorized attempt count saved, before/while sending")
        world.server.releaseHeld()
        let finish = try await world.run()
        #expect(finish.status == 0, "\(finish.stderr)")
        #expect(world.posts.count == 2)
        #expect(Set(world.posts.map(\.body)).count == 1)
        #expect(try world.host()["commitCount"] as? Int == 1)
        // The second attempt was authorized as a replacement, numbered 2.
        let log = try String(contentsOf: world.scratch.url.appendingPathComponent("authorizations.log"), encoding: .utf8)
        #expect(log.split(separator: "\n").map { $0.split(separator: " ").suffix(2).joined(separator: " ") } == ["1 initial", "2 replacement"])
        // A replacement is a new attempt with an ID of its own.
        let asked = world.authorizedAttemptIDs()
        #expect(asked.count == 2 && asked[0] != asked[1], "\(asked)")
    }

    @Test func twoProcessesRacingOnOneOperationMakeExactlyOneGeneration() async throws {
        let slow = ScriptedReply.sse([Streams.created("resp_slow")]).with(parts: [.delay(.milliseconds(600))])
            .with(parts: Streams.complete("resp_slow").parts)
        let world = try FixtureWorld(reply: slow)
        let seed = try await world.run(["--exit-after", "handle"])
        #expect(seed.status == 75, "\(seed.stderr)")
        async let first = world.run()
        async let second = world.run()
        let outcomes = try await [first, second]
        #expect(world.posts.count == 1)
        let winners = outcomes.filter { $0.status == 0 }
        let losers = outcomes.filter { $0.status != 0 }
        #expect(winners.count + losers.count == 2)
        #expect(winners.count >= 1)
        #expect(losers.allSatisfy { $0.stderr.contains("operation_busy") || $0.stderr.contains("state_unavailable") }, "\(losers.map(\.stderr))")
        #expect(try world.host()["commitCount"] as? Int == 1)
    }

    @Test func aStaleLeaseAfterSIGKILLIsFreeAtOnce() async throws {
        let held = ScriptedReply.sse([Streams.created("resp_inflight")]).with(parts: [.hold])
        let world = try FixtureWorld(reply: held)
        let server = world.server
        let victim = try await world.run { pid in
            _ = await server.waitForRequests(count: 1, timeout: .hangGuard)
            kill(pid, SIGKILL)
        }
        #expect(victim.killed)
        let store = try AgentStructuredRecoveryStore(directory: world.scratch.storeURL)
        let partition = try #require(try store.allPartitions().first)
        let id = try #require(try partition.operationIDs(withSuffix: RecoveryOperationRecord.fileSuffix).first)
        #expect(try !partition.isLeaseHeld(id))
        let lease = try partition.lease(id)
        try lease.verify()
        world.server.releaseHeld()
    }
}
