// TransportFixture: transport scenarios whose memory and descriptors are measured in a process of their
// own (a test process runs other suites in parallel, so its RSS says nothing about one client). Memory is
// the resident set size, or the sanitizer allocator's live bytes in a sanitized build (`Sanitizer`).
//   paused-endless --client curl|urlsession     an endless fast stream, the consumer stops after one chunk
//   alternating --client curl|urlsession --turns N   N exchanges, good replies and resets alternating
//   cancelled-fast --client curl|urlsession --turns N  N endless fast streams, each cancelled after one chunk
//   get --client curl|urlsession --url URL      one GET (the proxy test sets the proxy variables for it)
//   many --client curl|urlsession --requests N   N small POSTs on one client: descriptors, connections
//   bomb --coding gzip|deflate|br|zstd --reader sse|collect   a 256 MiB compression bomb read through
//                                                the default client with a 4 MiB limit: peak memory, error
// Prints one JSON object of figures; exits 1 with the error on any failure.
import CodexCore
import CodexTestSupport
import CodexTransport
import Foundation

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func client() -> any HTTPClient {
    option("--client") == "urlsession" ? URLSessionHTTPClient() : CurlHTTPClient()
}

func pausedEndless() async throws -> [String: Int] {
    let chunk = [UInt8](repeating: 0x61, count: 64 * 1024)
    let server = try LoopbackHTTPServer(replies: [.text("warm-up"), .init(parts: [.repeating(chunk, times: nil)], framing: .chunked)])
    defer { server.shutdown() }
    let http = client()
    _ = try await http.send(HTTPRequest(method: "GET", url: server.baseURL)).body.collect(upTo: 1024)
    let baseline = Sanitizer.leakMeasureBytes ?? 0
    let response = try await http.send(HTTPRequest(method: "GET", url: server.baseURL))
    var iterator = response.body.makeAsyncIterator()
    let first = try await iterator.next()?.count ?? 0
    // The consumer stops reading: with back-pressure the sender blocks once the buffers are full.
    let sent = await server.waitForSenderToStall()
    let paused = Sanitizer.leakMeasureBytes ?? 0
    let connections = Set(server.requests.map(\.connectionID)).count
    response.body.cancel()
    let closed = await server.waitForClosedConnections(count: connections, timeout: .hangGuard)
    return ["baseline": baseline, "paused": paused, "sent": sent, "first": first, "closed": closed ? 1 : 0, "connections": connections]
}

func alternating() async throws -> [String: Int] {
    // An even number, so the last exchange is a reset like the one measured at 50.
    let turns = (Int(option("--turns") ?? "") ?? 500) / 2 * 2
    let good = ScriptedReply.sse(["event: a\ndata: {}\n\n", "event: b\ndata: {}\n\n"])
    let reset = ScriptedReply(parts: [.bytes(Array("data: partial\n".utf8)), .closeAbruptly], framing: .chunked)
    let server = try LoopbackHTTPServer { request in Int(request.path.dropFirst()).map { $0 % 2 == 0 ? good : reset } ?? good }
    defer { server.shutdown() }
    if CommandLine.arguments.contains("--serve") {
        FileHandle.standardOutput.write(Data("\(server.baseURL)\n".utf8))
        try await Task.sleep(for: .seconds(3600))
    }
    let base = option("--base").flatMap(URL.init(string:)) ?? server.baseURL
    let http = client()
    var figures: [String: Int] = [:]
    var failures = 0
    for turn in 0..<turns {
        do {
            _ = try await http.send(HTTPRequest(method: "GET", url: base.appendingPathComponent(String(turn)))).body.collect(upTo: 1 << 20)
        } catch {
            failures += 1
        }
        // Measured after a reset (odd turns), once the server has seen every connection so far closed:
        // then no idle keep-alive connection is cached and the counts compare like for like.
        if turn == 49 {
            _ = await server.waitForClosedConnections(count: Set(server.requests.map(\.connectionID)).count, timeout: .hangGuard)
            figures["descriptorsAt50"] = ProcessResources.openDescriptorCount
            figures["memoryAt50"] = Sanitizer.leakMeasureBytes ?? 0
        }
    }
    _ = await server.waitForClosedConnections(count: Set(server.requests.map(\.connectionID)).count, timeout: .hangGuard)
    figures["descriptorsAtEnd"] = ProcessResources.openDescriptorCount
    figures["memoryAtEnd"] = Sanitizer.leakMeasureBytes ?? 0
    figures["unlinkedFiles"] = ProcessResources.unlinkedFileCount
    figures["failures"] = failures
    return figures
}

