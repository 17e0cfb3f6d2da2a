internal import Dispatch
internal import Foundation
internal import ServerTrustHTTP

#if canImport(FoundationNetworking)
    internal import FoundationNetworking
#endif

/// A request ready to send: the `HTTPRequest`, the session, and what the load needs besides.
struct PreparedRequest: Sendable {
    let session: HTTPSession
    var request: HTTPRequest
    /// The URL failures name.
    let url: URL
    /// A body stream to read before sending (`httpBodyStream`, or an upload task's stream).
    let bodyStream: BodyStreamBox?
    /// Seconds without activity before the load times out (`URLRequest.timeoutInterval`, or
    /// the session's `timeoutIntervalForRequest`); `nil` for none.
    let idleTimeout: Double?
    /// The task's `URLSession`, when it can be read: its delegate and credential storage
    /// answer 401 challenges, its cookie storage takes `Set-Cookie`.
    let settings: FoundationSessionSettings?
}

/// An `InputStream` moved from Foundation's work queue to the load's task.
final class BodyStreamBox: @unchecked Sendable {
    // @unchecked Sendable: the stream is read by the load's task alone, once; nothing else
    // holds this box.
    private let stream: InputStream

    init(_ stream: InputStream) {
        self.stream = stream
    }

    /// The whole stream.
    /// - Throws: `URLError.requestBodyStreamExhausted` when the stream fails.
    func readAll() throws(URLError) -> [UInt8] {
        stream.open()
        defer { stream.close() }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = stream.read(&buffer, maxLength: buffer.count)
            if count == 0 { return bytes }
            guard count > 0 else {
                throw URLError(
                    .requestBodyStreamExhausted,
                    userInfo: [
                        NSLocalizedDescriptionKey: "the request's body stream failed: \(stream.streamError.map { "\($0)" } ?? "read error")"
                    ])
            }
            bytes += buffer[0..<count]
        }
    }
}

/// `URLRequest` (and the task's body) to `HTTPRequest`.
enum URLRequestConversion {
    /// Fields of Apple's reserved list that frame the message or the connection: the transport
    /// sets them from the body it sends (a caller's `Content-Length` that disagreed with the
    /// body would leave the rest of the body on the connection as the start of another
    /// request), so a request's own values are not sent, as Apple's URLSession may ignore them.
    static let transportOwnedFields: Set<String> = ["content-length", "transfer-encoding", "connection"]

    static func prepare(_ request: URLRequest, task: URLSessionTask?, session: HTTPSession?) -> Result<PreparedRequest, URLError> {
        guard let url = request.url else {
            return .failure(URLErrorMapping.error(.badURL, url: nil, "the request has no URL"))
        }
        let scheme = url.scheme?.lowercased() ?? ""
        if task is URLSessionWebSocketTask || scheme == "ws" || scheme == "wss" {
            return .failure(
                URLErrorMapping.error(
                    .unsupportedURL, url: url,
                    "ServerTrustURLProtocol does not serve WebSocket tasks; it refuses them rather than leave them "
                        + "to Foundation's WebSocket protocol and its trust"))
        }
        if task is URLSessionDownloadTask {
            return .failure(
                URLErrorMapping.error(
                    .unsupportedURL, url: url,
                    "a URLProtocol cannot complete a download task on swift-corelibs-foundation (its file is read "
                        + "from URLProtocol.properties, internal to FoundationNetworking); use a data task"))
        }
        guard let session else {
            return .failure(
                URLErrorMapping.error(
                    .unsupportedURL, url: url,
                    "no HTTPSession is registered for ServerTrustURLProtocol (ServerTrustURLProtocol.register(_:)); the request was not sent"))
        }

        let settings = FoundationSessionSettings.of(task)
        var headers = HTTPHeaders()
        let fields = request.allHTTPHeaderFields ?? [:]
        let requestNames = Set(fields.keys.map { $0.lowercased() })
        // `httpAdditionalHeaders` first, then the request's own fields, which win over a
        // session field of the same name whatever its case (`_HTTPURLProtocol.configureEasyHandle`).
        for (name, value) in settings?.additionalHeaders ?? [] where !requestNames.contains(name.lowercased()) {
            if !transportOwnedFields.contains(name.lowercased()) { headers.add(name, value) }
        }
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) where !transportOwnedFields.contains(name.lowercased()) {
            headers.add(name, value)
        }
        // Foundation's loader gives a POST with a body and no Content-Type the form type.
        if request.httpMethod == "POST", headers["Content-Type"] == nil,
            (request.httpBody?.isEmpty == false) || request.httpBodyStream != nil || FoundationTaskBody.isStream(task)
        {
            headers.add("Content-Type", "application/x-www-form-urlencoded")
        }
        var converted = HTTPRequest(HTTPMethod(rawValue: request.httpMethod ?? "GET"), url.absoluteString, headers: headers)
        var bodyStream: BodyStreamBox?

