import Testing

@testable import ServerTrustHTTP

/// Transport failures by kind (issue 23 item 5): libcurl's codes and texts are read in one
/// place inside the transport, and stay there as diagnostic text; the public error, the retry
/// policy and the `URLError` mapping read only the kind.
@Suite("transport errors: libcurl's results by kind, its code kept as diagnostic text")
struct TransportErrorTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var code: UInt32
        var text: String = ""
        var headerSectionUnfinished = false
        var tunnelRefused = false
        var kind: TransportError.Kind
        var testDescription: String { "curl \(code) \"\(text.prefix(40))\" → \(kind.rawValue)" }
    }

    /// Every result the lane can meet (curl.h, libcurl 7.88), with the texts OpenSSL and
    /// libcurl give them.
    static let rows: [Row] = [
        Row(code: 6, text: "Could not resolve host: nowhere.invalid", kind: .hostNotFound),
        Row(code: 5, text: "Could not resolve proxy: proxy.invalid", kind: .hostNotFound),
        Row(code: 7, text: "Failed to connect to www.example.test port 1 after 0 ms: Couldn't connect to server", kind: .cannotConnect),
        Row(code: 45, kind: .cannotConnect),
        Row(code: 28, text: "Operation timed out after 300 milliseconds with 0 bytes received", kind: .timedOut),
        Row(code: 35, text: "OpenSSL SSL_connect: Connection reset by peer in connection to www.example.test:443", kind: .tlsHandshakeFailed),
        Row(code: 35, text: "error:0A000410:SSL routines::sslv3 alert handshake failure", kind: .tlsHandshakeFailed),
        Row(code: 60, kind: .tlsHandshakeFailed),
        Row(code: 58, kind: .tlsHandshakeFailed),
        // The server's verdict on the client's certificate, as a handshake (TLS 1.2) or a
        // receive (TLS 1.3) error.
        Row(code: 56, text: "OpenSSL SSL_read: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0", kind: .clientCertificateRequired),
        Row(code: 35, text: "error:0A000412:SSL routines::sslv3 alert bad certificate", kind: .clientCertificateRejected),
        Row(code: 56, text: "OpenSSL SSL_read: error:0A000418:SSL routines::tlsv1 alert unknown ca, errno 0", kind: .clientCertificateRejected),
        Row(code: 55, text: "OpenSSL SSL_write: error:0A00042E:SSL routines::tlsv1 alert access denied", kind: .clientCertificateRejected),
        Row(code: 98, kind: .clientCertificateRequired),
        Row(code: 56, text: "Recv failure: Connection reset by peer", kind: .connectionLost),
        Row(code: 55, text: "Send failure: Broken pipe", kind: .connectionLost),
        Row(code: 18, text: "transfer closed with 1024 bytes remaining to read", kind: .connectionLost),
        Row(code: 52, text: "Empty reply from server", kind: .connectionLost),
        Row(code: 16, kind: .connectionLost),
        Row(code: 92, text: "Stream error in the HTTP/2 framing layer", kind: .connectionLost),
        Row(code: 8, text: "Unsupported HTTP version in response", kind: .invalidResponse),
        Row(code: 1, text: "Received HTTP/0.9 when not allowed", kind: .invalidResponse),
        Row(code: 27, text: "Out of memory", headerSectionUnfinished: true, kind: .responseHeadersTooLarge),
        Row(code: 56, text: "Too large response headers: 307300 > 307200", headerSectionUnfinished: true, kind: .responseHeadersTooLarge),
        Row(code: 27, text: "Out of memory", kind: .other),
        Row(code: 61, text: "Error while processing content unencoding: invalid stored block lengths", kind: .contentDecodingFailed),
        Row(code: 97, kind: .proxyFailed),
        Row(code: 56, text: "CONNECT tunnel failed, response 403", tunnelRefused: true, kind: .proxyFailed),
        Row(code: 23, text: "Failure writing output to destination", kind: .other),
        Row(code: 99, kind: .other),
    ]

    @Test(arguments: rows)
    func kind(_ row: Row) {
        let error = TransportError(
            curl: row.code, errorText: row.text, headerSectionUnfinished: row.headerSectionUnfinished, tunnelRefused: row.tunnelRefused)
        #expect(error.kind == row.kind, "\(error)")
        // The code is diagnostic text, at the end of the one line.
        #expect(error.diagnostic == "curl \(row.code)")
        #expect(error.description.hasPrefix("\(row.kind): ") && error.description.hasSuffix(" (curl \(row.code))"), "\(error)")
        if row.kind != .responseHeadersTooLarge || row.code != 27 {
            // The transport's text, or curl's text for the code when its buffer was empty.
            #expect(row.text.isEmpty ? !error.message.isEmpty : error.message == row.text, "\(error)")
        }
    }

    @Test("a header field past libcurl's limit says so, with the limit for the command line")
    func headerFieldLimit() {
        let error = TransportError(curl: 27, errorText: "", headerSectionUnfinished: true, tunnelRefused: false)
        #expect(error.responseHeaderLimit == 100 * 1024)
        #expect(error.description == "response headers too large: response header field larger than 102400 bytes (libcurl's CURL_MAX_HTTP_HEADER) (curl 27)")
        let whole = TransportError(curl: 56, errorText: "Too large response headers: 307300 > 307200", headerSectionUnfinished: true, tunnelRefused: false)
        #expect(whole.kind == .responseHeadersTooLarge && whole.responseHeaderLimit == nil)
    }

    @Test("the retry policy retries the network's failures and nothing that would fail again", arguments: TransportError.Kind.allCases)
    func retry(_ kind: TransportError.Kind) {
        let transient: Set<TransportError.Kind> = [.hostNotFound, .cannotConnect, .timedOut, .tlsHandshakeFailed, .connectionLost]
        let error: HTTPError = kind == .timedOut ? .timedOut(TransportError(kind, message: "")) : .transport(TransportError(kind, message: ""))
        #expect(RetryPolicy.isTransient(error) == transient.contains(kind))
    }

    @Test("an error made by an app has no diagnostic code; its description is the kind and the message")
    func madeByApp() {
        let error = TransportError(.cannotConnect, message: "no route")
        #expect(error.description == "cannot connect: no route")
        #expect(HTTPError.transport(error).description == "transport failure: cannot connect: no route")
        #expect(HTTPError.timedOut(TransportError(.timedOut, message: "after 2 s")).description == "timed out: after 2 s")
    }
}
