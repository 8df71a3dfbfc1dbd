import CodexSchema

/// One argument a stateless HTTP request mirrors into a header (`x-mcp-header` in a tool's input schema).
struct MCPParameterHeader: Sendable, Hashable {
    /// The header name after `Mcp-Param-`.
    var name: String
    /// The `properties` keys leading to the argument.
    var path: [String]
}

/// The `x-mcp-header` declarations of a tool's input schema, checked as the stateless revision asks:
/// each value a non-empty token, unique regardless of case, on a string, integer or boolean property
/// reached only through `properties` keys. A tool with any invalid declaration is not offered.
enum MCPParameterHeaders {
    /// The declarations, or nil when one is invalid.
    static func declared(in schema: JSONValue) -> [MCPParameterHeader]? {
        var found: [MCPParameterHeader] = []
        var valid = true
        visit(schema, path: [], viaProperties: true, found: &found, valid: &valid)
        guard valid else { return nil }
        let names = found.map { $0.name.lowercased() }
        guard Set(names).count == names.count else { return nil }
        return found
    }

    /// The header values for `arguments` (present, non-null arguments only).
    static func values(_ headers: [MCPParameterHeader], arguments: JSONObject) -> [String: String] {
        var values: [String: String] = [:]
        for header in headers {
            var value: JSONValue? = .object(arguments)
            for key in header.path { value = value?[key] }
            switch value {
            case .string(let text)?: values[header.name] = text
            case .number(let number)?: values[header.name] = number.description
            case .bool(let flag)?: values[header.name] = flag ? "true" : "false"
            default: break
            }
        }
        return values
    }

    /// Walks every member; a declaration counts only on a property schema reached through `properties`.
    private static func visit(_ value: JSONValue, path: [String], viaProperties: Bool, found: inout [MCPParameterHeader], valid: inout Bool) {
        switch value {
        case .object(let object):
            if let declaration = object["x-mcp-header"] {
                guard viaProperties, !path.isEmpty, case .string(let name) = declaration, isToken(name),
                      let type = object["type"]?.stringValue, ["string", "integer", "boolean"].contains(type)
                else {
                    valid = false
                    return
                }
                found.append(MCPParameterHeader(name: name, path: path))
            }
            for member in object.members where member.key != "x-mcp-header" {
                if member.key == "properties", case .object(let properties) = member.value, viaProperties {
                    for property in properties.members {
                        visit(property.value, path: path + [property.key], viaProperties: true, found: &found, valid: &valid)
                    }
                } else {
                    visit(member.value, path: path, viaProperties: false, found: &found, valid: &valid)
                }
            }
        case .array(let elements):
            for element in elements { visit(element, path: path, viaProperties: false, found: &found, valid: &valid) }
        default:
            break
        }
    }

    /// An RFC 9110 token: visible ASCII without separators.
    private static func isToken(_ text: String) -> Bool {
        let separators = Set("\"(),/:;<=>?@[\\]{}".utf8)
        return !text.isEmpty && text.utf8.allSatisfy { (0x21...0x7E).contains($0) && !separators.contains($0) }
    }
}
