internal import Foundation
internal import ServerTrustHTTP

#if canImport(FoundationNetworking)
    internal import FoundationNetworking
#endif

/// `HTTPResponse` (a streamed response's head) to `HTTPURLResponse`.
enum URLResponseConversion {
    /// The response as Foundation sees it: the final URL, the status, the version and the
    /// fields, repeated fields joined with ", " (RFC 9110 §5.3; `HTTPURLResponse` holds one
    /// value per name, compared case-insensitively, the first spelling kept). A 401's
    /// `WWW-Authenticate` fields are renamed ``ServerTrustURLProtocol/withheldChallengeField``
    /// (see ``ServerTrustURLProtocol``, "Authentication challenges").
    static func response(_ head: HTTPResponse, requestURL: URL) -> HTTPURLResponse? {
        let url = URL(string: head.url) ?? requestURL
        var fields: [String: String] = [:]
        var spelling: [String: String] = [:]
        for (name, value) in head.headers {
            var name = name
            if head.statusCode == 401 && name.lowercased() == "www-authenticate" {
                name = ServerTrustURLProtocol.withheldChallengeField
            }
            let key = name.lowercased()
            if let first = spelling[key] {
                fields[first, default: ""] += ", " + value
            } else {
                spelling[key] = name
                fields[name] = value
            }
        }
        return HTTPURLResponse(url: url, statusCode: head.statusCode, httpVersion: head.httpVersion, headerFields: fields)
    }
}
