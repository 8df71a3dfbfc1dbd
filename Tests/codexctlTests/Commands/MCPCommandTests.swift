import CodexCore
import CodexLoopback
import CodexTestSupport
import Foundation
import Testing

/// `codexctl mcp` and the MCP options of `send`, as a user runs them: the built binary, the official
/// Python SDK's server, a loopback Responses server.
@Suite(.timeLimit(.minutes(3 * Sanitizer.slowdown))) struct MCPCommandTests {
    private static func reference() async throws -> String {
        "ref=\(try await MCPTestPython.interpreter()) \(MCPTestPython.script("reference_server.py"))"
    }

    private static func json(_ text: String) -> Any? { try? JSONSerialization.jsonObject(with: Data(text.utf8)) }

    /// A configuration file naming the reference server, with a start-up timeout no busy machine reaches
    /// (so the stateless probe is always answered in time).
    /// A configuration file for the reference server, with `extra` lines in its entry.
    private static func referenceConfig(_ directory: URL, extra: String = "") async throws -> String {
        let config = directory.appendingPathComponent("reference.toml")
        try Data("""
            [mcp_servers.ref]
            command = "\(try await MCPTestPython.interpreter())"
            args = ["\(MCPTestPython.script("reference_server.py"))"]
            startup_timeout_sec = 600
            \(extra)
            """.utf8).write(to: config)
        return config.path
    }

    @Test func toolsListsEachToolWithTheRuntimesSettings() async throws {
        let directory = try temporaryDirectory("mcp-tools")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await CommandRunner.codexctl(["mcp", "tools", "--json", "--mcp-config", try await Self.referenceConfig(directory)])
        #expect(result.status == 0, "\(result.stderr)")
        let servers = try #require(Self.json(result.stdout) as? [[String: Any]])
        #expect(servers.first?["server"] as? String == "ref" && servers.first?["protocol_version"] as? String == "2026-07-28")
        let tools = try #require(servers.first?["tools"] as? [[String: Any]])
        let byName = Dictionary(uniqueKeysWithValues: tools.map { ($0["agent_name"] as? String ?? "", $0) })
        #expect(byName["ref__lookup"]?["approval"] as? String == "automatic" && byName["ref__lookup"]?["parallel"] as? Bool == true)
        #expect(byName["ref__delete_note"]?["approval"] as? String == "requires_approval")
        #expect(byName["ref__code_check"]?["arguments"] as? String == "partly_checked")
        #expect(byName["ref__code_check"]?["unenforced_keywords"] as? [String] == ["/properties/code/pattern"])

        let text = try await CommandRunner.codexctl(["mcp", "tools", "--mcp-config", try await Self.referenceConfig(directory), "--mcp-trust"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("ref  protocol 2026-07-28  13 tools\n"))
        #expect(text.stdout.contains("  ref__delete_note  no approval, alone, replay-safe, arguments checked\n    Delete a note.\n"))
    }

    @Test func callPrintsTheResultAndExitsOneForAToolError() async throws {
        let echo = try await CommandRunner.codexctl(["mcp", "call", "--server", "ref", "--mcp", try await Self.reference(), "--mcp-trust", "echo", #"{"text": "hi"}"#])
        #expect(echo.status == 0 && echo.stdout == "hi\n", "\(echo.stderr)")
        let failing = try await CommandRunner.codexctl(["mcp", "call", "--json", "--server", "ref", "--mcp", try await Self.reference(), "--mcp-trust", "failing"])
        #expect(failing.status == 1)
        #expect((Self.json(failing.stdout) as? [String: Any])?["is_error"] as? Bool == true)
        let missing = try await CommandRunner.codexctl(["mcp", "tools", "--mcp", "gone=/nonexistent/mcp-server"])
        #expect(missing.status == 1 && missing.stderr == "Error: mcp_spawn_failed: starting mcp-server failed: No such file or directory (2) (MCP server gone)\n")
    }

    /// `mcp call` holds a call to what the runtime holds a model's call to (it once called anything):
    /// a tool that needs an approval, one the configuration disables, one the server does not list and
    /// arguments the input schema refuses are refused before anything is sent; a result whose structured
    /// content breaks the output schema is printed and exits 1.
    @Test func callRefusesWhatTheRuntimeWouldNotCall() async throws {
        let reference = try await Self.reference()
        let untrusted = try await CommandRunner.codexctl(["mcp", "call", "--server", "ref", "--mcp", reference, "echo", #"{"text": "hi"}"#])
        #expect(untrusted.status == 1)
        #expect(untrusted.stdout == "")
        #expect(untrusted.stderr == """
            Error: mcp_approval_required: the tool echo of ref needs an approval (its server does not mark it read-only), which mcp call \
            cannot give; --mcp-trust trusts the tools of the servers given

            """)
        // A tool its server marks read-only needs no trust.
        let readOnly = try await CommandRunner.codexctl(["mcp", "call", "--server", "ref", "--mcp", reference, "lookup", #"{"sku": "A-1"}"#])
        #expect(readOnly.status == 0, "\(readOnly.stderr)")
        let badArguments = try await CommandRunner.codexctl(["mcp", "call", "--server", "ref", "--mcp", reference, "--mcp-trust", "echo", #"{"text": 5}"#])
        #expect(badArguments.status == 1)
        #expect(badArguments.stderr.hasPrefix("Error: mcp_arguments_invalid: the arguments break the tool's input schema: /text: "), "\(badArguments.stderr)")
        let unknown = try await CommandRunner.codexctl(["mcp", "call", "--server", "ref", "--mcp", reference, "--mcp-trust", "nope"])
        #expect(unknown.stderr == "Error: mcp_tool_not_found: the server ref lists no tool named nope\n")
        let directory = try temporaryDirectory("mcp-call")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try await Self.referenceConfig(directory, extra: #"disabled_tools = ["echo"]"#)
        let disabled = try await CommandRunner.codexctl(["mcp", "call", "--server", "ref", "--mcp-config", config, "--mcp-trust", "echo", #"{"text": "hi"}"#])
        #expect(disabled.status == 1)
        #expect(disabled.stderr == "Error: mcp_tool_disabled: the configuration disables the tool echo of ref\n")
        let hostile = "bad=\(try await MCPTestPython.interpreter()) \(MCPTestPython.script("hostile_server.py")) bad-output"
        let badOutput = try await CommandRunner.codexctl(["mcp", "call", "--server", "bad", "--mcp", hostile, "--mcp-trust", "poke"])
        #expect(badOutput.status == 1)
        #expect(badOutput.stdout == "{\"result\": \"x\"}\n")
        #expect(badOutput.stderr.hasPrefix("Error: mcp_output_invalid: the structured content breaks the tool's output schema: /result: "), "\(badOutput.stderr)")
        // A result the tool marks as an error is not held to the schema (as in the runtime): exit 1, no schema error.
        let toolError = try await CommandRunner.codexctl(["mcp", "call", "--server", "bad", "--mcp", hostile + "-error", "--mcp-trust", "poke"])
        #expect(toolError.status == 1)
        #expect(toolError.stdout == "{\"result\": \"x\"}\n")
        #expect(toolError.stderr == "")
    }

    /// The processes whose environment holds `CODEXKIT_TEST_MARK=<mark>` (read from `/proc`).
    private static func processes(marked mark: String) -> [Int32] {
        let needle = Array("CODEXKIT_TEST_MARK=\(mark)".utf8)
        return ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { name -> Int32? in
            guard let pid = Int32(name), let environ = FileManager.default.contents(atPath: "/proc/\(name)/environ") else { return nil }
            return environ.split(separator: 0).contains { Array($0) == needle } ? pid : nil
        }
    }

    /// Ctrl-C during `mcp call` and `mcp tools` cancels the work and ends the server before the command
    /// exits with 130: a tool never keeps running for a command that is gone.
    @Test(arguments: [["call", "--server", "ref", "--mcp-trust", "slow", #"{"steps": 0}"#], ["tools"]])
    func aStoppedCommandEndsItsServer(_ command: [String]) async throws {
        let directory = try temporaryDirectory("mcp-stop")
        defer { try? FileManager.default.removeItem(at: directory) }
        let mark = UUID().uuidString
        let server = "ref=/usr/bin/env CODEXKIT_TEST_MARK=\(mark) \(try await MCPTestPython.interpreter()) \(MCPTestPython.script("reference_server.py"))"
        let process = try SpawnedProcess(
            CommandRunner.productsDirectory.appendingPathComponent("codexctl").path, ["mcp"] + command.prefix(1) + ["--mcp", server] + command.dropFirst(),
            stdout: .file(directory.appendingPathComponent("out").path), stderr: .file(directory.appendingPathComponent("err").path)
        )
        // The event itself: the server is running (a hang guard, not a deadline: the suite's limit bounds it).
        while Self.processes(marked: mark).isEmpty, process.reapedTermination == nil { try await Task.sleep(for: .milliseconds(20)) }
        process.send(signal: SIGINT)
        let ended = await process.exit()
        #expect(ended.status == 130 && !ended.killed, "\(ended): \((try? String(contentsOf: directory.appendingPathComponent("err"), encoding: .utf8)) ?? "")")
        #expect(Self.processes(marked: mark).isEmpty, "the server was left running")
    }

    @Test func theConfigurationFileListsServersTheCodexCLIsWay() async throws {
        let directory = try temporaryDirectory("mcp-config")
        defer { try? FileManager.default.removeItem(at: directory) }
        let python = try await MCPTestPython.interpreter()
        let config = directory.appendingPathComponent("config.toml")
        try Data("""
            # Servers for codexctl, in the Codex CLI's layout.
            model = "ignored"

            [mcp_servers.ref]
            command = "\(python)"
            args = [
              "\(MCPTestPython.script("reference_server.py"))",  # the reference server
            ]
            enabled_tools = ["echo", "lookup"]
            tool_timeout_sec = 30
            future_key = 1

            [mcp_servers.ref.env]
            REFERENCE_TOKEN = 'not-shown'

            [mcp_servers.off]
            command = "/nonexistent"
            enabled = false
            """.utf8).write(to: config)
        let result = try await CommandRunner.codexctl(["mcp", "tools", "--json", "--mcp-config", config.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr == "warning: \(config.path): [mcp_servers.ref] key 'future_key' is not used by codexctl\n")
        let servers = try #require(Self.json(result.stdout) as? [[String: Any]])
        #expect(servers.map { $0["server"] as? String } == ["ref"])
        let enabled = (servers.first?["tools"] as? [[String: Any]] ?? []).filter { $0["enabled"] as? Bool == true }.compactMap { $0["name"] as? String }
        #expect(enabled.sorted() == ["echo", "lookup"])

        try Data("[mcp_servers.web]\nurl = \"https://example.com/mcp\"\nbearer_token = \"secret-value\"\n".utf8).write(to: config)
        let inline = try await CommandRunner.codexctl(["mcp", "tools", "--mcp-config", config.path])
        #expect(inline.status == 64 && inline.stderr.contains("bearer_token is refused") && !inline.stderr.contains("secret-value"))
        try Data("[mcp_servers.web]\nurl = https://example.com\n".utf8).write(to: config)
        let broken = try await CommandRunner.codexctl(["mcp", "tools", "--mcp-config", config.path])
        #expect(broken.status == 64 && broken.stderr.contains("line 2: 'https://example.com' is not a TOML value (strings need quotes)"))
    }

    @Test func sendOffersTheServersToolsToTheModel() async throws {
        let directory = try temporaryDirectory("send-mcp")
        defer { try? FileManager.default.removeItem(at: directory) }
        func event(_ json: String) -> String { "data: \(json)\n\n" }
        let call = [
            event(#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress"}}"#),
            event(#"{"type":"response.output_item.done","sequence_number":1,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"ref__echo","arguments":"{\"text\":\"from the server\"}"}}"#),
            event(#"{"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","status":"completed"}}"#),
        ]
        let server = try LoopbackHTTPServer(replies: [.sse(call), .sse(SendCommandTests.reply(["Done."])), .sse(call), .sse(SendCommandTests.reply(["Denied."]))])
        defer { server.shutdown() }
        let endpoint = server.baseURL.appendingPathComponent("v1").absoluteString
        let trusted = try await CommandRunner.codexctl(
            ["send", "Echo it", "--endpoint", endpoint, "--ephemeral", "--mcp", try await Self.reference(), "--mcp-trust"], environment: SendCommandTests.environment(directory)
        )
        #expect(trusted.status == 0 && trusted.stdout == "Done.\n", "\(trusted.stderr)")
        let offered = String(decoding: try #require(server.requests.first?.body), as: UTF8.self)
        #expect(offered.contains(#""name":"ref__echo""#) && offered.contains(#""name":"ref__lookup""#))
        let answered = String(decoding: try #require(server.requests.dropFirst().first?.body), as: UTF8.self)
        #expect(answered.contains(#""type":"function_call_output""#) && answered.contains("from the server"))

        // Without --mcp-trust, a tool the server does not mark read-only needs an approval send cannot give.
        let refused = try await CommandRunner.codexctl(
            ["send", "Echo it", "--endpoint", endpoint, "--ephemeral", "--mcp", try await Self.reference()], environment: SendCommandTests.environment(directory)
        )
        #expect(refused.status == 0 && refused.stdout == "Denied.\n", "\(refused.stderr)")
        let denied = String(decoding: try #require(server.requests.last?.body), as: UTF8.self)
        // The call's arguments are replayed; its output is the refusal, not the tool's echo.
        #expect(denied.contains("denied") && denied.components(separatedBy: "from the server").count == 2)
    }

    @Test func anHTTPServersBearerTokenComesFromTheNamedVariable() async throws {
        let directory = try temporaryDirectory("mcp-http-config")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await MCPHTTPTestServer.start("hostile_http_server.py", environment: ["EXPECTED_BEARER": "token-from-the-environment-42"])
        let config = directory.appendingPathComponent("config.toml")
        try Data("""
            [mcp_servers.web]
            url = "\(server.url.absoluteString)"
            bearer_token_env_var = "WEB_MCP_TOKEN"
            http_headers = { "X-Team" = "support" }
            """.utf8).write(to: config)
        let accepted = try await CommandRunner.codexctl(
            ["mcp", "tools", "--json", "--mcp-config", config.path], environment: ["WEB_MCP_TOKEN": "token-from-the-environment-42"]
        )
        #expect(accepted.status == 0, "\(accepted.stderr)")
        let tools = (Self.json(accepted.stdout) as? [[String: Any]])?.first?["tools"] as? [[String: Any]]
        #expect(tools?.compactMap { $0["agent_name"] as? String } == ["web__poke"])
        let refused = try await CommandRunner.codexctl(["mcp", "tools", "--mcp-config", config.path], environment: ["WEB_MCP_TOKEN": "another-token-0000000000"])
        #expect(refused.status == 1 && refused.stderr.hasPrefix("Error: mcp_unauthorized: ") && !refused.stderr.contains("another-token"), "\(refused.stderr)")
        let unset = try await CommandRunner.codexctl(["mcp", "tools", "--mcp-config", config.path], environment: ["WEB_MCP_TOKEN": ""])
        #expect(unset.status == 64 && unset.stderr.contains("the environment variable WEB_MCP_TOKEN named by bearer_token_env_var is not set"))
        await server.stop()
    }

    @Test func theConfigurationReaderTakesAWholeCodexStyleFile() async throws {
        let directory = try temporaryDirectory("mcp-toml")
        defer { try? FileManager.default.removeItem(at: directory) }
        let codexctl = CommandRunner.productsDirectory.appendingPathComponent("codexctl").path
        let config = directory.appendingPathComponent("config.toml")
        // Keys and tables the Codex CLI's file has beside its servers, in every TOML form, must not get in
        // the way; the servers' own tables use dotted keys, inline tables and literal strings.
        try Data(#"""
            model = "gpt-6-astra"   # a comment
            approval_policy = 'on-request'
            notify = ["notify-send", "Codex"]
            instructions = """
            Line one with "quotes" and a 	 tab.
            Line two, ending in two quotes: ""\#u{22}""
            started = 1979-05-27T07:32:00Z
            ratio = 0.5
            big = 1_000_000
            flags = { hex = 0xff, on = true, nested = { deep = [1, 2, [3]] } }

            [[profiles]]
            name = "one"
            [[profiles]]
            name = 'two'

            [mcp_servers.parcels]
            command = '\#(codexctl)'
            args = [
              "demo",
              "mcp-server",   # the demo's server
            ]
            env.PARCELS_REGION = "eu"
            startup_timeout_sec = 60.5

            [mcp_servers."quoted-name"]
            command = "/nonexistent"
            enabled = false
            """#.utf8).write(to: config)
        let result = try await CommandRunner.codexctl(["mcp", "tools", "--json", "--mcp-config", config.path])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        #expect((Self.json(result.stdout) as? [[String: Any]])?.map { $0["server"] as? String } == ["parcels"])

        for (text, message) in [
            ("[mcp_servers.a]\ncommand = \"x\"\ncommand = \"y\"\n", "line 3: key 'command' is defined twice"),
            ("[mcp_servers.a]\ncommand = \"unclosed\n", "line 2: a string is not closed on its line"),
            ("[mcp_servers.a]\n[mcp_servers.a]\n", "line 2: table [mcp_servers.a] is defined twice"),
            ("a = [1, 2\n", "line 2: ']' expected"),
        ] {
            try Data(text.utf8).write(to: config)
            let refused = try await CommandRunner.codexctl(["mcp", "tools", "--mcp-config", config.path])
            #expect(refused.status == 64 && refused.stderr.contains("\(config.path): \(message)"), "\(refused.stderr)")
        }
    }
}
