import CodexCore
import CodexTestSupport
import Foundation
import Testing

/// The libcurl client honours the proxy variables as curl does. Each case runs in a `TransportFixture`
/// child, because the variables are process-wide and other suites run in this process at the same time.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct ProxyEnvironmentTests {
    /// Every proxy variable curl reads, cleared, so the machine's own settings cannot leak in.
    private static let cleared = ["http_proxy": "", "https_proxy": "", "HTTPS_PROXY": "", "all_proxy": "", "ALL_PROXY": "", "no_proxy": "", "NO_PROXY": ""]

    @Test func httpProxyCarriesTheRequestWithTheOriginalHost() async throws {
        let proxy = try LoopbackHTTPServer { _ in .text("via proxy") }
        defer { proxy.shutdown() }
        // A host that does not resolve: only a proxy can answer for it (curl does not resolve it itself).
        let environment = Self.cleared.merging(["http_proxy": proxy.baseURL.absoluteString]) { _, new in new }
        let outcome = try await ChildProcess.run(
            ChildProcess.product("TransportFixture"), ["get", "--client", "curl", "--url", "http://codexkit-proxy-test.invalid/models?x=1"],
            environment: environment
        )
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(try JSONDecoder().decode([String: Int].self, from: Data(outcome.stdout.utf8)) == ["status": 200, "bytes": 9])
        #expect(proxy.requests.count == 1)
        #expect(proxy.requests.first?.path == "/models")
        #expect(proxy.requests.first?.query == "x=1")
        #expect(proxy.requests.first?.header("host") == "codexkit-proxy-test.invalid")
    }

    @Test func noProxyNamesHostsThatAreReachedDirectly() async throws {
        let proxy = try LoopbackHTTPServer { _ in .text("via proxy") }
        defer { proxy.shutdown() }
        let direct = try LoopbackHTTPServer { _ in .text("direct") }
        defer { direct.shutdown() }
        let environment = Self.cleared.merging(["http_proxy": proxy.baseURL.absoluteString, "no_proxy": "127.0.0.1"]) { _, new in new }
        let outcome = try await ChildProcess.run(
            ChildProcess.product("TransportFixture"), ["get", "--client", "curl", "--url", direct.baseURL.appendingPathComponent("models").absoluteString],
            environment: environment
        )
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(try JSONDecoder().decode([String: Int].self, from: Data(outcome.stdout.utf8)) == ["status": 200, "bytes": 6])
        #expect(direct.requests.map(\.path) == ["/models"])
        #expect(proxy.requests.isEmpty)
    }
}
