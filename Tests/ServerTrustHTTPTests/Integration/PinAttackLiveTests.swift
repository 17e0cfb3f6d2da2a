import CertificateParsing
import Foundation
import ServerTrust
import ServerTrustHTTP
import ServerTrustLab
import Testing
import TrustEvaluation

/// The pin-bypass attacks live, on loopback TLS servers through `HTTPSession`: an attacker
/// with no trusted CA serves its self-signed leaf followed by the genuine, public, pinned
/// intermediate (or root), and a man in the middle whose interception CA the client trusts
/// mints a leaf and sends the genuine pinned intermediate after it (OkHttp's CVE-2016-2402, the
/// case pinning exists for). Every pinning configuration refuses both inside the handshake, so
/// no request byte reaches either, and accepts the genuine server.
@Suite("pin bypass attacks on the wire: appended genuine certificates never pass")
struct PinAttackLiveTests {
    static let host = "www.example.test"

    /// The servers: genuine, the attacker appending the pinned certificate, the MITM appending it.
    final class Fixture: Sendable {
        let pki: LabPKI
        let genuine: LabTLSServer
        let attackerAppendingIntermediate: LabTLSServer
        let attackerAppendingRoot: LabTLSServer
        let mitmAppendingIntermediate: LabMITMRelay
        let interceptionRoot: Certificate

        init() throws {
            let pki = try Lab.pki(host: PinAttackLiveTests.host, keySlot: 44)
            self.pki = pki
            genuine = try Lab.server(.init(pki: pki), name: "genuine")
            let attackerKey = try LabKey.shared(.p256, slot: 45)
            let attacker = try LabCertificate.issue(
                LabPKI.leafSpec(host: PinAttackLiveTests.host, keyAlgorithm: .p256, notBefore: Lab.now - LabClock.day, notAfter: Lab.now + LabClock.day),
                subjectKey: attackerKey)
            attackerAppendingIntermediate = try Lab.server(.init(chain: [attacker, pki.intermediate], key: attackerKey), name: "attacker+int")
            attackerAppendingRoot = try Lab.server(.init(chain: [attacker, pki.intermediate, pki.root], key: attackerKey), name: "attacker+root")
            let interception = try Lab.pki(host: "mitm.invalid", keySlot: 46)
            var relay = LabMITMRelay.Configuration(
                mode: .transparent(upstreamHost: "127.0.0.1", upstreamPort: genuine.port), interceptionCA: interception.rootIssuer,
                name: "mitm+int")
            relay.interceptionChain = [pki.intermediate]
            relay.fallbackServerName = PinAttackLiveTests.host
            mitmAppendingIntermediate = try LabMITMRelay.started(relay)
            interceptionRoot = try Lab.certificate(interception.root)
        }

        /// The client's roots: the genuine root and the interception root the user installed.
        func anchors() throws -> TrustStore { TrustStore([try Lab.certificate(pki.root), interceptionRoot], sources: ["device"]) }

        func session(_ evaluator: any ServerTrustEvaluating, port: UInt16) throws -> HTTPSession {
            var configuration = HTTPSessionConfiguration(serverTrust: ServerTrustDecider(evaluator, anchors: try anchors()))
            configuration.resolve = ["\(PinAttackLiveTests.host):\(port):127.0.0.1"]
            configuration.timeout = 10
            return try HTTPSession(configuration: configuration)
        }

        func stop() {
            genuine.stop()
            attackerAppendingIntermediate.stop()
            attackerAppendingRoot.stop()
            mitmAppendingIntermediate.stop()
        }
    }

    /// Pinning configurations with the certificate they pin, and whether the genuine server
    /// passes: every one does, since without validation the pins compare with the signature
    /// chain, which the genuine intermediate and root are on.
    static func configurations(pinning pinned: Certificate) throws -> [(String, any ServerTrustEvaluating, genuine: Bool)] {
        var list: [(String, any ServerTrustEvaluating, genuine: Bool)] = []
        for semantics in PolicySemantics.allCases {
            for mode in [PinningMode.publicKey, .certificate] {
                for allowInvalid in [false, true] {
                    for validatesDomain in [true, false] {
                        list.append(
                            (
                                "SecurityPolicy \(semantics) \(mode) allowInvalid=\(allowInvalid) validatesDomainName=\(validatesDomain)",
                                SecurityPolicy(
                                    pinningMode: mode, pinnedCertificates: [pinned], allowInvalidCertificates: allowInvalid,
                                    validatesDomainName: validatesDomain, semantics: semantics), true
                            ))
                    }
                }
            }
        }
        for validate in [true, false] {
            let pins = try PinningConfiguration([
                PinnedHost(pattern: HostPattern("**.example.test"), pins: [SPKIPin(certificate: pinned)], requiresBackupPin: false)
            ])
            list.append(
                (
                    "SPKI pins validation=\(validate)", SPKIPinsTrustEvaluator(configuration: pins, performDefaultValidation: validate, validateHost: validate),
                    true
                ))
            list.append(
                (
                    "public keys validation=\(validate)",
                    PublicKeysTrustEvaluator(certificates: [pinned], performDefaultValidation: validate, validateHost: validate), true
                ))
            list.append(
                (
                    "pinned certificates validation=\(validate)",
                    PinnedCertificatesTrustEvaluator(certificates: [pinned], performDefaultValidation: validate, validateHost: validate), true
                ))
        }
        return list
    }

    @Test("every pinning configuration refuses the attacker and the MITM that append the pinned certificate, and accepts the genuine server")
    func appendedPinsNeverPass() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        for pinnedLab in [fixture.pki.intermediate, fixture.pki.leaf, fixture.pki.root] {
            let pinned = try Lab.certificate(pinnedLab)
            for (name, evaluator, genuineAccepted) in try Self.configurations(pinning: pinned) {
                let url = { (port: UInt16) in "https://\(Self.host):\(port)/" }
                for (attack, port) in [
                    ("attacker + genuine intermediate", fixture.attackerAppendingIntermediate.port),
                    ("attacker + genuine intermediate and root", fixture.attackerAppendingRoot.port),
                    ("MITM (trusted CA) + genuine intermediate", fixture.mitmAppendingIntermediate.port),
                ] {
                    let session = try fixture.session(evaluator, port: port)
                    let error = await failure { try await session.get(url(port)) }
                    session.invalidate()
                    let decision = error?.rejection
                    #expect(decision != nil, "\(name), pinned \(pinned.subject.rfc4514): \(attack) got \(String(describing: error))")
                }
                if genuineAccepted {
                    let session = try fixture.session(evaluator, port: fixture.genuine.port)
                    let response = try await session.get(url(fixture.genuine.port))
                    session.invalidate()
                    #expect(response.statusCode == 200, "\(name), pinned \(pinned.subject.rfc4514)")
                }
            }
        }
        // Nothing an attacker served was ever sent a request; the MITM never reached upstream.
        #expect(fixture.attackerAppendingIntermediate.statistics.requestsServed == 0)
        #expect(fixture.attackerAppendingRoot.statistics.requestsServed == 0)
        #expect(!fixture.mitmAppendingIntermediate.statistics.forwardedApplicationData)
        #expect(fixture.mitmAppendingIntermediate.statistics.upstreamHandshakesCompleted == 0)
    }
}
