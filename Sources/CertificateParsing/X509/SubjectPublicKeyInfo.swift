/// SubjectPublicKeyInfo (RFC 5280 §4.1.2.7), with its raw DER kept for pinning.
public struct SubjectPublicKeyInfo: Hashable, Sendable {
    /// The key algorithm identifier.
    public let algorithm: AlgorithmIdentifier
    /// The subjectPublicKey BIT STRING.
    public let subjectPublicKey: ASN1BitString
    /// The decoded key.
    public let key: PublicKey
    /// The complete SubjectPublicKeyInfo DER: what SPKI pins (RFC 7469 §2.4) hash.
    public let derBytes: ArraySlice<UInt8>

    /// Parses a standalone SubjectPublicKeyInfo (e.g. a `PUBLIC KEY` PEM block).
    public init(derEncoded bytes: [UInt8]) throws(DERError) {
        self = try DERInput.with(bytes) { input throws(DERError) in
            try SubjectPublicKeyInfo(input.single(0..<bytes.count), input)
        }
    }

    init(_ raw: RawNode, _ input: DERInput) throws(DERError) {
        (algorithm, subjectPublicKey) = try input.sequence(raw, .sequence, "subjectPublicKeyInfo") { nodes throws(DERError) in
            let algorithm = try AlgorithmIdentifier(nodes.next(.sequence, "subjectPublicKeyInfo algorithm"), input, "subjectPublicKeyInfo algorithm")
            let bits = try input.bitString(nodes.next(.bitString, "subjectPublicKey"), "subjectPublicKey")
            return (algorithm, bits)
        }
        derBytes = input.slice(raw.range)
        key = try SubjectPublicKeyInfo.decodeKey(algorithm, subjectPublicKey, input, at: raw.start)
    }

    static func decodeKey(_ algorithm: AlgorithmIdentifier, _ bits: ASN1BitString, _ input: DERInput, at offset: Int) throws(DERError) -> PublicKey {
        func bad(_ why: String) -> DERError { DERError(.invalidValue, at: offset, "subjectPublicKey: \(why)") }
        switch algorithm.algorithm {
        case OID.rsaEncryption:
            // RFC 3279 §2.3.1: parameters MUST be NULL (absent tolerated, as OpenSSL and Go do).
            guard algorithm.parameters == nil || algorithm.hasNullParameters else { throw bad("RSA key parameters must be NULL") }
            guard bits.unusedBits == 0 else { throw bad("RSA key has unused bits") }
            // The bit string's slice indices are offsets into the same buffer.
            let rsa = try input.single(bits.bytes.startIndex..<bits.bytes.endIndex)
            return try input.sequence(rsa, .sequence, "RSAPublicKey") { nodes throws(DERError) in
                let modulus = input.slice(try input.integerRange(nodes.next(.integer, "RSA modulus"), "RSA modulus"))
                let exponent = input.slice(try input.integerRange(nodes.next(.integer, "RSA exponent"), "RSA exponent"))
                guard modulus.first! & 0x80 == 0, exponent.first! & 0x80 == 0 else { throw bad("RSA modulus and exponent must be positive") }
                let m = modulus.first == 0 ? modulus.dropFirst() : modulus
                let e = exponent.first == 0 ? exponent.dropFirst() : exponent
                guard !m.isEmpty, !e.isEmpty else { throw bad("RSA modulus and exponent must be positive") }
                return .rsa(modulus: m, exponent: e)
            }
        case OID.ecPublicKey:
            // RFC 5480 §2.1.1: namedCurve only (implicitCurve and specifiedCurve are forbidden).
            guard let parameters = algorithm.parameters, parameters.identifier == .objectIdentifier else {
                throw bad("EC key parameters must be a named curve")
            }
            let curveOID = try parameters.objectIdentifier("EC curve")
            guard bits.unusedBits == 0 else { throw bad("EC key has unused bits") }
            let curve: NamedCurve
            switch curveOID {
            case OID.secp256r1: curve = .p256
            case OID.secp384r1: curve = .p384
            case OID.secp521r1: curve = .p521
            default: return .unsupported(algorithm: algorithm, key: bits)
            }
            let point = bits.bytes
            let size = curve.coordinateSize
            switch point.first {
            case 0x04 where point.count == 1 + 2 * size: break
            case 0x02 where point.count == 1 + size, 0x03 where point.count == 1 + size: break
            default: throw bad("EC point has the wrong form or length for \(curve.rawValue)")
            }
            return .ec(curve: curve, point: point)
        case OID.ed25519, OID.ed448:
            // RFC 8410 §3: parameters MUST be absent.
            guard algorithm.parameters == nil else { throw bad("EdDSA key parameters must be absent") }
            let isEd25519 = algorithm.algorithm == OID.ed25519
            guard bits.unusedBits == 0, bits.bytes.count == (isEd25519 ? 32 : 57) else {
                throw bad("\(isEd25519 ? "Ed25519" : "Ed448") key has the wrong length")
            }
            return isEd25519 ? .ed25519(bits.bytes) : .ed448(bits.bytes)
        default:
            return .unsupported(algorithm: algorithm, key: bits)
        }
    }
}
