import CodexCore
import CodexKitTesting
import CodexRuntime
import Foundation

/// `mcp-memory --python P --script S --mode M --limit BYTES`: one `tools/call` to the hostile server in
/// mode M, with the message limit BYTES; prints `code=<error code or ok> baseline=<KiB> peak=<KiB>`
/// (`VmHWM` before the call, after the server was started, and at the end), so a test can see that
/// memory follows the limit, not what the server sends. Under a sanitizer the resident set grows with
/// the quarantine and the shadow, so both figures are the sanitizer allocator's live bytes instead (what
/// the call left held, not its peak).
enum MCPMemory {
    static func run(_ option: (String) -> String?) async throws {
        guard let python = option("--python"), let script = option("--script"), let mode = option("--mode"), let limit = option("--limit").flatMap(Int.init) else {
            throw AgentRuntimeError(code: .invalidRequest, message: "usage: mcp-memory --python P --script S --mode M --limit BYTES")
        }
        let client = try MCPClient(MCPServerConfiguration(
            name: "hostile", transport: .stdio(command: python, arguments: [script, mode]), connectTimeout: .seconds(600), maximumMessageBytes: limit
        ))
        try await client.connect()
        let baseline = (Self.measure ?? 0) / 1024
        var code = "ok"
        do {
            _ = try await client.callTool("poke")
        } catch let error as MCPError {
            code = error.code.rawValue
        }
        await client.shutdown()
        let peak = (Self.measure ?? 0) / 1024
        FileHandle.standardOutput.write(Data("code=\(code) baseline=\(baseline) peak=\(peak)\n".utf8))
    }

    /// The peak resident set in an ordinary build; the allocator's live bytes under a sanitizer.
    private static var measure: Int? {
        Sanitizer.active == .none ? ProcessResources.peakResidentBytes : Sanitizer.liveHeapBytes
    }
}