func cancelledFast() async throws -> [String: Int] {
    let turns = Int(option("--turns") ?? "") ?? 200
    let chunk = [UInt8](repeating: 0x62, count: 64 * 1024)
    // Endless, except in a sanitized build: there FoundationNetworking, which cannot pause a transfer,
    // drains a cancelled endless stream for minutes and gigabytes, so each reply sends 16 MiB (still far
    // more than either client buffers before the cancellation) and then holds the body open: the
    // transfer never completes, and only the client's cancellation closes its connection.
    let parts: [ScriptedReply.Part] = Sanitizer.active == .none ? [.repeating(chunk, times: nil)] : [.repeating(chunk, times: 256), .hold]
    let server = try LoopbackHTTPServer(replies: Array(repeating: ScriptedReply(parts: parts, framing: .chunked), count: turns))
    defer { server.shutdown() }
    let http = client()
    var figures: [String: Int] = [:]
    for turn in 0..<turns {
        let response = try await http.send(HTTPRequest(method: "GET", url: server.baseURL))
        var iterator = response.body.makeAsyncIterator()
        _ = try await iterator.next()
        response.body.cancel()
        if turn == 19 {
            _ = await server.waitForClosedConnections(count: Set(server.requests.map(\.connectionID)).count, timeout: .hangGuard)
            figures["descriptorsAt20"] = ProcessResources.openDescriptorCount
        }
    }
    let closed = await server.waitForClosedConnections(count: Set(server.requests.map(\.connectionID)).count, timeout: .hangGuard)
    // Sessions finish invalidating on their own queues: give them the same wait the server got.
    _ = await waitForPlateau { -ProcessResources.openDescriptorCount }
    figures["descriptorsAtEnd"] = ProcessResources.openDescriptorCount
    figures["unlinkedFiles"] = ProcessResources.unlinkedFileCount
    figures["closed"] = closed ? 1 : 0
    return figures
}

