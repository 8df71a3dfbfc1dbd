// The testing product (test doubles and, through it, the loopback server) is part of the test support
// every test target imports.
@_exported public import CodexKitTesting
