// Fuzz target "pinset": signed pin-set documents (docs/pinset-format.md) through the public API
// a client and an operator use, at a fixed clock (2030-01-01) with a fixed Ed25519 signing key
// (RFC 8032 §7.1 test 1's secret, so seeds signed by Fuzz/make-seeds.sh verify) and a P-256 one.
// Each input is tried three ways:
//   1. as a served envelope: PinSetChain.accept (size, envelope, key id, signature, payload);
//   2. as a policy: PinSetDocument.sign, which parses it with the client's rules before signing;
//      what it signs must then be accepted, and the same envelope with one payload byte changed
//      must be refused (the signature covers the exact bytes);
//   3. as a stored chain after a signed document: PinSetChain.restoring.
import CertificateParsing
import ServerTrust
import TrustEvaluation

let pinSetTime: Int64 = 1_893_456_000  // 2030-01-01T00:00:00Z
// PKCS #8 PrivateKeyInfo for Ed25519 (RFC 8410 §7) around RFC 8032 §7.1 TEST 1's secret key.
let fixedEd25519 = try? PrivateKey(
    derEncoded: [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]
        + (Hex.decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b7ec5d6b5b6d6c7f9d5a3de") ?? []))
let otherP256 = try? PrivateKey.generate(.p256)
let pinSetRules: PinSetRules? = {
    guard let fixedEd25519, let otherP256,
        let keys = try? [PinSetSigningKey(publicKeyOf: fixedEd25519), PinSetSigningKey(publicKeyOf: otherP256)]
    else { return nil }
    return try? PinSetRules(signingKeys: keys, clockSkew: 300, clock: .fixed(pinSetTime))
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPinSet(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let rules = pinSetRules, let key = fixedEd25519 else {
        invariant(false, "the fixed signing keys did not load")
        return 0
    }
    let bytes = fuzzBytes(data, size)

    // 1. A served envelope.
    var chain = PinSetChain(rules: rules)
    do throws(PinSetError) {
        let outcome = try chain.accept(bytes)
        verbose("envelope accepted: \(outcome)")
        invariant(chain.current != nil, "accepted without a current document")
        if let document = chain.current {
            sink(Int(truncatingIfNeeded: document.serial))
            sink(document.pins.hosts.count)
            invariant(document.serial > 0 && document.expiresAt > document.issuedAt, "accepted a document outside the rules")
        }
    } catch {
        verbose("envelope refused: \(error.summary)")
        sink(error.description)
        invariant(chain.current == nil, "a refused document changed the chain")
    }

    // 2. A policy to sign: what is signed verifies, and one changed payload byte does not.
    do throws(PinSetError) {
        let envelope = try PinSetDocument.sign(
            policyJSON: bytes, serial: 7, issuedAt: pinSetTime - 60, expiresAt: pinSetTime + 86_400, key: key)
        var signed = PinSetChain(rules: rules)
        do throws(PinSetError) {
            let outcome = try signed.accept(envelope)
            invariant(outcome == .accepted(serial: 7), "a signed document was not accepted as new")
        } catch {
            invariant(false, "a document the signer produced was refused: \(error.summary)")
        }
        // Flip one bit of the signed payload and re-encode: the signature must not verify.
        if let document = signed.current, !document.payload.isEmpty {
            var payload = document.payload
            let index = Int(bytes.first ?? 0) % payload.count
            payload[index] ^= 0x01
            let tampered = Array(
                #"{"keyId": "\#(document.signedBy.keyID)", "payload": "\#(Base64.encode(payload))", "signature": "\#(Base64.encode(signatureOf(envelope)))"}"#
                    .utf8)
            var fresh = PinSetChain(rules: rules)
            do throws(PinSetError) {
                try fresh.accept(tampered)
                invariant(false, "a tampered payload was accepted")
            } catch {
                invariant(error.kind == .badSignature, "a tampered payload was refused as \(error.kind), not badSignature")
            }
        }
        // 3. The signed document then the input, as a stored chain.
        let (restored, problems) = PinSetChain.restoring([envelope, bytes], rules: rules)
        invariant(restored.serial >= 7, "restoring dropped a good document")
        sink(problems.count)
    } catch {
        verbose("not signed: \(error.summary)")
        sink(error.summary)
        if error.kind == .malformed { invariant(!error.message.isEmpty, "a malformed-payload error without a message") }
    }
    return 0
}

/// The signature of an envelope this target made (the fourth quoted value).
func signatureOf(_ envelope: [UInt8]) -> [UInt8] {
    let parts = String(decoding: envelope, as: UTF8.self).split(separator: "\"")
    guard parts.count > 11 else { return [] }
    return Base64.decode(Array(parts[11].utf8)) ?? []
}
