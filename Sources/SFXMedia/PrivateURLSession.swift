import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSessionConfiguration {
    /// A session that keeps nothing: no cache, no cookies, no credentials; sfx downloads and
    /// uploads single files and needs none of it. (Making any configuration still touches
    /// FoundationNetworking's shared cookie store, which on Linux creates an empty directory
    /// named after the program's folder in `$XDG_DATA_HOME`, e.g. `~/.local/share/libexec`; it
    /// reads no cookie from there and, with this configuration, writes none.)
    public static var keepingNothing: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCredentialStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
    }
}
