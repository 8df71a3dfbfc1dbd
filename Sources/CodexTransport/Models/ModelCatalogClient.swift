public import CodexCore
import CodexSchema
public import Foundation
import Synchronization

/// How much network a model-catalog lookup may use.
public enum CodexModelRefreshPolicy: Sendable, Hashable {
    /// A fresh cache if there is one, else a refresh; on failures other than authentication, a stale
    /// cache or the bundled catalog.
    case preferCached
    /// Always refresh; failures propagate.
    case refresh
    /// No network: the cache (even stale) or the bundled catalog.
    case cachedOnly
}

/// A model catalog with its provenance.
public struct CodexModelCatalogSnapshot: Sendable, Hashable {
    /// Where the models came from.
    public enum Source: String, Sendable, Hashable {
        /// Fetched (or revalidated) just now.
        case remote
        /// From the in-memory cache.
        case cache
        /// The catalog shipped with CodexKit.
        case bundled
    }

    /// The models, in the server's priority order.
    public var models: [CodexModelInfo]
    /// Where they came from.
    public var source: Source
    /// When they were fetched, for remote and cached catalogs.
    public var fetchedAt: Date?
    /// Whether the cache is past its freshness window or marked stale by a newer `X-Models-Etag`.
    public var isStale: Bool
    /// Why the models came from the cache or the bundled catalog although a fetch was tried: the fetch's
    /// log-safe error (`nil` when nothing failed).
    public var fallbackReason: String?

    /// The models to show in a picker.
    public var visibleModels: [CodexModelInfo] { models.filter(\.isVisible) }


    /// Creates a snapshot.
    public init(models: [CodexModelInfo], source: Source, fetchedAt: Date?, isStale: Bool, fallbackReason: String? = nil) {
        self.models = models
        self.source = source
        self.fetchedAt = fetchedAt
        self.isStale = isStale
        self.fallbackReason = fallbackReason
    }

    /// The bundled catalog.
    public static var bundled: CodexModelCatalogSnapshot {
        CodexModelCatalogSnapshot(models: CodexModelCatalog.bundled.models, source: .bundled, fetchedAt: nil, isStale: false)
    }
}

/// Fetches `GET {base}/models?client_version=…` with the signed-in session and caches the result per
/// account (fresh for 300 s, revalidated with `If-None-Match`; a 304 renews it). A `/responses` reply
/// whose `X-Models-Etag` differs from the cached ETag marks that account's cache stale. Authentication
/// failures always propagate; bodies above 8 MiB are refused; unknown model IDs and efforts are kept.
public final class ModelCatalogClient: Sendable {
    private struct CacheEntry {
        var catalog: [CodexModelInfo]
        var etag: String?
        var fetchedAt: Date
        var markedStale: Bool
    }

    /// The default `client_version`.
    public static let defaultClientVersion = "0.153.0"
    /// The largest catalog body accepted: 8 MiB.
    public static let maximumBodyBytes = 8 * 1024 * 1024

    private let endpoint: ResponsesEndpoint
    private let httpClient: any HTTPClient
    private let authProvider: any AuthProvider
    private let clientVersion: String
    private let freshness: TimeInterval
    private let wallClock: any AgentWallClock
    private let bundled: CodexModelCatalog
    private let cache = Mutex<[String: CacheEntry]>([:])

    /// Creates a catalog client.
    ///
    /// - Parameters:
    ///   - endpoint: The backend (its `/models`).
    ///   - httpClient: The HTTP seam.
    ///   - authProvider: Supplies credentials; its binding keys the cache.
    ///   - clientVersion: Sent as `client_version`. Default `0.153.0`.
    ///   - freshness: How long a fetched catalog stays fresh. Default 300 s.
    ///   - wallClock: The date source.
    ///   - bundled: The fallback catalog.
    public init(
        endpoint: ResponsesEndpoint, httpClient: any HTTPClient, authProvider: any AuthProvider, clientVersion: String = defaultClientVersion,
        freshness: TimeInterval = 300, wallClock: any AgentWallClock = SystemWallClock(), bundled: CodexModelCatalog = .bundled
    ) {
        self.endpoint = endpoint
        self.httpClient = httpClient
        self.authProvider = authProvider
        self.clientVersion = clientVersion
        self.freshness = freshness
        self.wallClock = wallClock
        self.bundled = bundled
    }

