/// The PostgreSQL state store's schema: named, ordered, forward-only migrations recorded in
/// `codex_migrations` inside the store's own PostgreSQL schema (default `codexkit`), applied by
/// ``PostgresMigrator`` under an advisory lock.
enum PostgresStateSchema {
    /// One migration: its place, its name (recorded), its SQL (run as one batch).
    struct Migration: Sendable {
        let position: Int
        let name: String
        let sql: String
    }

    static let migrations: [Migration] = [
        Migration(position: 1, name: "create_state_store", sql: """
            CREATE TABLE codex_migrations (
                position integer PRIMARY KEY,
                name text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE TABLE threads (
                id text PRIMARY KEY,
                updated_at double precision NOT NULL,
                body bytea NOT NULL
            );
            CREATE INDEX threads_by_update ON threads(updated_at DESC, id);
            CREATE SEQUENCE history_positions;
            CREATE TABLE history_items (
                thread_id text NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
                position bigint NOT NULL DEFAULT nextval('history_positions'),
                kind text NOT NULL,
                body bytea NOT NULL,
                PRIMARY KEY (thread_id, position)
            );
            CREATE TABLE turns (
                id text PRIMARY KEY,
                thread_id text NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
                started_at double precision NOT NULL,
                seq bigint GENERATED ALWAYS AS IDENTITY,
                body bytea NOT NULL
            );
            CREATE INDEX turns_by_thread ON turns(thread_id, started_at DESC, seq DESC);
            CREATE TABLE blobs (
                key text PRIMARY KEY,
                size bigint NOT NULL
            );
            CREATE TABLE blob_chunks (
                key text NOT NULL REFERENCES blobs(key) ON DELETE CASCADE,
                ordinal integer NOT NULL,
                data bytea NOT NULL,
                PRIMARY KEY (key, ordinal)
            );
            CREATE TABLE history_images (
                thread_id text NOT NULL,
                position bigint NOT NULL,
                ordinal integer NOT NULL,
                attachment_id text NOT NULL,
                mime_type text NOT NULL,
                storage_key text NOT NULL REFERENCES blobs(key),
                metadata bytea,
                PRIMARY KEY (thread_id, position, ordinal),
                FOREIGN KEY (thread_id, position) REFERENCES history_items(thread_id, position) ON DELETE CASCADE
            );
            CREATE INDEX history_images_by_key ON history_images(storage_key);
            CREATE TABLE turn_journal (
                turn_id text NOT NULL,
                sequence integer NOT NULL,
                thread_id text NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
                body bytea NOT NULL,
                PRIMARY KEY (turn_id, sequence)
            );
            CREATE INDEX turn_journal_by_thread ON turn_journal(thread_id);
            CREATE TABLE approvals (
                id text PRIMARY KEY,
                thread_id text NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
                requested_at double precision NOT NULL,
                body bytea NOT NULL
            );
            CREATE INDEX approvals_by_thread ON approvals(thread_id, requested_at);
            CREATE TABLE codex_owners (
                owner_id text PRIMARY KEY,
                lock_key bigint NOT NULL,
                acquired_at double precision NOT NULL
            );
            CREATE TABLE codex_write_log (
                key uuid PRIMARY KEY
            );
            """),
        // The usage ledger: one row per model response, by turn and request number; the key columns
        // repeat what the body holds, for the filters.
        Migration(position: 2, name: "create_usage_records", sql: """
            CREATE TABLE usage_records (
                turn_id text NOT NULL,
                sequence bigint NOT NULL,
                thread_id text NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
                account_binding text,
                model text NOT NULL,
                recorded_at double precision NOT NULL,
                body bytea NOT NULL,
                PRIMARY KEY (turn_id, sequence)
            );
            CREATE INDEX usage_records_by_thread ON usage_records(thread_id, recorded_at);
            CREATE INDEX usage_records_by_time ON usage_records(recorded_at);
            """),
    ]

    /// The tables and columns the migrations create, in column order: what a deep check expects.
    static let expectedColumns: [(table: String, columns: [String])] = [
        ("codex_migrations", ["position", "name", "applied_at"]),
        ("threads", ["id", "updated_at", "body"]),
        ("history_items", ["thread_id", "position", "kind", "body"]),
        ("turns", ["id", "thread_id", "started_at", "seq", "body"]),
        ("blobs", ["key", "size"]),
        ("blob_chunks", ["key", "ordinal", "data"]),
        ("history_images", ["thread_id", "position", "ordinal", "attachment_id", "mime_type", "storage_key", "metadata"]),
        ("turn_journal", ["turn_id", "sequence", "thread_id", "body"]),
        ("approvals", ["id", "thread_id", "requested_at", "body"]),
        ("codex_owners", ["owner_id", "lock_key", "acquired_at"]),
        ("codex_write_log", ["key"]),
        ("usage_records", ["turn_id", "sequence", "thread_id", "account_binding", "model", "recorded_at", "body"]),
    ]
}
