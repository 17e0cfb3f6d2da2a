import CertificateParsing
import ServerTrust
import Testing

/// One pinning configuration that pins one certificate, for suites that run a table of them
/// (every pin kind, validated or not) against the same chains.
struct PinConfiguration: Sendable, CustomTestStringConvertible {
    let name: String
    let make: @Sendable (Certificate) throws -> any ServerTrustEvaluating

    init(name: String, _ make: @escaping @Sendable (Certificate) throws -> any ServerTrustEvaluating) {
        self.name = name
        self.make = make
    }

    var testDescription: String { name }

    /// An SPKI pin set for ``PolicyFixtures/host``: `certificate`'s key and the backup pin.
    static func pinSet(_ certificate: Certificate) throws -> PinnedHost {
        PinnedHost(pattern: try HostPattern(PolicyFixtures.host), pins: [SPKIPin(certificate: certificate), PolicyFixtures.shared.backupPin])
    }
}
