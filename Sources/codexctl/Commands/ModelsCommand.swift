import CodexCore
import CodexSchema
import CodexTransport
import Foundation

/// `codexctl models`.
enum ModelsCommand: CLICommand {
    static let name = "models"
    static let summary = "List the models available to the signed-in account."
    static let help = CommandHelp(
        command: "models",
        overview: "List the models available to the signed-in account.",
        subcommands: subcommandRows
    )
    static var subcommands: [any CLICommand.Type] { [ModelsListCommand.self] }

    static func run(_ arguments: [String]) async -> Int32 { await dispatch(arguments) }
}

/// `codexctl models list`.
enum ModelsListCommand: CLICommand {
    static let name = "list"
    static let summary = "List models from the account's catalog (or the bundled one)."
    static let help = CommandHelp(
        command: "models list",
        overview: """
        List models. By default uses a fresh catalog from the backend's /models, falling back to the bundled catalog on \
        failures other than authentication. --refresh requires a successful fetch; --cached-only uses no network (in a \
        new process that is the bundled catalog).
        """,
        options: [
            .flag("--refresh", "Require a successful network refresh."),
            .flag("--cached-only", "No network I/O."),
            .flag("--json", "Print one JSON object."),
            .value("--endpoint", "url", "The catalog's base URL (default: OPENAI_BASE_URL or https://api.openai.com/v1 with an API key, else https://chatgpt.com/backend-api/codex).").aliased("--base-url"),
            .value("--auth", "source", "Use only this credential: apikey, codex or session.").suggesting(["apikey", "codex", "session"]),
            CLIAuth.secretsOption,
            CLIAuth.codexHomeOption,
        ]
    )

    static func run(_ arguments: [String]) async -> Int32 {
        let validate: (ParsedArguments) throws -> Void = { parsed in
            try parsed.expectNoPositionals()
            guard !(parsed.has("--refresh") && parsed.has("--cached-only")) else { throw UsageError("--refresh and --cached-only cannot be combined") }
            _ = try SendOptions.endpoint(parsed.options["--endpoint"])
            _ = try SendOptions.authSource(parsed.options["--auth"])
        }
        return await runParsed(arguments, validate: validate) { parsed in
            let policy: CodexModelRefreshPolicy = parsed.has("--refresh") ? .refresh : (parsed.has("--cached-only") ? .cachedOnly : .preferCached)
            let http = DefaultHTTPClient()
            // The credential and endpoint every command resolves the same way (OPENAI_BASE_URL included). Looking at
            // the cache never writes: a renewed session would not be saved, nothing is created or chmodded.
            let store = CLIAuth.storeDirectory(parsed.options["--secrets"])
            let codexHome = parsed.options["--codex-home"].map { URL(fileURLWithPath: $0) }
            let credential = try ResponsesEnvironment.credentialIfPresent(
                codexHome: codexHome, savedCredentials: store, order: try SendOptions.authSource(parsed.options["--auth"]).map { [$0] } ?? ResponsesEnvironment.Source.allCases,
                httpClient: http, readOnly: policy == .cachedOnly
            )
            let snapshot: CodexModelCatalogSnapshot
            if let credential {
                // The endpoint (OPENAI_BASE_URL or --endpoint) matters only when the network is used.
                var endpoint: ResponsesEndpoint = credential.profile == .publicAPI ? .publicAPI : .chatGPT
                if policy != .cachedOnly {
                    if let base = try SendOptions.endpoint(parsed.options["--endpoint"]) {
                        endpoint = try ResponsesEndpoint(baseURL: base, profile: credential.profile)
                    } else if credential.profile == .publicAPI {
                        endpoint = try ResponsesEnvironment.publicAPI()
                    }
                }
                snapshot = try await ModelCatalogClient(endpoint: endpoint, httpClient: http, authProvider: credential.authProvider).catalog(policy: policy)
            } else if policy == .refresh {
                throw AgentRuntimeError(code: .notSignedIn, message: "not signed in; a refresh needs credentials")
            } else {
                var bundled = CodexModelCatalogSnapshot.bundled
                if policy != .cachedOnly { bundled.fallbackReason = "not signed in (set OPENAI_API_KEY, sign in with the Codex CLI, or run codexctl login)" }
                snapshot = bundled
            }
            print(snapshot, json: parsed.has("--json"))
        }
    }

    private static func print(_ snapshot: CodexModelCatalogSnapshot, json: Bool) {
        if json {
            let models: [JSONValue] = snapshot.models.map { model in
                [
                    "id": .string(model.model.rawValue), "display_name": .string(model.displayName),
                    "default_effort": .string(model.defaultReasoningEffort.rawValue),
                    "efforts": .array(model.supportedReasoningEfforts.map { .string($0.rawValue) }),
                    "context_window": .number(JSONNumber(model.contextWindow)), "visible": .bool(model.isVisible),
                ]
            }
            var document: JSONObject = ["source": .string(snapshot.source.rawValue), "stale": .bool(snapshot.isStale), "models": .array(models)]
            if let reason = snapshot.fallbackReason { document["fallback_reason"] = .string(reason) }
            Console.exactLine(JSONValue.object(document).compactString())
            return
        }
        if let reason = snapshot.fallbackReason {
            Console.error("warning: the catalog could not be fetched (\(Console.display(reason))); showing the \(snapshot.source == .cache ? "cached" : "bundled") one\n")
        }
        Console.line("source: \(snapshot.source.rawValue)\(snapshot.isStale ? " (stale)" : "")")
        for model in snapshot.models {
            let efforts = model.supportedReasoningEfforts.map(\.rawValue).joined(separator: ",")
            Console.line("\(Console.display(model.model.rawValue))  \(Console.display(model.displayName))  effort \(model.defaultReasoningEffort.rawValue) [\(efforts)]  \(model.contextWindow) tokens\(model.isVisible ? "" : "  (hidden)")")
        }
    }
}
