public import CodexCore
import Foundation

/// The behaviour every ``CodexCore/MemoryStoring`` store must have, as a reusable check: the in-memory
/// store and the SQLite store (a file and `:memory:`) run it. Each check returns the broken expectations
/// (empty when the store conforms).
public enum MemoryStoreConformance {
    /// Names and runs every check on a fresh store each; returns `"check: problem"` lines.
    public static func run(_ makeStore: () throws -> any MemoryStoring) async throws -> [String] {
        var problems: [String] = []
        for (name, check) in checks {
            for problem in try await check(try makeStore()) { problems.append("\(name): \(problem)") }
        }
        return problems
    }

    /// The names of the checks, in order.
    public static var checkNames: [String] { checks.map(\.0) }

    static let checks: [(String, @Sendable (any MemoryStoring) async throws -> [String])] = [
        ("recordsRoundTripWithEveryField", recordsRoundTripWithEveryField),
        ("invalidRecordsAreRefusedNamingTheLimitNotTheText", invalidRecordsAreRefusedNamingTheLimitNotTheText),
        ("aDedupeKeyReplacesKeepingIDAndCreation", aDedupeKeyReplacesKeepingIDAndCreation),
        ("deleteAndArchive", deleteAndArchive),
        ("expiredRecordsAreHiddenUnlessAsked", expiredRecordsAreHiddenUnlessAsked),
        ("matchPoliciesCountDistinctTokens", matchPoliciesCountDistinctTokens),
        ("rankingProfilesOrderAsDocumented", rankingProfilesOrderAsDocumented),
        ("relevanceOrdersEqualImportance", relevanceOrdersEqualImportance),
        ("scopesAndTagsFilterAndAreExplained", scopesAndTagsFilterAndAreExplained),
        ("theReadBudgetSkipsWhatDoesNotFit", theReadBudgetSkipsWhatDoesNotFit),
        ("queryLimitsAreTypedErrors", queryLimitsAreTypedErrors),
        ("hostileTextIsOnlyData", hostileTextIsOnlyData),
        ("namespacesAreIsolated", namespacesAreIsolated),
        ("caseIsFoldedOneWayForRecordsAndQueries", caseIsFoldedOneWayForRecordsAndQueries),
    ]

    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func record(_ id: String, _ summary: String, importance: Int = 5, at offset: Double = 0, namespace: MemoryNamespace = "test",
                       scope: MemoryScope = .global, tags: [String] = [], evidence: [String] = []) -> MemoryRecord {
        MemoryRecord(
            id: MemoryRecordID(rawValue: id), namespace: namespace, scope: scope, summary: summary, evidence: evidence, importance: importance,
            tags: tags, createdAt: t0.addingTimeInterval(offset)
        )
    }

    static func ids(_ result: MemorySearchResult) -> [String] { result.hits.map(\.record.id.rawValue) }

    static func query(_ text: String?, _ match: MemoryQuery.MatchPolicy = .anyToken, ranking: MemoryQuery.Ranking = .importanceThenRecency) -> MemoryQuery {
        MemoryQuery(namespace: "test", text: text, match: match, ranking: ranking, budget: MemoryReadBudget(records: 256, characters: 1_000_000), asOf: t0)
    }

    static func recordsRoundTripWithEveryField(_ store: any MemoryStoring) async throws -> [String] {
        var problems: [String] = []
        let full = MemoryRecord(
            id: "full", namespace: "test", scope: .thread("t-1"), category: .decision, summary: "Ship on Tuesday; \"quoted\" and ünïcode ✓.",
            evidence: ["user said so", "confirmed\u{0}twice"], importance: 9, tags: ["delivery", "ops"], relatedIDs: ["other"],
            attributes: ["source": "chat", "turn": "7"], dedupeKey: "ship-day", expiresAt: t0.addingTimeInterval(86_400), isArchived: false,
            createdAt: t0.addingTimeInterval(0.123_456_789), updatedAt: t0.addingTimeInterval(10.5)
        )
        let outcome = try await store.upsert(full)
        if outcome != .inserted(full) { problems.append("the first upsert was not an insert of the record") }
        if try await store.record("full") != full { problems.append("the record did not round-trip") }
        if try await store.record("missing") != nil { problems.append("an unknown ID was found") }
        let listed = try await store.list(MemoryListQuery(namespace: "test", asOf: t0))
        if listed != [full] { problems.append("list returned \(listed.count) records, not the one stored") }
        return problems
    }