        // An upload task's body is the task's, not the request's (Apple ignores the request's
        // body for upload tasks, and swift-corelibs-foundation keeps it in `knownBody`).
        let body: FoundationTaskBody
        if let task, task is URLSessionUploadTask {
            body = FoundationTaskBody.of(task)
        } else if let data = request.httpBody, !data.isEmpty {
            body = .bytes([UInt8](data))
        } else if let stream = request.httpBodyStream {
            body = .stream(stream)
        } else {
            body = .none
        }
        switch body {
        case .none:
            break
        case .bytes(let bytes):
            converted.body = bytes
        case .file(let fileURL):
            if let failure = checkUploadFile(fileURL, requestURL: url) { return .failure(failure) }
            converted.bodyFilePath = fileURL.path
        case .stream(let stream):
            bodyStream = BodyStreamBox(stream)
        case .requestedFromDelegate:
            return .failure(
                URLErrorMapping.error(
                    .requestBodyStreamExhausted, url: url,
                    "uploadTask(withStreamedRequest:) asks the session's delegate for the body, which a URLProtocol cannot reach; "
                        + "give the request an httpBodyStream, or use uploadTask(with:from:) or uploadTask(with:fromFile:)"))
        case .unreadable:
            return .failure(
                URLErrorMapping.error(
                    .requestBodyStreamExhausted, url: url,
                    "the upload task's body could not be read from this Foundation (URLSessionTask.knownBody not found); "
                        + "the request was not sent without it"))
        }

        // The idle limit: the request's interval when it was set, else the session's
        // timeoutIntervalForRequest (as Foundation's loader chooses). The whole request may
        // take as long as the HTTPSession allows and never less than the idle limit, and no
        // longer than the URLSession's timeoutIntervalForResource.
        let interval =
            settings.map { FoundationSessionSettings.timeoutIsSet(request) ? request.timeoutInterval : $0.timeoutForRequest } ?? request.timeoutInterval
        let idle = interval > 0 && interval.isFinite ? interval : nil
        var whole = max(session.configuration.timeout, idle ?? 0)
        if let resource = settings?.timeoutForResource, resource > 0, resource.isFinite { whole = min(whole, resource) }
        converted.timeout = whole
        return .success(
            PreparedRequest(session: session, request: converted, url: url, bodyStream: bodyStream, idleTimeout: idle, settings: settings))
    }

    /// The codes `URLSession` reports for an upload file it cannot read
    /// (`NSURLErrorFileDoesNotExist`, `NSURLErrorNoPermissionsToReadFile`).
    private static func checkUploadFile(_ fileURL: URL, requestURL: URL) -> URLError? {
        guard fileURL.isFileURL else {
            return URLErrorMapping.error(.unsupportedURL, url: requestURL, "the upload body \(fileURL) is not a file URL")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: fileURL.path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            return URLErrorMapping.error(.fileDoesNotExist, url: requestURL, "the upload body file \(fileURL.path) does not exist")
        }
        guard FileManager.default.isReadableFile(atPath: fileURL.path) else {
            return URLErrorMapping.error(.noPermissionsToReadFile, url: requestURL, "the upload body file \(fileURL.path) is not readable")
        }
        return nil
    }
}

/// The body of a swift-corelibs-foundation `URLSessionTask`, which upload tasks keep outside
/// the request: `URLSessionTask.knownBody`, an internal `_Body?` (`none`, `data(DispatchData)`,
/// `file(URL)`, `stream(InputStream)`; `nil` for `uploadTask(withStreamedRequest:)`, whose body
/// the delegate supplies). Foundation sets it when the task is made and only its own
/// `_HTTPURLProtocol` changes it, so reading it from a task this protocol serves races with
/// nothing. It is read through `Mirror`, read only; anything unexpected is ``unreadable``,
/// and the task fails rather than send the request without its body.
enum FoundationTaskBody {
    case none
    case bytes([UInt8])
    case file(URL)
    case stream(InputStream)
    /// `knownBody` is `nil`: the delegate would supply the body.
    case requestedFromDelegate
    /// `knownBody` was not found, or held something unexpected.
    case unreadable

    /// Whether `task` is an upload task whose body is a stream (Foundation's loader counts it
    /// as a body for the POST default `Content-Type`).
    static func isStream(_ task: URLSessionTask?) -> Bool {
        guard let task, task is URLSessionUploadTask, case .stream = of(task) else { return false }
        return true
    }

    static func of(_ task: URLSessionTask) -> FoundationTaskBody {
        var mirror: Mirror? = Mirror(reflecting: task)
        while let current = mirror {
            if let child = current.children.first(where: { $0.label == "knownBody" }) {
                return decode(child.value)
            }
            mirror = current.superclassMirror
        }
        return .unreadable
    }

    private static func decode(_ value: Any) -> FoundationTaskBody {
        let optional = Mirror(reflecting: value)
        guard optional.displayStyle == .optional else { return .unreadable }
        guard let wrapped = optional.children.first?.value else { return .requestedFromDelegate }
        let body = Mirror(reflecting: wrapped)
        guard body.displayStyle == .enum else { return .unreadable }
        guard let payload = body.children.first else {
            return String(describing: wrapped) == "none" ? .none : .unreadable
        }
        switch (payload.label, payload.value) {
        case ("data"?, let data as DispatchData): return .bytes([UInt8](data))
        case ("file"?, let url as URL): return .file(url)
        case ("stream"?, let stream as InputStream): return .stream(stream)
        default: return .unreadable
        }
    }
}
