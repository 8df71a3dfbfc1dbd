import CodexCore
import CodexRecovery
import CodexRuntime
import CodexSchema
import CodexStoragePostgres
import CodexStorageSQLite
import Foundation

/// An error as a command reports it: a stable code and a one-line message that never carries a
/// credential, a prompt or model output (the SDK's typed errors are built that way). An error of
/// another type is reported by its kind only, never as a raw Foundation dump.
struct CLIFailure {
    let code: String
    let message: String
    /// The service's request ID of a failed request (already redacted by the SDK), to quote to support.
    var requestID: String?

    init(code: String, message: String, requestID: String? = nil) {
        self.code = code
        self.message = message
        self.requestID = requestID
    }

    init(_ error: any Error) {
        switch error {
        case let error as AgentRuntimeError:
            self.init(code: error.code.rawValue, message: error.message, requestID: error.http?.requestID.flatMap { $0.isEmpty ? nil : $0 })
        case let error as AgentRecoveryError:
            self.init(code: error.code.rawValue, message: error.message + (error.systemErrorNumber.map { " (errno \($0))" } ?? ""))
        case let error as SQLiteStoreError:
            // A damaged row is named (its table and key), so `db check` and a restore can find it.
            let row = error.table.map { " (table \($0)" + (error.rowKey.map { ", row \($0)" } ?? "") + ")" } ?? ""
            self.init(code: error.code.rawValue, message: error.message + row)
        case let error as PostgresStoreError: self.init(code: error.code.rawValue, message: error.message)
        case let error as MemoryStoreError: self.init(code: error.code.rawValue, message: error.message)
        case let error as AgentPriceTableError: self.init(code: error.code.rawValue, message: error.message)
        case let error as OTLPExporterError: self.init(code: error.code.rawValue, message: "\(error.setting): \(error.message)")
        case let error as MCPError: self.init(code: error.code.rawValue, message: error.message + (error.server.map { " (MCP server \($0))" } ?? ""))
        case let error as CodexSchemaError: self.init(code: error.code.rawValue, message: error.message)
        case let error as UsageError: self.init(code: "usage", message: error.message)
        case let error as CLIFailure.Thrown: self.init(code: error.code, message: error.message)
        case let error as CocoaError: self.init(code: "file_system_error", message: Self.fileSystemMessage(error))
        case let error as BoundedInputFile.Failure: self.init(code: "file_system_error", message: error.description)
        default: self.init(code: "failed", message: "an unexpected \(String(describing: type(of: error))) error")
        }
    }

    /// `cannot write /path: Read-only file system`: what Foundation's file error was doing, its path,
    /// and the system's cause when it carries one.
    static func fileSystemMessage(_ error: CocoaError) -> String {
        let verb = switch error.code.rawValue {
        case 256..<512: "read"
        case 512..<1024: "write"
        default: "use"
        }
        let path = error.filePath ?? error.url?.path ?? "a file"
        var cause = ""
        if let underlying = error.underlying as NSError?, underlying.domain == NSPOSIXErrorDomain {
            cause = ": " + String(cString: strerror(Int32(truncatingIfNeeded: underlying.code)))
        }
        return "cannot \(verb) \(path)\(cause)"
    }

    /// A failure the command has already reported in its own output (a check that found problems): the
    /// command exits 1 and nothing more is printed.
    struct Reported: Error {}

    /// A failure a command raises itself.
    struct Thrown: Error {
        let code: String
        let message: String
    }

    /// `{"error": {"code": …, "message": …}}` (with `request_id` when the service gave one), the shape
    /// every `--json` command prints on stdout.
    var json: JSONValue {
        var error: JSONObject = ["code": .string(code), "message": .string(message)]
        if let requestID { error["request_id"] = .string(requestID) }
        return ["error": .object(error)]
    }

    /// Prints the failure: as JSON on stdout with `json`, else `Error: <code>: <message>` on stderr, with
    /// `(request <id>)` when the service gave one.
    func report(json asJSON: Bool) {
        if asJSON {
            Console.exactLine(json.compactString())
        } else {
            Console.error(textLine + "\n")
        }
    }

    /// The text form: `Error: <code>: <message>`, with the service's request ID when there is one.
    var textLine: String {
        "Error: \(code): \(Console.display(message))" + (requestID.map { " (request \(Console.display($0)))" } ?? "")
    }
}
