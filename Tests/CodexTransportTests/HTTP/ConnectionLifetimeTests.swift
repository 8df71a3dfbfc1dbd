import CodexCore
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// Long use of one client, measured in a process of its own (`TransportFixture many`): 10,000 requests
/// reuse one kept-alive connection and leave no descriptor or temporary file behind. The child runs at
/// the lowest priority, one client at a time, so its busy loop never starves the suite running beside it.
@Suite(.serialized, .timeLimit(.minutes(5 * Sanitizer.slowdown))) struct ConnectionLifetimeTests {
    @Test(arguments: HTTPClientKind.allCases)
    func tenThousandRequestsUseOneConnectionAndLeakNoDescriptor(kind: HTTPClientKind) async throws {
        let outcome = try await ChildProcess.runSurvivingFoundationNetworkingCrash(
            URL(fileURLWithPath: "/usr/bin/nice"),
            ["-n", "19", ChildProcess.product("TransportFixture").path, "many", "--client", kind == .curl ? "curl" : "urlsession", "--requests", "10000"],
            attempts: kind == .urlSession ? 3 : 1  // the platform crash is FoundationNetworking's alone
        )
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let figures = try JSONDecoder().decode([String: Int].self, from: Data(outcome.stdout.utf8))
        #expect(figures["requests"] == 10_100)
        #expect(figures["wrongBodies"] == 0)
        #expect(figures["connections"] == 1, "one kept-alive connection for every request: \(figures)")
        #expect((figures["descriptorsAtEnd"] ?? .max) <= (figures["descriptorsAfterWarmUp"] ?? 0), "descriptors flat: \(figures)")
        #expect(figures["unlinkedFiles"] == 0)
    }
}
