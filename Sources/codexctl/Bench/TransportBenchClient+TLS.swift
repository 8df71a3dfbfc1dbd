import CodexCore
import CodexLoopback
import CodexTransport
import Foundation

extension TransportBenchClient {
    /// Small requests over TLS on loopback, where a handshake costs what it costs: requests per second on
    /// one shared client (one kept-alive TLS connection) next to a new client per request (a TCP
    /// connection and a TLS handshake each). The server is a small HTTPS server in `python3` with a
    /// certificate made for the run by `openssl`; the client trusts it through
    /// `certificateAuthorityFile`, with verification on. Without `python3` or `openssl` the scenario
    /// fails with the reason, and `bench transport` reports the figure missing.
    func tlsRequests() async throws -> [String: Double] {
        guard kind == .curl else { throw Failure(description: "the TLS run needs a client that can trust a test certificate (curl)") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codexctl-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem").path
        let certificate = directory.appendingPathComponent("cert.pem").path
        let made = try Self.spawn("openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", certificate,
            "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
        ], stdout: .null, stderr: .null).waitForExit()
        guard made.succeeded else { throw Failure(description: "openssl could not make a test certificate (status \(made.status))") }
        let printed = directory.appendingPathComponent("port").path
        let complaints = directory.appendingPathComponent("stderr").path
        let server = try Self.spawn(
            "python3", ["-c", Self.tlsServerScript, certificate, key, Self.smallAnswer], stdout: .file(printed), stderr: .file(complaints)
        )
        defer {
            server.send(signal: SIGKILL)
            _ = server.waitForExit()
        }
        let port = try await Self.waitForPort(printed, complaints: complaints)
        guard let url = URL(string: "https://127.0.0.1:\(port)/responses") else { throw Failure(description: "no URL for port \(port)") }
        let answer = Self.smallAnswer
        let request = HTTPRequest(method: "POST", url: url, headers: ["Content-Type": "application/json"], body: Self.smallRequestBody)
        let configuration = CurlHTTPClient.Configuration(certificateAuthorityFile: certificate)
        let count = max(10, requests / 10)
        func exchange(_ client: CurlHTTPClient) async throws -> Double {
            let started = ContinuousClock.now
            let reply = try await client.send(request).body.collect(upTo: 64 * 1024)
            guard reply.count == answer.utf8.count else { throw Failure(description: "a TLS reply of \(reply.count) bytes") }
            return (ContinuousClock.now - started).inSeconds
        }
        let shared = CurlHTTPClient(configuration: configuration)
        var kept: [Double] = []
        for _ in 0..<(count + count / 10) { kept.append(try await exchange(shared)) }
        kept.removeFirst(count / 10)
        var fresh: [Double] = []
        for _ in 0..<count { fresh.append(try await exchange(CurlHTTPClient(configuration: configuration))) }
        return [
            "tls_requests_per_s": Double(kept.count) / kept.reduce(0, +),
            "tls_fresh_client_requests_per_s": Double(fresh.count) / fresh.reduce(0, +),
        ]
    }

    /// Starts `program` from `PATH`; one that is missing is a failure that names it.
    private static func spawn(_ program: String, _ arguments: [String], stdout: SpawnedProcess.Stream, stderr: SpawnedProcess.Stream) throws -> SpawnedProcess {
        do {
            return try SpawnedProcess(program, arguments, stdout: stdout, stderr: stderr)
        } catch {
            throw Failure(description: "the TLS run needs \(program), which could not be started (\(error))")
        }
    }

    /// Waits (in 10 ms sleeps, up to 20 s) for the server to print its port; a server that complains on
    /// standard error instead (a traceback: it will not start) fails at once with its last line.
    private static func waitForPort(_ path: String, complaints: String) async throws -> Int {
        for _ in 0..<2_000 {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            if text.hasSuffix("\n"), let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) { return port }
            let said = (try? String(contentsOfFile: complaints, encoding: .utf8)) ?? ""
            if said.hasSuffix("\n"), let last = said.split(whereSeparator: \.isNewline).last {
                throw Failure(description: "the python3 TLS server did not start: \(last.prefix(200))")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw Failure(description: "the python3 TLS server did not print its port within 20 s")
    }

    /// An HTTPS server on 127.0.0.1 (a free port, printed on standard output) that exits when the process
    /// that started it is gone (even one killed without its clean-up), answering every POST with
    /// the small JSON reply (its third argument), keeping connections alive (HTTP/1.1 with `Content-Length`), with `TCP_NODELAY`
    /// (its head and body are separate writes, which Nagle's algorithm would hold for the client's
    /// delayed acknowledgement). (Its modules come through `__import__`, so that no line of this file reads
    /// like a Swift import to the repository's import check.)
    static let tlsServerScript = """
        http, os, ssl, sys, threading, time = (__import__(name) for name in ("http.server", "os", "ssl", "sys", "threading", "time"))
        def leave_with_parent(parent=os.getppid()):
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(0)
        threading.Thread(target=leave_with_parent, daemon=True).start()
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                body = sys.argv[3].encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *arguments):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """
}
