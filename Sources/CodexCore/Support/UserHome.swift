import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The user's home directory for paths the SDK and `codexctl` derive from it (secret stores, the Codex
/// CLI's `auth.json`, state and configuration directories).
package enum UserHome {
    /// `HOME` when it is an absolute path, else the account's home from the password database. An empty
    /// or relative `HOME` is not a home: taken as one, it would put credentials, and read someone's
    /// planted `auth.json`, in whatever directory a command runs in.
    package static func path(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let home = environment["HOME"], home.hasPrefix("/") { return home }
        if let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir {
            let text = String(cString: directory)
            if text.hasPrefix("/") { return text }
        }
        return "/"
    }
}
