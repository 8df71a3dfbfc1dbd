extension JSONTapeView {
    /// JSON equality of the tape value at `index` and `value`: numbers mathematically, strings by code
    /// points, objects regardless of member order.
    func equals(_ index: Int, _ value: JSONValue) -> Bool {
        let entry = entries[index]
        switch (entry.kind, value) {
        case (.null, .null): return true
        case (.false, .bool(let flag)): return !flag
        case (.true, .bool(let flag)): return flag
        case (.integer, .number(let number)), (.number, .number(let number)): return self.number(index) == number
        case (.string, .string(var text)):
            return text.withUTF8 { JSONTapeView.equal(bytes(index), $0) }
        case (.array, .array(let elements)):
            guard Int(entry.count) == elements.count else { return false }
            var child = index + 1
            for element in elements {
                if !equals(child, element) { return false }
                child = next(child)
            }
            return true
        case (.object, .object(let object)):
            guard Int(entry.count) == object.count else { return false }
            var child = index + 1
            for _ in 0..<entry.count {
                guard let member = object[string(child)], equals(child + 1, member) else { return false }
                child = next(child + 1)
            }
            return true
        default:
            return false
        }
    }

    /// JSON equality of two tape values.
    func equals(_ first: Int, _ second: Int) -> Bool {
        let left = entries[first]
        let right = entries[second]
        switch (left.kind, right.kind) {
        case (.integer, .integer): return left.payload == right.payload
        case (.integer, .number), (.number, .integer), (.number, .number): return number(first) == number(second)
        case (.string, .string): return stringsEqual(first, second)
        case (.array, .array):
            guard left.count == right.count else { return false }
            var a = first + 1
            var b = second + 1
            for _ in 0..<left.count {
                if !equals(a, b) { return false }
                a = next(a)
                b = next(b)
            }
            return true
        case (.object, .object):
            guard left.count == right.count else { return false }
            var a = first + 1
            for _ in 0..<left.count {
                guard let match = member(of: second, matchingKeyAt: a), equals(a + 1, match) else { return false }
                a = next(a + 1)
            }
            return true
        default:
            return left.kind == right.kind && (left.kind == .null || left.kind == .true || left.kind == .false)
        }
    }

    /// The value index of the member of the object at `object` whose key equals the key entry at `key`.
    func member(of object: Int, matchingKeyAt key: Int) -> Int? {
        var child = object + 1
        for _ in 0..<entries[object].count {
            if stringsEqual(child, key) { return child + 1 }
            child = next(child + 1)
        }
        return nil
    }

    /// A hash consistent with ``equals(_:_:)-(Int,Int)``.
    func hash(_ index: Int, into hasher: inout Hasher) {
        let entry = entries[index]
        switch entry.kind {
        case .null, .false, .true:
            hasher.combine(entry.kind.rawValue)
        case .integer, .number:
            hasher.combine(3 as UInt8)
            hasher.combine(number(index))
        case .string:
            hasher.combine(5 as UInt8)
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes(index)))
        case .array:
            hasher.combine(6 as UInt8)
            hasher.combine(entry.count)
            var child = index + 1
            for _ in 0..<entry.count {
                hash(child, into: &hasher)
                child = next(child)
            }
        case .object:
            hasher.combine(7 as UInt8)
            hasher.combine(entry.count)
            var combined = 0
            var child = index + 1
            for _ in 0..<entry.count {
                var memberHasher = Hasher()
                memberHasher.combine(bytes: UnsafeRawBufferPointer(bytes(child)))
                hash(child + 1, into: &memberHasher)
                combined = combined &+ memberHasher.finalize()
                child = next(child + 1)
            }
            hasher.combine(combined)
        }
    }

    /// Whether the elements of the array at `index` are pairwise unequal.
    func elementsAreUnique(_ index: Int) -> Bool {
        let count = Int(entries[index].count)
        if count < 2 { return true }
        if count <= 16 {
            // Small arrays compare pairwise, with the element indices on the stack.
            return withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { elements -> Bool in
                var child = index + 1
                for position in 0..<count {
                    elements[position] = child
                    child = next(child)
                }
                for later in 1..<count {
                    for earlier in 0..<later where equals(elements[earlier], elements[later]) { return false }
                }
                return true
            }
        }
        var elements: [Int] = []
        elements.reserveCapacity(count)
        var child = index + 1
        for _ in 0..<count {
            elements.append(child)
            child = next(child)
        }
        var buckets: [Int: [Int]] = [:]
        for element in elements {
            var hasher = Hasher()
            hash(element, into: &hasher)
            let key = hasher.finalize()
            if let candidates = buckets[key], candidates.contains(where: { equals($0, element) }) { return false }
            buckets[key, default: []].append(element)
        }
        return true
    }
}
