package import Foundation

/// A strict reader and writer of the two ISO 8601 forms the usage ledger's inputs take: a day
/// (`2026-12-01`, midnight UTC) and an instant (`2026-12-01T10:00:00Z`, with optional fractional
/// seconds and a `Z` or `±hh:mm` offset). Used by price files and `codexctl usage`.
package enum ISO8601Instant {
    /// The date `text` names, or `nil` when it is not one of the two forms, names no real date
    /// (`2026-02-30`, hour 24), or falls outside the dates a store keeps (``StoredDate/range``: the first
    /// days of year 0 are refused, so nothing read here is shifted when it is written back).
    package static func date(from text: String) -> Date? {
        guard let date = parsedDate(from: text), StoredDate.range.contains(date.timeIntervalSinceReferenceDate) else { return nil }
        return date
    }

    private static func parsedDate(from text: String) -> Date? {
        var reader = Reader(Array(text.utf8))
        guard let year = reader.digits(4), reader.take(UInt8(ascii: "-")), let month = reader.digits(2), reader.take(UInt8(ascii: "-")),
              let day = reader.digits(2), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day) else { return nil }
        var seconds = Double(daysSinceEpoch(year: year, month: month, day: day)) * 86_400
        if reader.isAtEnd { return Date(timeIntervalSince1970: seconds) }
        guard reader.take(UInt8(ascii: "T")), let hour = reader.digits(2), reader.take(UInt8(ascii: ":")), let minute = reader.digits(2),
              reader.take(UInt8(ascii: ":")), let second = reader.digits(2), hour < 24, minute < 60, second < 60 else { return nil }
        seconds += Double(hour * 3600 + minute * 60 + second)
        if reader.take(UInt8(ascii: ".")) {
            guard let fraction = reader.fraction() else { return nil }
            seconds += fraction
        }
        if reader.take(UInt8(ascii: "Z")) {
            // UTC.
        } else if let sign = reader.sign(), let offsetHours = reader.digits(2), reader.take(UInt8(ascii: ":")), let offsetMinutes = reader.digits(2),
                  offsetHours < 24, offsetMinutes < 60 {
            seconds -= Double(sign * (offsetHours * 3600 + offsetMinutes * 60))
        } else {
            return nil
        }
        return reader.isAtEnd ? Date(timeIntervalSince1970: seconds) : nil
    }

    /// Seconds since 1970 of `date`, held within the dates a store keeps (``StoredDate/range``), so the
    /// day arithmetic below never leaves `Int` (a stored date outside it was refused when it was read).
    private static func secondsSince1970(_ date: Date) -> Double {
        let offset = Date.timeIntervalBetween1970AndReferenceDate
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite else { return offset }
        return min(max(seconds, StoredDate.range.lowerBound + offset), StoredDate.range.upperBound + offset)
    }

    /// `2026-12-01` for a date on that UTC day.
    package static func day(of date: Date) -> String {
        let days = Int((secondsSince1970(date) / 86_400).rounded(.down))
        let (year, month, day) = civil(fromDays: days)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    }

    /// `2026-12-01T10:00:00Z`, with up to six fractional digits when the date has a fraction of a second.
    package static func text(of date: Date) -> String {
        let microseconds = (secondsSince1970(date) * 1_000_000).rounded()
        let whole = Int((microseconds / 1_000_000).rounded(.down))
        let fraction = Int(microseconds - Double(whole) * 1_000_000)
        let days = Int((Double(whole) / 86_400).rounded(.down))
        let seconds = whole - days * 86_400
        var text = day(of: Date(timeIntervalSince1970: Double(days) * 86_400)) + "T" + pad(seconds / 3600, 2) + ":" + pad(seconds / 60 % 60, 2) + ":"
            + pad(seconds % 60, 2)
        if fraction > 0 {
            var digits = pad(fraction, 6)
            while digits.hasSuffix("0") { digits.removeLast() }
            text += "." + digits
        }
        return text + "Z"
    }

    /// Days from 1970-01-01 to the given proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's `civil_from_days`).
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(abs(value))
        return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - text.count)) + text
    }

    /// A cursor over the text's bytes.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { index == bytes.count }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// Exactly `count` ASCII digits.
        mutating func digits(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        /// One to nine digits after a decimal point, as a fraction of a second.
        mutating func fraction() -> Double? {
            var text = "0."
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                text.unicodeScalars.append(Unicode.Scalar(bytes[index]))
                index += 1
            }
            guard (3...11).contains(text.count) else { return nil }
            return Double(text)
        }

        /// `+1` or `-1` for an offset's sign.
        mutating func sign() -> Int? {
            if take(UInt8(ascii: "+")) { return 1 }
            if take(UInt8(ascii: "-")) { return -1 }
            return nil
        }
    }
}
