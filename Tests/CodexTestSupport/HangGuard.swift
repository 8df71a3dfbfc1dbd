/// How long a test waits for an event it expects (a request reaching the loopback server, a connection
/// closing) before it fails: long enough for a sanitized build on a loaded 2-core machine (ThreadSanitizer
/// and AddressSanitizer run the suite 3–15× slower), and inside the suites' three-minute time limit.
/// Never a delay raced against a timeout: the wait ends as soon as the event happens.
extension Duration {
    /// The wait for an expected event, 150 s.
    public static var hangGuard: Duration { .seconds(150) }
}
