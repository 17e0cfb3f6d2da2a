// ServerTrustKit: everything an app needs with one import.
//
// `import ServerTrustKit` brings in the HTTPS client (`HTTPSession`, requests, responses,
// serializers, interceptors), the trust policy (`SecurityPolicy`, the evaluators, SPKI pin
// sets, policy files, `ServerTrustDecider`), the trust stores and the verifier (`TrustStore`,
// `Verifier`), the certificate model (`Certificate`), and the URLSession drop-in
// (`ServerTrustURLProtocol`), so a pinned GET needs no other import.
@_exported public import CertificateParsing
@_exported public import ServerTrust
@_exported public import ServerTrustHTTP
@_exported public import ServerTrustURLSession
@_exported public import TrustEvaluation