    static func invalidRecordsAreRefusedNamingTheLimitNotTheText(_ store: any MemoryStoring) async throws -> [String] {
        var problems: [String] = []
        let secret = "SECRET-" + String(repeating: "x", count: MemoryLimits.summaryBytes)
        var cases: [(MemoryLimit, MemoryRecord)] = []
        cases.append((.summaryBytes, record("a", secret)))
        cases.append((.summaryEmpty, record("b", "")))
        cases.append((.evidenceCount, record("c", "SECRET", evidence: Array(repeating: "SECRET", count: 33))))
        cases.append((.evidenceBytes, record("d", "SECRET", evidence: [String(repeating: "SECRET", count: 1_000)])))
        cases.append((.tagCount, record("e", "SECRET", tags: (0..<65).map { "SECRET\($0)" })))
        cases.append((.tagDuplicate, record("f", "SECRET", tags: ["SECRET", "SECRET"])))
        cases.append((.importance, record("g", "SECRET", importance: 11)))
        cases.append((.namespaceBytes, record("h", "SECRET", namespace: "")))
        var related = record("i", "SECRET")
        related.relatedIDs = (0..<65).map { MemoryRecordID(rawValue: "r\($0)") }
        cases.append((.relatedCount, related))
        var attributes = record("j", "SECRET")
        attributes.attributes = ["SECRET": String(repeating: "v", count: MemoryLimits.attributeValueBytes + 1)]
        cases.append((.attributeBytes, attributes))
        var dates = record("k", "SECRET")
        dates.updatedAt = dates.createdAt.addingTimeInterval(-1)
        cases.append((.dates, dates))
        for (limit, invalid) in cases {
            do {
                try await store.upsert(invalid)
                problems.append("\(limit) was accepted")
            } catch {
                if error.code != .recordInvalid || error.limit != limit { problems.append("\(limit) gave \(error.code) \(error.limit?.rawValue ?? "-")") }
                if error.description.contains("SECRET") { problems.append("\(limit)'s error contains the record's text") }
            }
        }
        // At the limits exactly, records are fine.
        let edge = MemoryRecord(
            id: "edge", namespace: "test", summary: String(repeating: "é", count: MemoryLimits.summaryBytes / 2),
            evidence: Array(repeating: "e", count: 32), importance: 10, tags: (0..<64).map { "t\($0)" }, createdAt: t0
        )
        do { try await store.upsert(edge) } catch { problems.append("a record at every limit was refused: \(error)") }
        let listed = try await store.list(MemoryListQuery(namespace: "test", asOf: t0))
        if listed.map(\.id) != ["edge"] { problems.append("the store holds \(listed.map(\.id.rawValue)), not only the valid record") }
        return problems
    }

    static func aDedupeKeyReplacesKeepingIDAndCreation(_ store: any MemoryStoring) async throws -> [String] {
        var problems: [String] = []
        var first = record("first", "Prefers Monday delivery.", importance: 3)
        first.dedupeKey = "delivery-day"
        try await store.upsert(first)
        var second = record("second", "Prefers Tuesday delivery.", importance: 7, at: 100, tags: ["delivery"])
        second.dedupeKey = "delivery-day"
        let outcome = try await store.upsert(second)
        var expected = second
        expected.id = "first"
        expected.createdAt = first.createdAt
        if outcome != .replaced(previous: first, stored: expected) { problems.append("the outcome was \(outcome), not a replacement of the first") }
        if try await store.record("first") != expected { problems.append("the stored record is not the second with the first's ID and creation date") }
        if try await store.record("second") != nil { problems.append("the second record was stored under its own ID") }
        // The same key in another namespace is another record.
        var elsewhere = record("elsewhere", "Prefers Friday delivery.", namespace: "other")
        elsewhere.dedupeKey = "delivery-day"
        if try await store.upsert(elsewhere) != .inserted(elsewhere) { problems.append("a dedupe key matched across namespaces") }
        // An upsert by ID replaces too.
        var renamed = expected
        renamed.summary = "Prefers Wednesday delivery."
        renamed.createdAt = t0.addingTimeInterval(50)
        renamed.updatedAt = t0.addingTimeInterval(200)
        var renamedStored = renamed
        renamedStored.createdAt = first.createdAt
        if try await store.upsert(renamed).stored != renamedStored { problems.append("an upsert by ID did not keep the creation date") }
        // An ID naming one record and a dedupe key naming another is a conflict that writes nothing.
        var third = record("third", "Uses DHL.")
        third.dedupeKey = "carrier"
        try await store.upsert(third)
        var clash = record("first", "Clash.")
        clash.dedupeKey = "carrier"
        do {
            try await store.upsert(clash)
            problems.append("a clash of ID and dedupe key was accepted")
        } catch {
            if error.code != .dedupeConflict { problems.append("a clash gave \(error.code), not memory_dedupe_conflict") }
        }
        if try await store.record("first") != renamedStored { problems.append("a refused clash changed a record") }
        let count = try await store.list(MemoryListQuery(namespace: "test", asOf: t0)).count
        if count != 2 { problems.append("the namespace holds \(count) records, not 2") }
        return problems
    }

