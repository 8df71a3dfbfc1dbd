public import CodexCore
public import CodexSchema
public import Foundation

/// Reads account limits from response headers (`x-<family>-primary-used-percent`, …,
/// `x-codex-credits-*`) and from `codex.rate_limits` events into typed snapshots, one per family.
///
/// Every response is read, errors included. Optional fields that do not parse are dropped without
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
        let used = headers[prefix + "-used-percent"].flatMap(Double.init).flatMap { $0.isFinite ? $0 : nil }
        let minutes = headers[prefix + "-window-minutes"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        var resetsAt = headers[prefix + "-reset-at"].flatMap { Double($0) }.map { Date(timeIntervalSince1970: $0) }
        if resetsAt == nil, let after = headers[prefix + "-reset-after-seconds"].flatMap(Double.init), after.isFinite {
            resetsAt = now.addingTimeInterval(after)
        }
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
        let used = node["used_percent"]?.number?.doubleValue
        let minutes = node["window_minutes"]?.int
        var resetsAt = node["reset_at"]?.number.map { Date(timeIntervalSince1970: $0.doubleValue) }
        if resetsAt == nil, let after = (node["reset_after_seconds"] ?? node["resets_in_seconds"])?.number?.doubleValue {
            resetsAt = now.addingTimeInterval(after)
        }
        guard (used ?? 0) != 0 || (minutes ?? 0) != 0 || resetsAt != nil else { return nil }
        return AgentRateLimitWindow(usedPercent: used ?? 0, windowDurationMinutes: minutes, resetsAt: resetsAt)
    }
}
