extension MemoryRecord {
    /// Checks every limit of ``MemoryLimits``.
    /// - Throws: ``MemoryStoreError`` `memory_record_invalid` whose ``MemoryStoreError/limit`` names the
    ///   first broken limit; the message gives sizes and counts, never the record's text.
    public func validate() throws(MemoryStoreError) {
        try Self.checkKey(id.rawValue, .idBytes, "the ID")
        try Self.checkKey(namespace.rawValue, .namespaceBytes, "the namespace")
        try Self.checkKey(scope.rawValue, .scopeBytes, "the scope")
        try Self.checkKey(category.rawValue, .categoryBytes, "the category")
        if let dedupeKey { try Self.checkKey(dedupeKey, .dedupeKeyBytes, "the dedupe key") }
        guard !summary.isEmpty else { throw .invalidRecord(.summaryEmpty, "the summary is empty") }
        let summaryBytes = summary.utf8.count
        guard summaryBytes <= MemoryLimits.summaryBytes else {
            throw .invalidRecord(.summaryBytes, "the summary is \(summaryBytes) bytes; the limit is \(MemoryLimits.summaryBytes)")
        }
        guard evidence.count <= MemoryLimits.evidenceCount else {
            throw .invalidRecord(.evidenceCount, "\(evidence.count) evidence strings; the limit is \(MemoryLimits.evidenceCount)")
        }
        for (index, item) in evidence.enumerated() where item.utf8.count > MemoryLimits.evidenceBytes {
            throw .invalidRecord(.evidenceBytes, "evidence \(index) is \(item.utf8.count) bytes; the limit is \(MemoryLimits.evidenceBytes)")
        }
        guard MemoryLimits.importance.contains(importance) else {
            throw .invalidRecord(.importance, "the importance is \(importance); it must be 0 to 10")
        }
        guard tags.count <= MemoryLimits.tagCount else {
            throw .invalidRecord(.tagCount, "\(tags.count) tags; the limit is \(MemoryLimits.tagCount)")
        }
        var seen = Set<String>()
        for (index, tag) in tags.enumerated() {
            guard !tag.isEmpty, tag.utf8.count <= MemoryLimits.tagBytes else {
                throw .invalidRecord(.tagBytes, "tag \(index) is \(tag.utf8.count) bytes; it must be 1 to \(MemoryLimits.tagBytes)")
            }
            guard seen.insert(tag).inserted else { throw .invalidRecord(.tagDuplicate, "tag \(index) repeats an earlier tag") }
        }
        guard relatedIDs.count <= MemoryLimits.relatedCount else {
            throw .invalidRecord(.relatedCount, "\(relatedIDs.count) related IDs; the limit is \(MemoryLimits.relatedCount)")
        }
        for related in relatedIDs { try Self.checkKey(related.rawValue, .idBytes, "a related ID") }
        guard attributes.count <= MemoryLimits.attributeCount else {
            throw .invalidRecord(.attributeCount, "\(attributes.count) attributes; the limit is \(MemoryLimits.attributeCount)")
        }
        for (key, value) in attributes {
            guard !key.isEmpty, key.utf8.count <= MemoryLimits.attributeKeyBytes, value.utf8.count <= MemoryLimits.attributeValueBytes else {
                throw .invalidRecord(
                    .attributeBytes,
                    "an attribute key is \(key.utf8.count) bytes (1 to \(MemoryLimits.attributeKeyBytes)) and its value \(value.utf8.count) (at most \(MemoryLimits.attributeValueBytes))"
                )
            }
        }
        guard updatedAt >= createdAt else { throw .invalidRecord(.dates, "the update date is before the creation date") }
    }

    private static func checkKey(_ value: String, _ limit: MemoryLimit, _ name: String) throws(MemoryStoreError) {
        let count = value.utf8.count
        guard count > 0, count <= MemoryLimits.keyBytes, !value.utf8.contains(0) else {
            throw .invalidRecord(limit, "\(name) is \(count) bytes; it must be 1 to \(MemoryLimits.keyBytes), without NUL bytes")
        }
    }
}
