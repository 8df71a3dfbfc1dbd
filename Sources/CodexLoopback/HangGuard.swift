/// How long a test waits for an event it expects (a request reaching the loopback server, a connection
/// closing, a line on a terminal) before it fails: long enough for a loaded 2-core machine, and shorter
/// than the suites' time limits. Never a delay raced against a timeout: the wait ends as soon as the event
/// happens. Scaled by `Sanitizer.slowdown`, like the suites' time limits, since ThreadSanitizer and
/// AddressSanitizer run the suite 3–15× slower.
extension Duration {
    /// The wait for an expected event: 150 s, times `Sanitizer.slowdown` in a sanitized build.
    public static var hangGuard: Duration { .seconds(150 * Sanitizer.slowdown) }
}