    static func deleteAndArchive(_ store: any MemoryStoring) async throws -> [String] {
        var problems: [String] = []
        try await store.upsert(record("keep", "Keep this apple."))
        try await store.upsert(record("gone", "Delete this apple."))
        if try await !store.delete("gone") { problems.append("delete of a stored record returned false") }
        if try await store.delete("gone") { problems.append("a second delete returned true") }
        if try await store.record("gone") != nil { problems.append("a deleted record is still there") }
        if try await ids(store.search(query("apple"))) != ["keep"] { problems.append("a deleted record is still found") }
        if try await !store.archive("keep", at: t0.addingTimeInterval(30)) { problems.append("archive returned false") }
        if try await store.archive("gone", at: t0) { problems.append("archiving a missing record returned true") }
        let archived = try await store.record("keep")
        if archived?.isArchived != true || archived?.updatedAt != t0.addingTimeInterval(30) { problems.append("archive did not set the flag and date") }
        if try await !store.search(query("apple")).hits.isEmpty { problems.append("an archived record was found by default") }
        var including = query("apple")
        including.includeArchived = true
        if try await ids(store.search(including)) != ["keep"] { problems.append("includeArchived did not find it") }
        if try await !store.list(MemoryListQuery(namespace: "test", asOf: t0)).isEmpty { problems.append("list showed an archived record") }
        if try await store.list(MemoryListQuery(namespace: "test", includeArchived: true, asOf: t0)).count != 1 { problems.append("list with archived missed it") }
        return problems
    }

    static func expiredRecordsAreHiddenUnlessAsked(_ store: any MemoryStoring) async throws -> [String] {
        var problems: [String] = []
        var expiring = record("expiring", "A passing apple.")
        expiring.expiresAt = t0.addingTimeInterval(60)
        try await store.upsert(expiring)
        var before = query("apple")
        before.asOf = t0.addingTimeInterval(59)
        if try await ids(store.search(before)) != ["expiring"] { problems.append("a record was hidden before its expiry") }
        var at = query("apple")
        at.asOf = t0.addingTimeInterval(60)
        if try await !store.search(at).hits.isEmpty { problems.append("a record was found at its expiry") }
        at.includeExpired = true
        if try await ids(store.search(at)) != ["expiring"] { problems.append("includeExpired did not find it") }
        if try await !store.list(MemoryListQuery(namespace: "test", asOf: t0.addingTimeInterval(61))).isEmpty { problems.append("list showed an expired record") }
        return problems
    }

    static func matchPoliciesCountDistinctTokens(_ store: any MemoryStoring) async throws -> [String] {
        var problems: [String] = []
        try await store.upsert(record("pie", "Red apple pie on Sundays.", importance: 5))
        try await store.upsert(record("green", "Green apple.", importance: 4))
        try await store.upsert(record("car", "A red car.", importance: 3))
        try await store.upsert(record("none", "Nothing here.", importance: 2))
        let text = "RED apple, red!"
        let expectations: [(MemoryQuery.MatchPolicy, [String])] = [
            (.anyToken, ["pie", "green", "car"]), (.allTokens, ["pie"]), (.atLeast(1), ["pie", "green", "car"]), (.atLeast(2), ["pie"]), (.atLeast(9), ["pie"]),
        ]
        for (policy, expected) in expectations {
            let found = try await ids(store.search(query(text, policy)))
            if found != expected { problems.append("\(policy) found \(found), not \(expected)") }
        }
        let hit = try await store.search(query(text, .anyToken)).hits
        if hit.map(\.explanation.matchedTokens) != [["red", "apple"], ["apple"], ["red"]] {
            problems.append("matched tokens are \(hit.map(\.explanation.matchedTokens))")
        }
        if hit.map(\.explanation.rank) != [1, 2, 3] { problems.append("ranks are \(hit.map(\.explanation.rank))") }
        if hit.contains(where: { ($0.explanation.relevance ?? 0) <= 0 }) { problems.append("a text match has no positive relevance") }
        // At least 2 of 3 tokens: only the records with two or three of them.
        try await store.upsert(record("two", "Red apple tart.", importance: 1))
        let found = try await ids(store.search(query("red apple pie", .atLeast(2))))
        if found != ["pie", "two"] { problems.append("at least 2 of 3 found \(found)") }
        // Evidence is searched too.
        try await store.upsert(record("evidence", "Carrier choice.", importance: 1, evidence: ["The customer asked for DHL."]))
        let byEvidence = try await store.search(query("dhl")).hits
        if byEvidence.map(\.record.id) != ["evidence"] || byEvidence.first?.explanation.matchedTokens != ["dhl"] {
            problems.append("evidence was not searched")
        }
        return problems
    }

