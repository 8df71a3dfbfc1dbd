import Foundation

/// The Python interpreter the telemetry tests run the OTLP receiver with: a virtual environment at
/// `.build/otlp-venv` holding `opentelemetry-proto` 1.45.2 (and, through it, `protobuf`) from PyPI.
/// `.ci/run` creates it; when it is missing (a developer's first `swift test`), the first test that asks
/// creates it and every other test waits for that one install.
/// `CODEXKIT_OTLP_PYTHON` names another interpreter that has `opentelemetry-proto` installed.
public enum OTLPTestPython {
    /// The `opentelemetry-proto` version the tests pin.
    public static let protoVersion = "1.45.2"

    /// The receiver script, `Tests/OTLPReceiver/otlp_receiver.py`.
    public static var receiverScript: String {
        TestPythonEnvironment.packageRoot.appendingPathComponent("Tests/OTLPReceiver/otlp_receiver.py").path
    }

    private static let environment = TestPythonEnvironment(
        package: "opentelemetry-proto", version: protoVersion, directory: ".build/otlp-venv",
        marker: ".codexkit-otlp-proto-\(protoVersion)", overrideVariable: "CODEXKIT_OTLP_PYTHON", purpose: "the telemetry tests"
    )

    /// The interpreter's path, creating the environment on first use.
    /// - Returns: The path of a `python3` that can import `opentelemetry.proto`.
    /// - Throws: ``TestPythonEnvironment/Failure`` when the environment cannot be created.
    public static func interpreter() async throws -> String {
        try await environment.interpreter()
    }
}