    /// The catalog under `policy`.
    ///
    /// - Throws: Authentication errors always; other errors only under `.refresh`.
    public func catalog(policy: CodexModelRefreshPolicy = .preferCached) async throws -> CodexModelCatalogSnapshot {
        if policy == .cachedOnly {
            guard let binding = await authProvider.currentBinding(), let entry = cache.withLock({ $0[binding] }) else { return bundledSnapshot }
            return snapshot(entry, source: .cache)
        }
        let credentials = try await authProvider.credentials()
        let binding = credentials.binding
        if policy == .preferCached, let entry = cache.withLock({ $0[binding] }), !isStale(entry) {
            return snapshot(entry, source: .cache)
        }
        do {
            let entry = try await fetch(credentials: credentials, cached: cache.withLock { $0[binding] })
            cache.withLock { $0[binding] = entry }
            return snapshot(entry, source: .remote)
        } catch {
            if policy == .refresh || error is CancellationError || Self.isAuthenticationFailure(error) { throw error }
            var fallback = cache.withLock({ $0[binding] }).map { snapshot($0, source: .cache) } ?? bundledSnapshot
            // Only a typed error's text is log-safe; another error is named by its type alone.
            fallback.fallbackReason = (error as? AgentRuntimeError)?.description ?? "an unexpected \(String(describing: type(of: error))) error"
            return fallback
        }
    }

    /// The models cached for account `binding` (fresh or stale), or `nil` when none were fetched for it.
    public func cachedModels(for binding: String) -> [CodexModelInfo]? {
        cache.withLock { $0[binding]?.catalog }
    }

    /// Marks the account's cache stale when a `/responses` reply's `X-Models-Etag` differs from its ETag.
    public func noteModelsETag(_ etag: String, binding: String) {
        cache.withLock { cache in
            guard var entry = cache[binding], entry.etag != etag else { return }
            entry.markedStale = true
            cache[binding] = entry
        }
    }

    private var bundledSnapshot: CodexModelCatalogSnapshot {
        CodexModelCatalogSnapshot(models: bundled.models, source: .bundled, fetchedAt: nil, isStale: false)
    }

    private func isStale(_ entry: CacheEntry) -> Bool {
        entry.markedStale || wallClock.now().timeIntervalSince(entry.fetchedAt) >= freshness || wallClock.now() < entry.fetchedAt
    }

    private func snapshot(_ entry: CacheEntry, source: CodexModelCatalogSnapshot.Source) -> CodexModelCatalogSnapshot {
        CodexModelCatalogSnapshot(models: entry.catalog, source: source, fetchedAt: entry.fetchedAt, isStale: source == .remote ? false : isStale(entry))
    }

    static func isAuthenticationFailure(_ error: any Error) -> Bool {
        guard let error = error as? AgentRuntimeError else { return false }
        return [.unauthorized, .forbidden, .notSignedIn, .refreshFailed, .accountMismatch].contains(error.code)
    }