    static func rankingProfilesOrderAsDocumented(_ store: any MemoryStoring) async throws -> [String] {
        var problems: [String] = []
        try await store.upsert(record("old-important", "Alpha.", importance: 9, at: 0))
        try await store.upsert(record("new-minor", "Beta.", importance: 2, at: 300))
        try await store.upsert(record("mid", "Gamma.", importance: 5, at: 200))
        try await store.upsert(record("mid-older", "Delta.", importance: 5, at: 100))
        try await store.upsert(record("b-tie", "Eps.", importance: 5, at: 100))
        let byImportance = try await ids(store.search(query(nil)))
        if byImportance != ["old-important", "mid", "b-tie", "mid-older", "new-minor"] { problems.append("importance then recency gave \(byImportance)") }
        let byRecency = try await ids(store.search(query(nil, ranking: .recencyThenImportance)))
        if byRecency != ["new-minor", "mid", "b-tie", "mid-older", "old-important"] { problems.append("recency then importance gave \(byRecency)") }
        let hits = try await store.search(query(nil)).hits
        if hits.contains(where: { $0.explanation.relevance != nil || !$0.explanation.matchedTokens.isEmpty }) {
            problems.append("a query without text explained a text match")
        }
        let listed = try await store.list(MemoryListQuery(namespace: "test", asOf: t0)).map(\.id.rawValue)
        if listed != ["new-minor", "mid", "b-tie", "mid-older", "old-important"] { problems.append("list order is \(listed)") }
        let limited = try await store.list(MemoryListQuery(namespace: "test", limit: 2, asOf: t0)).map(\.id.rawValue)
        if limited != ["new-minor", "mid"] { problems.append("a list limit of 2 gave \(limited)") }
        return problems
    }

    static func relevanceOrdersEqualImportance(_ store: any MemoryStoring) async throws -> [String] {
        var problems: [String] = []
        try await store.upsert(record("long", "One apple among many other words about groceries, weather, and the week ahead in town.", at: 10))
        try await store.upsert(record("dense", "Apple apple apple.", at: 0))
        try await store.upsert(record("filler", "Bread and milk.", at: 0))
        try await store.upsert(record("more", "Cheese and wine.", at: 0))
        let result = try await store.search(query("apple"))
        if ids(result) != ["dense", "long"] { problems.append("relevance ordered \(ids(result)), not the denser match first") }
        let relevance = result.hits.compactMap(\.explanation.relevance)
        if relevance.count != 2 || relevance[0] <= relevance[1] { problems.append("relevances are \(relevance)") }
        // Importance comes before relevance in importance-then-recency.
        try await store.upsert(record("important", "An apple in a long sentence with plenty of other words in it.", importance: 8, at: 0))
        let ranked = try await ids(store.search(query("apple")))
        if ranked.first != "important" { problems.append("importance did not rank first: \(ranked)") }
        return problems
    }

