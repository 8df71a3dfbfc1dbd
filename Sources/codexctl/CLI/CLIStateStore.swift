import CodexCore
import CodexStoragePostgres
import CodexStorageSQLite
import Foundation

/// What the state commands need of a store, on either engine: the store contract with durable turns'
/// journals and approvals, the usage ledger, and its schema version.
protocol CLIStateStore: TurnJournaling, UsageRecording {
    /// The number of migrations applied.
    func appliedMigrations() async throws -> Int
}

extension SQLiteRuntimeStateStore: CLIStateStore {
    func appliedMigrations() async throws -> Int { try schemaVersion }
}

extension PostgresRuntimeStateStore: CLIStateStore {
    func appliedMigrations() async throws -> Int { try await schemaVersion() }
}

/// Opens the store a `--db` value names: a PostgreSQL database for a `postgres://` or `postgresql://` URL
/// or a libpq `key=value` connection string (`postgresql://` alone means libpq's `PG…` environment
/// variables), otherwise a SQLite file.
enum CLIStateStores {
    /// The PostgreSQL schema of the store's tables: `CODEXKIT_POSTGRES_SCHEMA`, else `codexkit`.
    static func postgresSchema(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        environment["CODEXKIT_POSTGRES_SCHEMA"].flatMap { $0.isEmpty ? nil : $0 } ?? "codexkit"
    }

    /// Whether `location` names a PostgreSQL database.
    static func isPostgres(_ location: String) -> Bool {
        PostgresRuntimeStateStore.isConnectionURL(location) || CLIStorePaths.isConnectionString(location)
    }

    /// The store at `location`, opened for writing (a SQLite file is created only when `creating`).
    static func open(_ location: String, creating: Bool) async throws -> any CLIStateStore {
        if isPostgres(location) {
            return try await PostgresRuntimeStateStore(connectionString: location, schema: postgresSchema())
        }
        // A command that changes a store never creates one from a mistyped path (only `db migrate` does).
        guard creating || FileManager.default.fileExists(atPath: location) else {
            throw SQLiteStoreError(code: .notFound, message: "cannot open \(location): no such file")
        }
        return try SQLiteRuntimeStateStore(path: location)
    }

    /// The store at `location` opened for looking only: nothing is created, migrated or changed.
    static func openReadOnly(_ location: String) async throws -> any CLIStateStore {
        if isPostgres(location) {
            return try await PostgresRuntimeStateStore(readingFrom: location, schema: postgresSchema())
        }
        return try SQLiteRuntimeStateStore(readingAt: location)
    }
}
