import CodexCore
import Foundation
import Glibc
import Testing

/// An empty or relative `HOME` is not a home: secrets and auth files would follow the working directory.
@Suite struct UserHomeTests {
    @Test func anAbsoluteHomeIsTakenAndAnyOtherFallsBackToTheAccountsHome() throws {
        let account = try #require(getpwuid(geteuid())?.pointee.pw_dir).map { String(cString: $0) }
        #expect(UserHome.path(["HOME": "/srv/someone"]) == "/srv/someone")
        for home in ["", ".", "relative/home"] {
            #expect(UserHome.path(["HOME": home]) == account, "\(home)")
        }
        #expect(UserHome.path([:]) == account)
    }
}