    static func scopesAndTagsFilterAndAreExplained(_ store: any MemoryStoring) async throws -> [String] {
        var problems: [String] = []
        try await store.upsert(record("user-ship", "Ship fast.", importance: 6, scope: .user, tags: ["shipping", "speed"]))
        try await store.upsert(record("project-ship", "Ship weekly.", importance: 5, scope: .project, tags: ["shipping"]))
        try await store.upsert(record("user-food", "Ship snacks.", importance: 4, scope: .user, tags: ["food"]))
        var scoped = query("ship")
        scoped.scopes = [.user]
        let byScope = try await store.search(scoped)
        if ids(byScope) != ["user-ship", "user-food"] { problems.append("scope filter gave \(ids(byScope))") }
        if byScope.hits.map(\.explanation.matchedScope) != [.user, .user] { problems.append("the matched scope was not explained") }
        var tagged = query("ship")
        tagged.tags = ["speed", "shipping"]
        let byTag = try await store.search(tagged)
        if ids(byTag) != ["user-ship", "project-ship"] { problems.append("tag filter gave \(ids(byTag))") }
        if byTag.hits.map(\.explanation.matchedTags) != [["speed", "shipping"], ["shipping"]] { problems.append("matched tags are \(byTag.hits.map(\.explanation.matchedTags))") }
        if byTag.hits.contains(where: { $0.explanation.matchedScope != nil }) { problems.append("a scope was explained for a query without scopes") }
        tagged.scopes = [.project]
        if try await ids(store.search(tagged)) != ["project-ship"] { problems.append("scope and tag filters did not combine") }
        let listed = try await store.list(MemoryListQuery(namespace: "test", scopes: [.user], tags: ["food"], asOf: t0)).map(\.id.rawValue)
        if listed != ["user-food"] { problems.append("list filters gave \(listed)") }
        return problems
    }

    static func theReadBudgetSkipsWhatDoesNotFit(_ store: any MemoryStoring) async throws -> [String] {
        var problems: [String] = []
        for index in 0..<10 {
            try await store.upsert(record("big-\(index)", "budget " + String(repeating: "x", count: 293), importance: 9, at: Double(100 - index)))
        }
        try await store.upsert(record("small", "budget small", importance: 1))
        var defaults = query("budget")
        defaults.budget = .default
        let result = try await store.search(defaults)
        if ids(result) != ["big-0", "big-1", "big-2", "big-3", "big-4", "small"] { problems.append("the default budget returned \(ids(result))") }
        if result.candidates != 11 || result.omittedByBudget != 5 { problems.append("candidates \(result.candidates), omitted \(result.omittedByBudget)") }
        if result.summaryCharacters != 5 * 300 + 12 { problems.append("\(result.summaryCharacters) characters returned") }
        if result.hits.last?.explanation.rank != 11 { problems.append("the small record's rank is \(result.hits.last?.explanation.rank ?? 0), not 11") }
        var two = query("budget")
        two.budget = MemoryReadBudget(records: 2, characters: 10_000)
        if try await ids(store.search(two)) != ["big-0", "big-1"] { problems.append("a 2-record budget was not kept") }
        var limited = query("budget")
        limited.limit = 3
        let few = try await store.search(limited)
        if few.candidates != 3 || ids(few) != ["big-0", "big-1", "big-2"] { problems.append("a limit of 3 considered \(few.candidates)") }
        return problems
    }

    static func queryLimitsAreTypedErrors(_ store: any MemoryStoring) async throws -> [String] {
        var problems: [String] = []
        var cases: [(MemoryLimit, MemoryQuery)] = []
        var zero = query("x")
        zero.limit = 0
        cases.append((.resultCount, zero))
        var many = query("x")
        many.limit = MemoryLimits.resultCount + 1
        cases.append((.resultCount, many))
        cases.append((.queryTokens, query((0...MemoryLimits.queryTokens).map { "SECRET\($0)" }.joined(separator: " "))))
        cases.append((.matchCount, query("SECRET", .atLeast(0))))
        var budget = query("SECRET")
        budget.budget = MemoryReadBudget(records: 0, characters: 10)
        cases.append((.budget, budget))
        for (limit, invalid) in cases {
            do {
                _ = try await store.search(invalid)
                problems.append("\(limit) was accepted")
            } catch {
                if error.code != .queryInvalid || error.limit != limit { problems.append("\(limit) gave \(error.code) \(error.limit?.rawValue ?? "-")") }
                if error.description.contains("SECRET") { problems.append("\(limit)'s error contains the query's text") }
            }
        }
        let exactly = query((0..<MemoryLimits.queryTokens).map { "w\($0)" }.joined(separator: " ") + " w0 w1")
        do { _ = try await store.search(exactly) } catch { problems.append("256 distinct tokens (with repeats) were refused: \(error)") }
        do {
            _ = try await store.list(MemoryListQuery(namespace: "test", limit: 0))
            problems.append("a list limit of 0 was accepted")
        } catch {
            if error.limit != .listCount { problems.append("a list limit of 0 gave \(error.limit?.rawValue ?? "-")") }
        }
        return problems
    }

