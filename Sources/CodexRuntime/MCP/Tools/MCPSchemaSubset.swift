import CodexSchema

/// The part of a tool's input schema CodexSchema can enforce.
enum MCPSchemaSubset {
    /// `schema` without the keywords the validator does not support (everything that remains is
    /// enforced), and the JSON pointers of what was dropped. Extension keywords (`x-…`, such as MCP's
    /// `x-mcp-header`) assert nothing: they are removed without being reported. A schema that cannot be
    /// compiled at all (invalid, or over the work limits) falls back to `{"type": "object"}`.
    static func enforceable(_ schema: JSONValue) -> (schema: JSONValue, dropped: [String]) {
        var current = schema
        var dropped: [String] = []
        for _ in 0..<8 {
            do {
                _ = try JSONSchemaValidator(schema: current)
                return (current, dropped)
            } catch where error.code == .unsupportedSchemaKeyword && !error.unsupportedLocations.isEmpty {
                for location in error.unsupportedLocations {
                    guard let tokens = JSONPointer.tokens(location), remove(tokens[...], from: &current) else {
                        return fallback(dropped + [location])
                    }
                    if tokens.last?.hasPrefix("x-") != true { dropped.append(location) }
                }
            } catch {
                return fallback(dropped + [error.schemaPointer ?? "(root)"])
            }
        }
        return fallback(dropped)
    }

    private static func fallback(_ dropped: [String]) -> (schema: JSONValue, dropped: [String]) {
        (.object(JSONObject([("type", .string("object"))])), dropped)
    }

    /// Removes the member `tokens` points at; false when the path does not lead to one.
    private static func remove(_ tokens: ArraySlice<String>, from value: inout JSONValue) -> Bool {
        guard let first = tokens.first else { return false }
        switch value {
        case .object(var object):
            if tokens.count == 1 {
                guard object[first] != nil else { return false }
                object[first] = nil
                value = .object(object)
                return true
            }
            guard var child = object[first], remove(tokens.dropFirst(), from: &child) else { return false }
            object[first] = child
            value = .object(object)
            return true
        case .array(var elements):
            guard let index = Int(first), elements.indices.contains(index), tokens.count > 1 else { return false }
            guard remove(tokens.dropFirst(), from: &elements[index]) else { return false }
            value = .array(elements)
            return true
        default:
            return false
        }
    }
}
