// swift-tools-version: 6.1
// CodexKit: a Linux-first Swift SDK for the OpenAI Responses API (ChatGPT/Codex backend and public API).
// The module map and dependency direction are fixed in Docs/Architecture.md;
// Scripts/check-imports.sh enforces them on every `import` in Sources/.
import PackageDescription

/// One settings block for every Swift target (STYLE rule 4): Swift 6 mode plus the upcoming features.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "CodexKit",
    products: [
        .library(name: "CodexSchema", targets: ["CodexSchema"]),
        .library(name: "CodexCore", targets: ["CodexCore"]),
        .library(name: "CodexTransport", targets: ["CodexTransport"]),
        .library(name: "CodexRecovery", targets: ["CodexRecovery"]),
        .library(name: "CodexStorageSQLite", targets: ["CodexStorageSQLite"]),
        .library(name: "CodexStoragePostgres", targets: ["CodexStoragePostgres"]),
        .library(name: "CodexRuntime", targets: ["CodexRuntime"]),
        // Test doubles for hosts' tests (and ours): the scripted HTTP client, the fixture backend, the
        // manual clocks, the in-memory log sink and the loopback server. Production modules never import it.
        .library(name: "CodexKitTesting", targets: ["CodexKitTesting"]),
        .executable(name: "codexctl", targets: ["codexctl"]),
    ],
    targets: [
        .target(
            name: "CodexSchema",
            swiftSettings: swiftSettings,
            // Floating-point conversions call libm; the module does not need Foundation for anything else.
            linkerSettings: [.linkedLibrary("m", .when(platforms: [.linux]))]
        ),
        .target(name: "CodexCore", dependencies: ["CodexSchema"], swiftSettings: swiftSettings),
        // The system libcurl through a module map: the Linux HTTP engine, imported privately by CodexTransport.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "CodexTransport", dependencies: ["CodexCore", "CodexSchema", "CCurl"], swiftSettings: swiftSettings),
        .target(name: "CodexRecovery", dependencies: ["CodexTransport", "CodexCore", "CodexSchema"], swiftSettings: swiftSettings),
        // The system SQLite through a module map (system libraries only this way).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "CodexStorageSQLite", dependencies: ["CodexCore", "CSQLite"], swiftSettings: swiftSettings),
        // The system libpq (the PostgreSQL client library) through a module map, for the PostgreSQL store.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .target(name: "CodexStoragePostgres", dependencies: ["CodexCore", "CLibPQ"], swiftSettings: swiftSettings),
        .target(name: "CodexRuntime", dependencies: ["CodexCore", "CodexSchema", "CodexTransport", "CodexRecovery"], swiftSettings: swiftSettings),
        // The loopback HTTP/1.1 server: scripted replies over real sockets, for tests, benchmarks and the
        // offline demo (one server for all of them).
        .target(name: "CodexLoopback", swiftSettings: swiftSettings),
        // The testing product: test doubles a host's tests use, and the loopback server (re-exported).
        .target(name: "CodexKitTesting", dependencies: ["CodexCore", "CodexTransport", "CodexLoopback"], swiftSettings: swiftSettings),
        // Test support shared by several test targets: fixture loaders, process and file helpers, the
        // store conformance suite; it re-exports the testing product.
        .target(
            name: "CodexTestSupport",
            dependencies: ["CodexCore", "CodexSchema", "CodexKitTesting"],
            path: "Tests/CodexTestSupport",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "codexctl",
            dependencies: [
                "CodexSchema", "CodexCore", "CodexTransport", "CodexRecovery", "CodexStorageSQLite", "CodexStoragePostgres", "CodexRuntime", "CodexLoopback",
                "CodexKitTesting",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CodexSchemaTests",
            dependencies: ["CodexSchema", "CodexTestSupport"],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "CodexCoreTests", dependencies: ["CodexCore", "CodexSchema", "CodexTestSupport"], swiftSettings: swiftSettings),
        // Transport scenarios measured in a process of their own (memory, descriptors).
        .executableTarget(
            name: "TransportFixture",
            dependencies: ["CodexTransport", "CodexCore", "CodexTestSupport"],
            path: "Tests/TransportFixture",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CodexTransportTests",
            dependencies: ["CodexTransport", "CodexCore", "CodexSchema", "CodexTestSupport", "TransportFixture"],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        // A host application the recovery process tests launch as real child processes (and kill); it
        // runs the handoff through the recovery engine (`--api engine`) or the runtime facade (`--api runtime`).
        .executableTarget(
            name: "RecoveryIntegrationFixture",
            dependencies: ["CodexRuntime", "CodexRecovery", "CodexTransport", "CodexCore", "CodexSchema"],
            path: "Tests/RecoveryIntegrationFixture",
            swiftSettings: swiftSettings
        ),
        // The recovery engine's suite.
        .testTarget(
            name: "CodexRecoveryTests",
            dependencies: ["CodexRecovery", "CodexTransport", "CodexCore", "CodexSchema", "CodexTestSupport", "RecoveryIntegrationFixture"],
            swiftSettings: swiftSettings
        ),
        // The public-API proof: the recovery handoff as a host writes it against AgentRuntime, importing
        // public API only.
        .testTarget(
            name: "CodexKitRecoveryIntegrationTests",
            dependencies: ["CodexRuntime", "CodexRecovery", "CodexTransport", "CodexCore", "CodexSchema", "CodexTestSupport", "RecoveryIntegrationFixture"],
            swiftSettings: swiftSettings
        ),
        // Appends to a shared database from another process (concurrency and SIGKILL tests).
        .executableTarget(
            name: "StorageFixture",
            dependencies: ["CodexStorageSQLite", "CodexCore"],
            path: "Tests/StorageFixture",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CodexStorageSQLiteTests",
            dependencies: ["CodexStorageSQLite", "CodexCore", "CodexTestSupport", "StorageFixture"],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        // A host that is killed mid-turn (the runtime crash test).
        .executableTarget(
            name: "RuntimeFixture",
            dependencies: [
                "CodexRuntime", "CodexRecovery", "CodexStorageSQLite", "CodexStoragePostgres", "CodexCore", "CodexSchema", "CodexTransport", "CodexLoopback",
                "CodexKitTesting", "CodexTestSupport",
            ],
            path: "Tests/RuntimeFixture",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CodexRuntimeTests",
            dependencies: ["CodexRuntime", "CodexCore", "CodexSchema", "CodexTransport", "CodexStorageSQLite", "CSQLite", "CodexTestSupport", "RuntimeFixture"],
            swiftSettings: swiftSettings
        ),
        // The PostgreSQL store against a private cluster the tests start (initdb, a Unix socket only).
        .testTarget(
            name: "CodexStoragePostgresTests",
            dependencies: ["CodexStoragePostgres", "CodexCore", "CodexRuntime", "CodexTestSupport", "RuntimeFixture"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "CodexLoopbackTests", dependencies: ["CodexTestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "CodexKitTestingTests",
            dependencies: ["CodexKitTesting", "CodexCore", "CodexRuntime", "CodexSchema", "CodexTransport", "CodexStorageSQLite", "CodexTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "codexctlTests",
            dependencies: ["codexctl", "CodexTestSupport", "CodexSchema", "CodexCore", "CodexTransport", "CodexRecovery", "CodexStorageSQLite"],
            swiftSettings: swiftSettings
        ),
    ]
)
