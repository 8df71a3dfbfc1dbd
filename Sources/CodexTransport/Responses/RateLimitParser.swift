public import CodexCore
public import CodexSchema
public import Foundation

/// Reads account limits from response headers (`x-<family>-primary-used-percent`, …,
/// `x-codex-credits-*`) and from `codex.rate_limits` events into typed snapshots, one per family.
///
/// Every response is read, errors included. Optional fields that do not parse, or hold a value no server
/// could mean (NaN, negative, a share above 100 %, a reset more than a year ahead), are dropped without
/// losing the rest of their window; a window is kept when it has a used percentage, a window length or
/// a reset time.
public enum RateLimitParser {
    /// The snapshots in a response's headers, one per limit family, sorted by family ID.
    ///
    /// - Parameters:
    ///   - headers: The response headers.
    ///   - now: The current date, for relative reset times (`…-reset-after-seconds`).
    public static func snapshots(fromHeaders headers: HTTPHeaders, now: Date) -> [AgentRateLimitSnapshot] {
        var families: [String: String] = [:] // normalized id → header prefix
        for field in headers.fields {
            let name = field.name.lowercased()
            guard name.hasPrefix("x-"), name.hasSuffix("-primary-used-percent") || name.hasSuffix("-secondary-used-percent") else { continue }
            let suffix = name.hasSuffix("-primary-used-percent") ? "-primary-used-percent" : "-secondary-used-percent"
            let prefix = String(name.dropLast(suffix.count))
            let id = String(prefix.dropFirst(2))
            families[AgentRateLimitSnapshot.normalizedID(id)] = prefix
        }
        if families["codex"] == nil, headers["x-codex-credits-has-credits"] != nil || headers["x-codex-credits-balance"] != nil {
            families["codex"] = "x-codex"
        }
        return families.keys.sorted().compactMap { id -> AgentRateLimitSnapshot? in
            guard let prefix = families[id] else { return nil }
            let primary = window(headers, prefix + "-primary", now: now)
            let secondary = window(headers, prefix + "-secondary", now: now)
            var credits: AgentCreditsSnapshot?
            if prefix == "x-codex" {
                let hasCredits = bool(headers["x-codex-credits-has-credits"])
                let unlimited = bool(headers["x-codex-credits-unlimited"])
                let balance = headers["x-codex-credits-balance"].flatMap { $0.isEmpty ? nil : $0 }
                if hasCredits != nil || unlimited != nil || balance != nil {
                    credits = AgentCreditsSnapshot(hasCredits: hasCredits, unlimited: unlimited, balance: balance)
                }
            }
            guard primary != nil || secondary != nil || credits != nil else { return nil }
            return AgentRateLimitSnapshot(limitID: id, limitName: headers[prefix + "-limit-name"], primary: primary, secondary: secondary, credits: credits)
        }
    }

    private static func window(_ headers: HTTPHeaders, _ prefix: String, now: Date) -> AgentRateLimitWindow? {
        let used = percent(headers[prefix + "-used-percent"].flatMap(Double.init))
        let minutes = self.minutes(headers[prefix + "-window-minutes"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) })
        let resetsAt = resetDate(
            at: headers[prefix + "-reset-at"].flatMap { Double($0) }, after: headers[prefix + "-reset-after-seconds"].flatMap(Double.init), now: now
        )
        let hasWindow = (used ?? 0) != 0 || (minutes ?? 0) != 0 || resetsAt != nil
        guard hasWindow else { return nil }
        return AgentRateLimitWindow(usedPercent: used ?? 0, windowDurationMinutes: minutes, resetsAt: resetsAt)
    }

    private static func bool(_ text: String?) -> Bool? {
        switch text?.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: return nil
        }
    }

    /// The snapshots in a `codex.rate_limits` event: the main family (named by `metered_limit_name`, else
    /// `limit_name`, else `codex`) and any `additional_rate_limits`.
    public static func snapshots(fromEvent root: JSONReader.Node, now: Date) -> [AgentRateLimitSnapshot] {
        var result: [AgentRateLimitSnapshot] = []
        let limits = root["rate_limits"]
        let id = root["metered_limit_name"]?.string ?? root["limit_name"]?.string ?? "codex"
        let primary = window(limits?["primary"], now: now)
        let secondary = window(limits?["secondary"], now: now)
        let credits = root["credits"].flatMap { node -> AgentCreditsSnapshot? in
            guard node.kind == .object else { return nil }
            return AgentCreditsSnapshot(
                hasCredits: node["has_credits"]?.bool, unlimited: node["unlimited"]?.bool,
                balance: node["balance"]?.string ?? node["balance"]?.number?.canonicalText
            )
        }
        if primary != nil || secondary != nil || credits != nil {
            result.append(AgentRateLimitSnapshot(limitID: id, limitName: root["limit_name"]?.string, primary: primary, secondary: secondary, credits: credits))
        }
        for member in root["additional_rate_limits"]?.members ?? [] {
            let node = member.value["rate_limits"] ?? member.value
            let extraPrimary = window(node["primary"], now: now)
            let extraSecondary = window(node["secondary"], now: now)
            if extraPrimary != nil || extraSecondary != nil {
                result.append(AgentRateLimitSnapshot(limitID: member.key, primary: extraPrimary, secondary: extraSecondary))
            }
        }
        return result
    }

    private static func window(_ node: JSONReader.Node?, now: Date) -> AgentRateLimitWindow? {
        guard let node, node.kind == .object else { return nil }
        let used = percent(node["used_percent"]?.number?.doubleValue)
        let minutes = self.minutes(node["window_minutes"]?.int)
        let resetsAt = resetDate(
            at: node["reset_at"]?.number?.doubleValue, after: (node["reset_after_seconds"] ?? node["resets_in_seconds"])?.number?.doubleValue, now: now
        )
        guard (used ?? 0) != 0 || (minutes ?? 0) != 0 || resetsAt != nil else { return nil }
        return AgentRateLimitWindow(usedPercent: used ?? 0, windowDurationMinutes: minutes, resetsAt: resetsAt)
    }

    // MARK: - Plausible values
    //
    // A value a server could not mean is not reported: NaN, infinities, negatives, a share above 100 %,
    // a window longer than a year, a reset more than a year from now either way (`reset_at: 1e300`
    // would be the year 5,838,270).

    /// The longest plausible window or reset wait: 366 days.
    static let longestPlausibleSeconds: Double = 366 * 86_400

    /// A used share in 0…100, else `nil`.
    static func percent(_ value: Double?) -> Double? {
        guard let value, value.isFinite, (0...100).contains(value) else { return nil }
        return value
    }

    /// A window length of 1 minute to 366 days, else `nil`.
    static func minutes(_ value: Int?) -> Int? {
        guard let value, value > 0, Double(value) * 60 <= longestPlausibleSeconds else { return nil }
        return value
    }

    /// The reset time from an epoch (`at`, seconds), else from a wait (`after`, seconds from `now`),
    /// when it falls within 366 days of now (either way); else `nil`.
    static func resetDate(at epoch: Double?, after wait: Double?, now: Date) -> Date? {
        let current = now.timeIntervalSince1970
        if let epoch, epoch.isFinite, abs(epoch - current) <= longestPlausibleSeconds {
            return Date(timeIntervalSince1970: epoch)
        }
        if let wait, wait.isFinite, wait >= 0, wait <= longestPlausibleSeconds {
            return now.addingTimeInterval(wait)
        }
        return nil
    }
}
