extension JSONTapeView {
    /// Builds the ``JSONValue`` of the subtree at `index`. Recursion depth equals nesting depth, which
    /// the parser bounds.
    func value(at index: Int) -> JSONValue {
        let entry = entries[index]
        switch entry.kind {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .integer: return .number(JSONNumber(storage: .int(entry.payload)))
        case .number: return .number(numbers[Int(entry.payload)])
        case .string: return .string(string(index))
        case .array:
            var elements: [JSONValue] = []
            elements.reserveCapacity(Int(entry.count))
            var child = index + 1
            for _ in 0..<entry.count {
                elements.append(value(at: child))
                child = next(child)
            }
            return .array(elements)
        case .object:
            var members: [JSONObject.Member] = []
            members.reserveCapacity(Int(entry.count))
            var child = index + 1
            for _ in 0..<entry.count {
                let key = string(child)
                members.append(JSONObject.Member(key: key, value: value(at: child + 1)))
                child = next(child + 1)
            }
            return .object(JSONObject(uncheckedMembers: members))
        }
    }
}

extension JSONTape {
    /// The tape of a value built in code: every string goes to the arena.
    init(encoding value: JSONValue) {
        append(value)
    }

    private mutating func append(_ value: JSONValue) {
        switch value {
        case .null:
            entries.append(Entry(kind: .null, flags: 0, count: 0, payload: 0))
        case .bool(let flag):
            entries.append(Entry(kind: flag ? .true : .false, flags: 0, count: 0, payload: 0))
        case .number(let number):
            if case .int(let integer) = number.storage {
                entries.append(Entry(kind: .integer, flags: 0, count: 0, payload: integer))
            } else {
                entries.append(Entry(kind: .number, flags: 0, count: 0, payload: Int64(numbers.count)))
                numbers.append(number)
            }
        case .string(let text):
            appendString(text)
        case .array(let elements):
            let start = entries.count
            entries.append(Entry(kind: .array, flags: 0, count: UInt32(elements.count), payload: 0))
            for element in elements { append(element) }
            entries[start].payload = Int64(entries.count)
        case .object(let object):
            let start = entries.count
            entries.append(Entry(kind: .object, flags: 0, count: UInt32(object.count), payload: 0))
            for member in object.members {
                appendString(member.key)
                append(member.value)
            }
            entries[start].payload = Int64(entries.count)
        }
    }

    private mutating func appendString(_ text: String) {
        let start = arena.count
        arena.append(contentsOf: text.utf8)
        var flags = Flags.inArena
        if !arena[start...].contains(where: { $0 >= 0x80 }) { flags |= Flags.ascii }
        entries.append(Entry(kind: .string, flags: flags, count: UInt32(arena.count - start), payload: Int64(start)))
    }
}
