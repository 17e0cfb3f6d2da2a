internal import Foundation
internal import ServerTrustHTTP

#if canImport(FoundationNetworking)
    internal import FoundationNetworking
#endif

/// What a load needs from the `URLSession` its task belongs to: the configuration fields and
/// the delegate Foundation's own HTTP loader (`_HTTPURLProtocol`) reads from the task's
/// session.
///
/// swift-corelibs-foundation keeps that session in `URLSessionTask.session`, which is
/// internal; Foundation's loader reads it as `task?.session as! URLSession`
/// (`_HTTPURLProtocol.configureEasyHandle`). It is read here through `Mirror`, read only, once
/// per load (Foundation sets it when the task is made and replaces it only once the task has
/// completed), as ``FoundationTaskBody`` reads the upload body. When it cannot be found (a
/// Foundation that keeps it elsewhere) the load goes on with the request alone, as before.
final class FoundationSessionSettings: @unchecked Sendable {
    // @unchecked Sendable: URLSession is Sendable; the configuration's values are copied out
    // when the settings are made, and the delegate and credential storage are used only as
    // URLSession itself uses them (the delegate on the session's delegate queue, the storage
    // through its own locking).
    let session: URLSession
    let task: URLSessionTask
    /// `URLSessionConfiguration.httpAdditionalHeaders`, as strings.
    let additionalHeaders: [(name: String, value: String)]
    /// `URLSessionConfiguration.timeoutIntervalForRequest`.
    let timeoutForRequest: TimeInterval
    /// `URLSessionConfiguration.timeoutIntervalForResource`.
    let timeoutForResource: TimeInterval
    /// Where `Set-Cookie` goes (`httpCookieStorage`, unless `httpCookieAcceptPolicy` is `.never`).
    let cookieStorage: HTTPCookieStorage?
    /// `urlCredentialStorage`: credentials proposed for a 401, and remembered after one.
    let credentialStorage: URLCredentialStorage?

    private init(session: URLSession, task: URLSessionTask) {
        self.session = session
        self.task = task
        let configuration = session.configuration
        additionalHeaders = (configuration.httpAdditionalHeaders ?? [:]).compactMap { key, value in
            // Foundation converts keys and values with String(describing:) (`convertToStringString`).
            guard let name = key as? String ?? (key as? NSString).map({ String(describing: $0) }) else { return nil }
            return (name, value as? String ?? String(describing: value))
        }.sorted { $0.name < $1.name }
        timeoutForRequest = configuration.timeoutIntervalForRequest
        timeoutForResource = configuration.timeoutIntervalForResource
        cookieStorage = configuration.httpCookieAcceptPolicy == .never ? nil : configuration.httpCookieStorage
        credentialStorage = configuration.urlCredentialStorage
    }

    /// The settings of `task`'s session, or `nil` when it cannot be found.
    static func of(_ task: URLSessionTask?) -> FoundationSessionSettings? {
        guard let task else { return nil }
        var mirror: Mirror? = Mirror(reflecting: task)
        while let current = mirror {
            if let child = current.children.first(where: { $0.label == "session" }) {
                let optional = Mirror(reflecting: child.value)
                let value: Any? = optional.displayStyle == .optional ? optional.children.first?.value : child.value
                guard let session = value as? URLSession else { return nil }
                return FoundationSessionSettings(session: session, task: task)
            }
            mirror = current.superclassMirror
        }
        return nil
    }

    /// The delegate Foundation asks about the task's challenges: the task's own, else the
    /// session's (`URLSessionTask.delegate` in swift-corelibs-foundation).
    var delegate: (any URLSessionTaskDelegate)? {
        task.delegate ?? session.delegate as? any URLSessionTaskDelegate
    }

    /// Stores the response's `Set-Cookie` fields in `httpCookieStorage`, one field at a time
    /// as Foundation's loader does (`_EasyHandle.setCookies(headerData:)`), unless the policy is
    /// `.never`; the storage applies its own accept policy.
    func storeCookies(from head: HTTPResponse) {
        guard let cookieStorage, let url = URL(string: head.url) else { return }
        for value in head.headers.values("Set-Cookie") {
            let cookies = HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": value], for: url)
            if !cookies.isEmpty { cookieStorage.setCookies(cookies, for: url, mainDocumentURL: nil) }
        }
    }

    /// Whether `request.timeoutInterval` was set explicitly. Foundation's loader uses it only
    /// then (`URLRequest.isTimeoutIntervalSet`, internal, set by the property's setter), and
    /// `timeoutIntervalForRequest` otherwise. The setter is read through `Mirror`; a value
    /// other than `URLRequest`'s default of 60 s counts as set too, so a request made with
    /// `URLRequest(url:cachePolicy:timeoutInterval:)` keeps its interval (where
    /// swift-corelibs-foundation's loader would drop it, Apple's keeps it).
    static func timeoutIsSet(_ request: URLRequest) -> Bool {
        if request.timeoutInterval != 60 { return true }
        return Mirror(reflecting: request).children.first { $0.label == "isTimeoutIntervalSet" }?.value as? Bool ?? false
    }
}
