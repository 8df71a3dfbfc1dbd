public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real OTLP/HTTP receiver for the telemetry tests, for binary protobuf and JSON bodies:
/// `Tests/OTLPReceiver/otlp_receiver.py`, which parses every export strictly with the official
/// `opentelemetry-proto` protobuf classes (a protobuf body must also be byte for byte what protobuf's
/// own serializer makes of it), run with ``OTLPTestPython``'s interpreter as a child process listening
/// on a port the system picks.
///
/// ```swift
/// let receiver = try await OTLPTestReceiver.start()
/// defer { receiver.stopNow() }
/// // … point the exporter at receiver.endpoint, export, await its flush …
/// let received = try await receiver.received()
/// #expect(received.errors.isEmpty)
/// ```
///
/// - Important: Tests never poll: an exporter's flush returns once its POST was answered, so one
///   ``received()`` after it sees the export.
public final class OTLPTestReceiver: Sendable {
    /// Why the receiver could not start or answered a control request with an error.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed.
        public let description: String
    }

    /// The receiver's base URL, `http://127.0.0.1:<port>` (exports go to `/v1/traces` and `/v1/metrics`).
    public let endpoint: URL
    /// The port the receiver listens on.
    public let port: Int
    private let process: SpawnedProcess
    private let output: String

    private init(process: SpawnedProcess, port: Int, endpoint: URL, output: String) {
        self.process = process
        self.port = port
        self.endpoint = endpoint
        self.output = output
    }

    deinit {
        stopNow()
    }

    /// Starts a receiver (creating the Python environment on first use) and waits until it listens.
    /// - Returns: The running receiver; ``stop()`` it when done (deinit kills it too).
    /// - Throws: ``TestPythonEnvironment/Failure`` without an interpreter, ``Failure`` when the script
    ///   does not start.
    public static func start() async throws -> OTLPTestReceiver {
        let python = try await OTLPTestPython.interpreter()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("codexkit-otlp-\(UUID().uuidString.prefix(8))").path
        let process = try SpawnedProcess(python, [OTLPTestPython.receiverScript], stdout: .file(output), stderr: .file(output + ".err"))
        // Wait for the port line (the socket already listens when it is printed); a hang guard, not a race.
        for _ in 0..<6_000 {
            if let text = try? String(contentsOfFile: output, encoding: .utf8), let line = text.split(separator: "\n").first, text.contains("\n"),
               line.hasPrefix("PORT "), let port = Int(line.dropFirst("PORT ".count)), let endpoint = URL(string: "http://127.0.0.1:\(port)") {
                return OTLPTestReceiver(process: process, port: port, endpoint: endpoint, output: output)
            }
            if process.reapedTermination != nil { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.send(signal: SIGKILL)
        _ = await process.exit()
        let errors = (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: output)
        try? FileManager.default.removeItem(atPath: output + ".err")
        throw Failure(description: "the OTLP receiver did not start: \(errors.suffix(1_000))")
    }

    /// Everything received so far (one `GET /received`).
    /// - Returns: The accepted spans and metrics, the refusals and the fault counters.
    /// - Throws: ``Failure`` when the receiver does not answer, `DecodingError` for an unexpected shape.
    public func received() async throws -> OTLPReceived {
        let body = try await exchange("GET", "/received")
        return try JSONDecoder().decode(OTLPReceived.self, from: Data(body.utf8))
    }

    /// Makes the next `count` exports (either signal) answer `status` without being recorded; they are
    /// counted in ``OTLPReceived/rejected``.
    /// - Parameters:
    ///   - count: How many exports fail.
    ///   - status: The HTTP status they get.
    ///   - retryAfter: The `Retry-After` header value to send with them, nil for none.
    /// - Throws: ``Failure`` when the receiver does not answer.
    public func failNext(_ count: Int, status: Int = 503, retryAfter: String? = nil) async throws {
        var command: [String: Any] = ["fail_next": count, "status": status]
        if let retryAfter { command["retry_after"] = retryAfter }
        try await control(command)
    }

    /// Holds (`true`) or releases (`false`) exports: a held export's request blocks, counted in
    /// ``OTLPReceived/held``, until the release; then it is answered as usual.
    /// - Parameter on: Whether to hold.
    /// - Throws: ``Failure`` when the receiver does not answer.
    public func hold(_ on: Bool) async throws {
        try await control(["hold": on])
    }

    /// Forgets everything received (spans, metrics, errors, headers, counters); pending faults stay.
    /// - Throws: ``Failure`` when the receiver does not answer.
    public func reset() async throws {
        _ = try await exchange("POST", "/reset", body: "{}")
    }

    /// What the receiver wrote to standard error so far (Python tracebacks).
    public var standardError: String { (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? "" }

    /// Kills the receiver (SIGKILL), reaps it and removes its output files. Idempotent.
    public func stop() async {
        process.send(signal: SIGKILL)
        _ = await process.exit()
        removeOutput()
    }

    /// ``stop()`` for synchronous contexts (`defer`, deinit): blocks the calling thread while the killed
    /// child is reaped, which takes no time.
    public func stopNow() {
        process.send(signal: SIGKILL)
        _ = process.waitForExit()
        removeOutput()
    }

    private func removeOutput() {
        try? FileManager.default.removeItem(atPath: output)
        try? FileManager.default.removeItem(atPath: output + ".err")
    }

    private func control(_ command: [String: Any]) async throws {
        let data = try JSONSerialization.data(withJSONObject: command)
        _ = try await exchange("POST", "/control", body: String(decoding: data, as: UTF8.self))
    }
}