    /// Query texts that would be FTS5 syntax if they reached it unquoted.
    public static let hostileTexts = [
        "\"", "\"\"", "\"unterminated", "*", "apple*", "NEAR(apple pie, 2)", "apple AND", "OR", "NOT apple", "apple NOT pie",
        "summary:apple", "evidence : pie", "{summary evidence}: apple", "(apple", "apple)", "^apple", "-apple", "+", "apple + pie",
        "'; DROP TABLE memory_records; --", "\u{0}apple\u{0}", "apple\"pie", "a\"\" OR \"\"b", "\\", "%_", "ünïcödé", "🍎", "",
        String(repeating: "(", count: 10_000),
    ]

    static func hostileTextIsOnlyData(_ store: any MemoryStoring) async throws -> [String] {
        var problems: [String] = []
        try await store.upsert(record("apple", "An apple pie recipe.", importance: 6))
        try await store.upsert(record("syntax", "Words like NEAR, OR, NOT and summary are data.", importance: 5))
        try await store.upsert(record("other", "Bread.", importance: 4))
        for text in hostileTexts {
            for policy in [MemoryQuery.MatchPolicy.anyToken, .allTokens, .atLeast(2)] {
                do {
                    let found = try await ids(store.search(query(text, policy)))
                    let tokens = MemoryText.tokens(text)
                    let expected: [String]
                    if tokens.isEmpty {
                        expected = ["apple", "syntax", "other"]
                    } else {
                        let texts = ["apple": "An apple pie recipe.", "syntax": "Words like NEAR, OR, NOT and summary are data.", "other": "Bread."]
                        let required = query(text, policy).requiredMatches
                        expected = ["apple", "syntax", "other"].filter { id in
                            let present = Set(MemoryText.tokens(texts[id] ?? ""))
                            return tokens.count(where: present.contains) >= required
                        }
                    }
                    if found != expected { problems.append("\(text.prefix(40).debugDescription) \(policy) found \(found), not \(expected)") }
                } catch {
                    problems.append("\(text.prefix(40).debugDescription) \(policy) threw \(error)")
                }
            }
        }
        if try await store.list(MemoryListQuery(namespace: "test", asOf: t0)).count != 3 { problems.append("a hostile query changed the store") }
        let hits = try await store.search(query("summary:NEAR")).hits
        if hits.map(\.record.id) != ["syntax"] || hits.first?.explanation.matchedTokens != ["summary", "near"] {
            problems.append("column-filter text was not matched as two words")
        }
        return problems
    }

    /// One normalization for records and queries: every casing of a name finds the record, whatever
    /// casing it was stored in (`İ`, whose lowercase is `i` + U+0307, included), and nothing else.
    static func caseIsFoldedOneWayForRecordsAndQueries(_ store: any MemoryStoring) async throws -> [String] {
        var problems: [String] = []
        try await store.upsert(record("turkish", "The office is in İstanbul.", evidence: ["ŞİŞLİ district"]))
        try await store.upsert(record("greek", "ΟΔΟΣ Αθηνάς", importance: 4))
        try await store.upsert(record("german", "Die STRAßE ist gesperrt.", importance: 3))
        let expectations: [(String, [String])] = [
            ("İstanbul", ["turkish"]), ("istanbul", ["turkish"]), ("ISTANBUL", ["turkish"]), ("İSTANBUL", ["turkish"]),
            ("şişli", ["turkish"]), ("ŞİŞLİ", ["turkish"]), ("Şişli", ["turkish"]),
            ("οδος", ["greek"]), ("ΟΔΟΣ", ["greek"]), ("αθηνάς", ["greek"]),
            ("straße", ["german"]), ("STRAßE", ["german"]), ("Ankara", []),
        ]
        for (text, expected) in expectations {
            let found = try await ids(store.search(query(text)))
            if found != expected { problems.append("\(text) found \(found), not \(expected)") }
        }
        let hit = try await store.search(query("ISTANBUL")).hits.first
        if hit?.explanation.matchedTokens != ["istanbul"] { problems.append("ISTANBUL matched \(hit?.explanation.matchedTokens ?? [])") }
        return problems
    }

    static func namespacesAreIsolated(_ store: any MemoryStoring) async throws -> [String] {
        var problems: [String] = []
        try await store.upsert(record("mine", "Shared word.", namespace: "test"))
        try await store.upsert(record("theirs", "Shared word.", namespace: "other"))
        if try await ids(store.search(query("shared"))) != ["mine"] { problems.append("a search crossed namespaces") }
        if try await store.list(MemoryListQuery(namespace: "other", asOf: t0)).map(\.id) != ["theirs"] { problems.append("a list crossed namespaces") }
        return problems
    }
}
