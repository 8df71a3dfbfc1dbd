/// The members of a JSON object: unique keys, kept in their original order, compared without regard to it.
///
/// Parsing keeps the order of the text, so a value can be written back in the order it was read;
/// equality and hashing ignore order, as JSON does. Small objects are searched linearly (no hashing,
/// which is what most model output and schemas contain); objects with more than
/// ``indexThreshold`` members also keep a hash index.
///
/// ```swift
/// var object: JSONObject = ["b": 1, "a": 2]
/// object["c"] = true
/// object.keys          // ["b", "a", "c"]
/// object == ["a": 2, "b": 1, "c": true] // true
/// ```
public struct JSONObject: Sendable, Hashable {
    /// One member. Keys compare by their code points, as JSON does (not by Unicode canonical
    /// equivalence, as Swift's `String ==` does).
    public struct Member: Sendable, Hashable {
        /// The member's name.
        public var key: String
        /// The member's value.
        public var value: JSONValue

        /// Creates a member.
        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }

        /// Equal keys (by code points) and equal values.
        public static func == (lhs: Member, rhs: Member) -> Bool {
            JSONText.equal(lhs.key, rhs.key) && lhs.value == rhs.value
        }

        /// Hashes the key's code points and the value.
        public func hash(into hasher: inout Hasher) {
            JSONText.hash(key, into: &hasher)
            hasher.combine(value)
        }
    }

    /// Objects with more members than this keep a hash index for lookups.
    public static let indexThreshold = 12

    /// The members in order.
    public private(set) var members: [Member]
    private var index: [String: Int]?

    /// An empty object.
    public init() {
        members = []
        index = nil
    }

    /// An object with the dictionary's members, in the UTF-8 byte order of their keys.
    public init(_ dictionary: [String: JSONValue]) {
        self.init(uncheckedMembers: dictionary.keys.sorted(by: CanonicalJSONWriter.utf8Precedes).compactMap { key in
            dictionary[key].map { Member(key: key, value: $0) }
        })
    }

    /// An object with the given members in order; a repeated key keeps its last value at its first position.
    public init(_ members: some Sequence<(String, JSONValue)>) {
        self.init()
        for (key, value) in members { self[key] = value }
    }

    /// Members whose keys are known to be unique.
    init(uncheckedMembers members: [Member]) {
        self.members = members
        self.index = members.count > Self.indexThreshold ? Self.buildIndex(members) : nil
    }

    /// The number of members.
    public var count: Int { members.count }

    /// Whether there are no members.
    public var isEmpty: Bool { members.isEmpty }

    /// The keys, in order.
    public var keys: [String] { members.map(\.key) }

    /// The values, in key order.
    public var values: [JSONValue] { members.map(\.value) }

    /// The members as a dictionary.
    public var dictionary: [String: JSONValue] {
        var result = [String: JSONValue](minimumCapacity: members.count)
        for member in members { result[member.key] = member.value }
        return result
    }

    /// The position of `key` in ``members`` (matched by code points), or `nil`.
    public func position(of key: String) -> Int? {
        if let index {
            guard let position = index[key] else { return nil }
            if JSONText.equal(members[position].key, key) { return position }
            // A canonically equivalent but different key: search exactly.
        }
        for position in members.indices where JSONText.equal(members[position].key, key) { return position }
        return nil
    }

    /// The value for `key`; assigning `nil` removes the member, assigning a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let position = position(of: key) else { return nil }
            return members[position].value
        }
        set {
            if let position = position(of: key) {
                if let newValue {
                    members[position].value = newValue
                } else {
                    members.remove(at: position)
                    index = members.count > Self.indexThreshold ? Self.buildIndex(members) : nil
                }
            } else if let newValue {
                members.append(Member(key: key, value: newValue))
                if index != nil {
                    if index?.updateValue(members.count - 1, forKey: key) != nil { index = Self.buildIndex(members) }
                } else if members.count > Self.indexThreshold {
                    index = Self.buildIndex(members)
                }
            }
        }
    }

    /// A copy with every value transformed.
    public func mapValues(_ transform: (JSONValue) throws -> JSONValue) rethrows -> JSONObject {
        JSONObject(uncheckedMembers: try members.map { Member(key: $0.key, value: try transform($0.value)) })
    }

    /// A hash index of the keys, or `nil` when two keys are canonically equivalent but not equal (Swift's
    /// dictionary would merge them), in which case lookups scan.
    private static func buildIndex(_ members: [Member]) -> [String: Int]? {
        var index = [String: Int](minimumCapacity: members.count)
        for (position, member) in members.enumerated() {
            if index.updateValue(position, forKey: member.key) != nil { return nil }
        }
        return index
    }

    /// Equal when both have the same keys with equal values, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for (position, member) in lhs.members.enumerated() {
            // Same order is the common case: check the same position first.
            if position < rhs.members.count, JSONText.equal(rhs.members[position].key, member.key) {
                guard rhs.members[position].value == member.value else { return false }
                continue
            }
            guard let other = rhs[member.key], other == member.value else { return false }
        }
        return true
    }

    /// Hashes the members without regard to their order.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for member in members {
            var memberHasher = Hasher()
            memberHasher.combine(member)
            combined = combined &+ memberHasher.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(combined)
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// An object literal, in the order written. A repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }
}

extension JSONObject: Sequence {
    /// Iterates the members in order.
    public func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }
}
