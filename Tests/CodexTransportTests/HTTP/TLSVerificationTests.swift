import CodexCore
import CodexTestSupport
import CodexTransport
import Foundation
import Testing

/// TLS peer verification is always on: a server whose certificate no system CA signed is refused with a
/// typed error, never talked to. The server is `openssl s_server` with a fresh self-signed certificate
/// for 127.0.0.1 (the `openssl` command-line tool, which `.ci/run` installs when missing).
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct TLSVerificationTests {
    @Test(arguments: HTTPClientKind.allCases)
    func aSelfSignedCertificateIsRefusedWithATypedError(kind: HTTPClientKind) async throws {
        let server = try await SelfSignedTLSServer.start()
        let url = URL(string: "https://127.0.0.1:\(server.port)/responses?key=sk-canary-query-secret")
        let error = await #expect(throws: AgentRuntimeError.self) {
            guard let url else { return }
            _ = try await kind.make().send(HTTPRequest(method: "GET", url: url, headers: ["Authorization": "Bearer sk-canary-header-secret"]))
        }
        await server.stop()
        #expect(error?.code == .transportFailure)
        if kind == .curl {
            // CURLE_PEER_FAILED_VERIFICATION: the handshake reached the certificate and stopped there.
            #expect(error?.interruption?.transportDomain == "curl")
            #expect(error?.interruption?.transportCode == 60)
        }
        let description = String(describing: error)
        #expect(!description.contains("canary"))
    }

    /// With the server's certificate as the trusted authority, the libcurl client talks to it.
    @Test func aTrustedCertificateAuthorityFileLetsTheClientIn() async throws {
        let server = try await SelfSignedTLSServer.start()
        let client = CurlHTTPClient(configuration: .init(certificateAuthorityFile: server.certificatePath))
        let outcome: Result<(Int, [UInt8]), any Error>
        do {
            let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/"))
            let response = try await client.send(HTTPRequest(method: "GET", url: url))
            outcome = .success((response.statusCode, try await response.body.collect(upTo: 1 << 20)))
        } catch {
            outcome = .failure(error)
        }
        await server.stop()
        let (status, body) = try outcome.get()
        #expect(status == 200)
        // `openssl s_server -www` answers with a page that names itself.
        #expect(String(decoding: body, as: UTF8.self).contains("s_server"))
    }

    /// Host-name verification stays on with a trusted authority: a certificate made for another name is
    /// refused (curl error 60), never talked to.
    @Test func aTrustedCertificateForAnotherNameIsRefused() async throws {
        let server = try await SelfSignedTLSServer.start(subjectAltName: "DNS:service.invalid")
        let error = await Self.curlFailure(server, trusting: server.certificatePath)
        #expect(error?.code == .transportFailure)
        #expect(error?.interruption?.transportDomain == "curl")
        #expect(error?.interruption?.transportCode == 60)
    }

    /// Trusting one file trusts only its authorities: a server whose certificate another authority made
    /// is refused (curl error 60).
    @Test func aServerTheFileDoesNotVouchForIsRefused() async throws {
        let trusted = try await SelfSignedTLSServer.start()
        let other = try await SelfSignedTLSServer.start()
        let error = await Self.curlFailure(other, trusting: trusted.certificatePath)
        await trusted.stop()
        #expect(error?.code == .transportFailure)
        #expect(error?.interruption?.transportCode == 60)
    }

    /// An authority file that cannot be read fails the request with a typed error that does not name it.
    @Test func anUnreadableCertificateAuthorityFileIsATypedError() async throws {
        let server = try await SelfSignedTLSServer.start()
        let error = await Self.curlFailure(server, trusting: server.certificatePath + ".missing-secret-path")
        #expect(error?.code == .transportFailure)
        #expect(error?.interruption?.transportDomain == "curl")
        // CURLE_SSL_CACERT_BADFILE.
        #expect(error?.interruption?.transportCode == 77)
        #expect(!String(describing: error).contains("missing-secret-path"))
    }

    /// The error a GET to `server` through a libcurl client trusting `authorities` fails with (an issue
    /// is recorded when it does not fail); the server is stopped afterwards.
    private static func curlFailure(_ server: SelfSignedTLSServer, trusting authorities: String) async -> AgentRuntimeError? {
        let client = CurlHTTPClient(configuration: .init(certificateAuthorityFile: authorities))
        let error = await #expect(throws: AgentRuntimeError.self) {
            guard let url = URL(string: "https://127.0.0.1:\(server.port)/") else { return }
            _ = try await client.send(HTTPRequest(method: "GET", url: url))
        }
        await server.stop()
        return error
    }
}

/// `openssl s_server -www` on 127.0.0.1 with a self-signed certificate made for the test (for 127.0.0.1
/// and localhost unless told otherwise).
private final class SelfSignedTLSServer: Sendable {
    let port: Int
    private let server: SpawnedProcess
    private let directory: URL
    /// The server's self-signed certificate (PEM), usable as a trusted authority file.
    var certificatePath: String { directory.appendingPathComponent("cert.pem").path }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private init(port: Int, server: SpawnedProcess, directory: URL) {
        self.port = port
        self.server = server
        self.directory = directory
    }

    /// Makes the certificate and starts the server; returns once it listens (waits are on threads of
    /// their own or sleeps, never a blocked cooperative thread).
    static func start(subjectAltName: String = "IP:127.0.0.1,DNS:localhost") async throws -> SelfSignedTLSServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = directory.appendingPathComponent("key.pem").path
        let certificate = directory.appendingPathComponent("cert.pem").path
        let request = try await SpawnedProcess("openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", certificate,
            "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=\(subjectAltName)",
        ]).exit()
        guard request.succeeded else { throw Failure(description: "openssl req failed (\(request))") }
        let printed = directory.appendingPathComponent("server.out")
        let server = try SpawnedProcess(
            "openssl", ["s_server", "-accept", "127.0.0.1:0", "-cert", certificate, "-key", key, "-www"], stdout: .file(printed.path)
        )
        // s_server prints "ACCEPT 127.0.0.1:<port>" once it listens.
        let deadline = ContinuousClock.now + .hangGuard
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOf: printed, encoding: .utf8)) ?? ""
            let found = text.split(separator: "\n")
                .first { $0.hasPrefix("ACCEPT ") }
                .flatMap { $0.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } }
            if let found { return SelfSignedTLSServer(port: found, server: server, directory: directory) }
            try await Task.sleep(for: .milliseconds(10))
        }
        server.send(signal: SIGKILL)
        _ = await server.exit()
        throw Failure(description: "openssl s_server did not start")
    }

    /// Kills the server and waits for it to be reaped.
    func stop() async {
        server.send(signal: SIGKILL)
        _ = await server.exit()
        try? FileManager.default.removeItem(at: directory)
    }
}