func many() async throws -> [String: Int] {
    let requests = Int(option("--requests") ?? "") ?? 10_000
    let server = try LoopbackHTTPServer(keepsRequests: false) { _ in .json(#"{"ok":true}"#) }
    defer { server.shutdown() }
    let http = client()
    let request = HTTPRequest(
        method: "POST", url: server.baseURL.appendingPathComponent("v1/ping"), headers: ["Content-Type": "application/json"],
        body: Array(#"{"ping":1}"#.utf8)
    )
    var wrongBodies = 0
    func exchange() async throws {
        let body = try await http.send(request).body.collect(upTo: 1024)
        if body != Array(#"{"ok":true}"#.utf8) { wrongBodies += 1 }
    }
    for _ in 0..<100 { try await exchange() }
    let afterWarmUp = ProcessResources.openDescriptorCount
    for _ in 0..<requests { try await exchange() }
    return [
        "descriptorsAfterWarmUp": afterWarmUp, "descriptorsAtEnd": ProcessResources.openDescriptorCount, "requests": server.requestCount,
        "connections": server.acceptedConnectionCount, "wrongBodies": wrongBodies, "unlinkedFiles": ProcessResources.unlinkedFileCount,
    ]
}

/// A compression bomb read through the default client, as a Responses stream (a 4 MiB event limit)
/// or as a collected body (a 4 MiB limit): which error stopped it, and how far memory peaked.
func bomb() async throws -> [String: Int] {
    let coding = option("--coding") ?? "gzip"
    let limit = 4 * 1024 * 1024
    let bomb = DeflateBomb.body(coding: coding, inflatedSize: 256 * 1024 * 1024)
    let server = try LoopbackHTTPServer(replies: [
        .text("warm-up"),
        ScriptedReply(headers: [.init(name: "Content-Type", value: "text/event-stream"), .init(name: "Content-Encoding", value: coding)], parts: [.bytes(bomb)]),
    ])
    defer { server.shutdown() }
    let http = CurlHTTPClient()
    _ = try await http.send(HTTPRequest(method: "GET", url: server.baseURL)).body.collect(upTo: 1024)
    let baseline = ProcessResources.residentBytes ?? 0
    var error: AgentRuntimeError?
    do {
        if option("--reader") == "collect" {
            _ = try await http.send(HTTPRequest(method: "GET", url: server.baseURL)).body.collect(upTo: limit)
        } else {
            let client = ResponsesClient(
                configuration: .init(endpoint: try ResponsesEndpoint(baseURL: server.baseURL, profile: .publicAPI), retryPolicy: .disabled, maximumEventBytes: limit),
                httpClient: http, authProvider: APIKeyAuthProvider(apiKey: "sk-test")
            )
            for try await _ in client.stream(ResponsesRequest(model: "m")) {}
        }
    } catch let failure as AgentRuntimeError {
        error = failure
        if ProcessInfo.processInfo.environment["BOMB_DEBUG"] != nil { FileHandle.standardError.write(Data("\(failure)\n".utf8)) }
    }
    let accepted = server.requests.last?.header("Accept-Encoding") ?? ""
    return [
        "baseline": baseline, "peak": ProcessResources.peakResidentBytes ?? .max, "compressed": bomb.count,
        "eventTooLarge": error?.code == .sseEventTooLarge ? 1 : 0, "responseTooLarge": error?.code == .responseTooLarge ? 1 : 0,
        "otherError": error.map { [.sseEventTooLarge, .responseTooLarge].contains($0.code) ? 0 : 1 } ?? 0, "noError": error == nil ? 1 : 0,
        "offersAll": ["gzip", "deflate", "br", "zstd"].allSatisfy(accepted.contains) ? 1 : 0,
    ]
}

func get() async throws -> [String: Int] {
    guard let url = option("--url").flatMap(URL.init(string:)) else {
        throw AgentRuntimeError(code: .invalidRequest, message: "get needs --url")
    }
    let response = try await client().send(HTTPRequest(method: "GET", url: url))
    let body = try await response.body.collect(upTo: 1 << 20)
    return ["status": response.statusCode, "bytes": body.count]
}

/// Reads the Codex CLI auth file at `--path`; reports the memory and the bytes the read took.
func readAuth() -> [String: Int] {
    let url = URL(fileURLWithPath: option("--path") ?? "auth.json")
    let baseline = ProcessResources.residentBytes ?? 0
    let readBefore = ProcessResources.bytesRead ?? 0
    var code = "none"
    do {
        _ = try CodexCLIAuthFile(url: url).read()
    } catch let failure as AgentRuntimeError {
        code = failure.code.rawValue
    } catch {
        code = "other"
    }
    return [
        "baseline": baseline, "peak": ProcessResources.peakResidentBytes ?? .max, "read": (ProcessResources.bytesRead ?? .max) - readBefore,
        "secureStoreFailure": code == "secure_store_failure" ? 1 : 0,
    ]
}

do {
    let figures: [String: Int]
    switch CommandLine.arguments.dropFirst().first {
    case "paused-endless": figures = try await pausedEndless()
    case "alternating": figures = try await alternating()
    case "cancelled-fast": figures = try await cancelledFast()
    case "get": figures = try await get()
    case "many": figures = try await many()
    case "bomb": figures = try await bomb()
    case "read-auth": figures = readAuth()
    default: throw AgentRuntimeError(code: .invalidRequest, message: "usage: paused-endless|alternating|cancelled-fast|get|many --client curl|urlsession")
    }
    let data = try JSONSerialization.data(withJSONObject: figures, options: [.sortedKeys])
    FileHandle.standardOutput.write(data)
    exit(0)
} catch {
    FileHandle.standardError.write(Data("transport fixture: \(error)\n".utf8))
    exit(1)
}