    private func fetch(credentials: AuthCredentials, cached: CacheEntry?) async throws -> CacheEntry {
        var headers: HTTPHeaders = ["Accept": "application/json", "originator": "codexkit"]
        AuthenticationMiddleware.authorize(&headers, with: credentials)
        if let etag = cached?.etag { headers["If-None-Match"] = etag }
        let request = HTTPRequest(
            method: "GET", url: endpoint.url("models", query: [("client_version", clientVersion)]), headers: headers,
            timeouts: HTTPTimeouts(connect: .seconds(10), firstByte: .seconds(30), idle: .seconds(30), total: .seconds(60))
        )
        let response = try await httpClient.send(request)
        let now = wallClock.now()
        if response.statusCode == 304, var cached {
            response.body.cancel()
            cached.fetchedAt = now
            cached.markedStale = false
            return cached
        }
        guard response.isSuccess else {
            let body = (try? await response.body.prefix(upTo: ResponsesErrorMapper.maximumErrorBodyBytes)) ?? []
            throw ResponsesErrorMapper.error(status: response.statusCode, headers: response.headers, body: body, now: now).redacting(credentials.secrets)
        }
        let body = try await response.body.collect(upTo: Self.maximumBodyBytes)
        return CacheEntry(catalog: try Self.parse(body), etag: response.headers["etag"], fetchedAt: now, markedStale: false)
    }

    /// Parses a catalog body: the Codex backend's `{"models":[…]}` (in ascending `priority`), or the
    /// public API's `{"object":"list","data":[{"id":…}]}` (sorted by ID; what it does not say about a
    /// model comes from the bundled catalog when that knows the ID, else the defaults).
    ///
    /// - Throws: ``CodexCore/AgentRuntimeError`` `responses_event_malformed` when the body is not a catalog.
    public static func parse(_ body: [UInt8]) throws -> [CodexModelInfo] {
        let document: JSONValue
        do {
            document = try JSONValue(parsing: body, options: .init(maximumDepth: 64, maximumBytes: maximumBodyBytes))
        } catch {
            throw AgentRuntimeError(.malformed("the model catalog is not valid JSON", underlying: error))
        }
        if document["models"] == nil, case .array(let listed)? = document["data"] {
            let ids = Set(listed.compactMap { $0["id"]?.stringValue }.filter { !$0.isEmpty })
            return ids.sorted().map { id in CodexModelCatalog.bundled.info(for: CodexModel(rawValue: id)) ?? CodexModelInfo(model: CodexModel(rawValue: id), displayName: id) }
        }
        guard case .array(let entries)? = document["models"] else {
            throw AgentRuntimeError(.malformed("the model catalog has no models array"))
        }
        let ranked = entries.enumerated().compactMap { offset, entry -> (Int, Int, CodexModelInfo)? in
            guard let slug = entry["slug"]?.stringValue, !slug.isEmpty else { return nil }
            let efforts = (entry["supported_reasoning_levels"]?.arrayValue ?? []).compactMap { $0["effort"]?.stringValue.map(ReasoningEffort.init(rawValue:)) }
            let modalities = (entry["input_modalities"]?.arrayValue ?? []).compactMap { $0.stringValue.map(CodexModelInfo.Modality.init(rawValue:)) }
            let info = CodexModelInfo(
                model: CodexModel(rawValue: slug),
                displayName: entry["display_name"]?.stringValue ?? slug,
                description: entry["description"]?.stringValue,
                defaultReasoningEffort: entry["default_reasoning_level"]?.stringValue.map(ReasoningEffort.init(rawValue:)) ?? .medium,
                supportedReasoningEfforts: efforts.isEmpty ? [.low, .medium, .high] : efforts,
                inputModalities: modalities.isEmpty ? [.text, .image] : modalities,
                contextWindow: entry["context_window"]?.numberValue?.intValue ?? 272_000,
                isVisible: (entry["visibility"]?.stringValue ?? "list") == "list",
                supportsParallelToolCalls: entry["supports_parallel_tool_calls"]?.boolValue ?? false,
                supportsImageDetailOriginal: entry["supports_image_detail_original"]?.boolValue ?? false,
                supportsReasoningSummaries: entry["supports_reasoning_summaries"]?.boolValue ?? false
            )
            return (entry["priority"]?.numberValue?.intValue ?? Int.max, offset, info)
        }
        return ranked.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map(\.2)
    }
}
