/// Runs files in the format of the official JSON-Schema-Test-Suite against ``JSONSchemaValidator``.
///
/// Two file shapes are understood:
/// - the suite's own: an array of groups `{"description", "schema", "tests": [{"description", "data", "valid"}]}`;
///   a test passes when the validator's verdict equals `valid` (a group whose schema does not compile
///   fails all its tests);
/// - CodexKit's rejected-schema list: an array of `{"description", "schema", "locations"}`; an entry passes
///   when compilation fails with `unsupported_schema_keyword` at one of the listed `locations`.
///
/// ```swift
/// let outcomes = try JSONSchemaTestSuite.run(fileContents: bytes)
/// let failed = outcomes.filter { !$0.passed }
/// ```
public enum JSONSchemaTestSuite {
    /// The result of one test (or one rejected-schema entry).
    public struct Outcome: Sendable, Hashable {
        /// The group's `description`.
        public let group: String
        /// The test's `description` (empty for a rejected-schema entry).
        public let test: String
        /// Whether the verdict matched the expectation.
        public let passed: Bool
        /// Why it failed, log-safe; empty when it passed.
        public let detail: String
    }

    /// Parses one suite-format file and runs every test in it.
    ///
    /// - Parameters:
    ///   - fileContents: The file's UTF-8 bytes.
    ///   - limits: Limits for compiling each group's schema.
    /// - Returns: One outcome per test, in file order.
    /// - Throws: ``CodexSchemaError`` when the file is not JSON or not in either suite shape.
    public static func run(fileContents: [UInt8], limits: JSONSchemaLimits = .init()) throws(CodexSchemaError) -> [Outcome] {
        let document = try JSONValue(parsing: fileContents, options: .init(maximumDepth: 512))
        guard case .array(let groups) = document else { throw malformed("a suite file must be a JSON array") }
        var outcomes: [Outcome] = []
        for group in groups {
            guard let schema = group["schema"] else { throw malformed("a group has no schema") }
            let description = group["description"]?.stringValue ?? ""
            if case .array(let locations)? = group["locations"] {
                outcomes.append(runRejected(description, schema, locations.compactMap(\.stringValue), limits))
            } else if case .array(let tests)? = group["tests"] {
                outcomes.append(contentsOf: try runGroup(description, schema, tests, limits))
            } else {
                throw malformed("a group has neither tests nor locations")
            }
        }
        return outcomes
    }

    private static func runGroup(
        _ group: String, _ schema: JSONValue, _ tests: [JSONValue], _ limits: JSONSchemaLimits
    ) throws(CodexSchemaError) -> [Outcome] {
        let validator: JSONSchemaValidator
        do {
            validator = try JSONSchemaValidator(schema: schema, limits: limits)
        } catch {
            return tests.map {
                Outcome(group: group, test: $0["description"]?.stringValue ?? "", passed: false, detail: "schema did not compile: \(error)")
            }
        }
        var outcomes: [Outcome] = []
        for test in tests {
            let name = test["description"]?.stringValue ?? ""
            guard let data = test["data"], let expected = test["valid"]?.boolValue else {
                throw malformed("a test needs data and a Boolean valid")
            }
            do {
                let actual = try validator.isValid(data)
                let full = try validator.validate(data)
                if actual != full.isValid {
                    outcomes.append(Outcome(group: group, test: name, passed: false, detail: "verdict and error collection disagree"))
                } else {
                    outcomes.append(Outcome(
                        group: group, test: name, passed: actual == expected,
                        detail: actual == expected ? "" : "expected \(expected ? "valid" : "invalid"), got \(actual ? "valid" : "invalid")"
                    ))
                }
            } catch {
                outcomes.append(Outcome(group: group, test: name, passed: false, detail: "validation failed: \(error)"))
            }
        }
        return outcomes
    }

    private static func runRejected(_ group: String, _ schema: JSONValue, _ locations: [String], _ limits: JSONSchemaLimits) -> Outcome {
        do {
            _ = try JSONSchemaValidator(schema: schema, limits: limits)
            return Outcome(group: group, test: "", passed: false, detail: "schema compiled but must be rejected")
        } catch {
            guard error.code == .unsupportedSchemaKeyword else {
                return Outcome(group: group, test: "", passed: false, detail: "rejected with \(error.code), not unsupported_schema_keyword")
            }
            let reported = error.unsupportedLocations.isEmpty ? [error.schemaPointer ?? ""] : error.unsupportedLocations
            let unexpected = reported.filter { !locations.contains($0) }
            if let first = unexpected.first {
                return Outcome(group: group, test: "", passed: false, detail: "reported location \(first) is not an expected location")
            }
            return Outcome(group: group, test: "", passed: true, detail: "")
        }
    }

    private static func malformed(_ message: String) -> CodexSchemaError {
        CodexSchemaError(code: .invalidSchema, message: "not a test-suite file: \(message)")
    }
}
