#if canImport(Darwin)
/// The platform's HTTP client: ``URLSessionHTTPClient`` on Apple platforms.
public typealias DefaultHTTPClient = URLSessionHTTPClient
#else
/// The platform's HTTP client: ``CurlHTTPClient`` on Linux (FoundationNetworking can stop the process on
/// some malformed replies and cannot pause a transfer, so memory would follow the sender).
public typealias DefaultHTTPClient = CurlHTTPClient
#endif
