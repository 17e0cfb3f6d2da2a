// Shared by every fuzz target: "touch" helpers that read every public field of the parsed
// models, so lazily decoded parts (RDN text, RFC 4514 escaping, arcs, hex, fingerprints)
// run on fuzzer-made data too, and a few cheap invariants (round trips) that must hold for
// anything the parser accepted. An invariant failure is a crash on purpose: libFuzzer
// saves the input and run.sh reports it.
//
// Compiled into each target executable (not a library): see Fuzz/run.sh.

import CertificateParsing
#if canImport(Glibc)
import Glibc
#endif

/// FUZZ_VERBOSE=1 prints what each input led to (for checking seeds: `run.sh repro T FILE`).
let fuzzVerbose = getenv("FUZZ_VERBOSE") != nil

/// FUZZ_STRICT=1 turns on checks of documented design choices (see the certificate target).
let fuzzStrict = getenv("FUZZ_STRICT") != nil

func verbose(_ message: @autoclosure () -> String) {
    if fuzzVerbose { print("fuzz: \(message())") }
}

/// Sink for computed values, so the optimiser cannot drop the work.
nonisolated(unsafe) var fuzzChecksum: Int = 0

@inline(never)
func sink(_ text: String) { fuzzChecksum &+= text.utf8.count }

@inline(never)
func sink(_ value: Int) { fuzzChecksum &+= value }

@inline(never)
func sink(_ value: Bool) { fuzzChecksum &+= value ? 1 : 0 }

@inline(never)
func sink<C: Collection>(bytes: C) where C.Element == UInt8 { fuzzChecksum &+= bytes.count &+ Int(bytes.first ?? 0) }

/// Aborts with a message libFuzzer will show above the stack; used for broken invariants.
/// An invariant with an `id` can be silenced while its bug is open, so fuzzing can go on
/// looking for other bugs: FUZZ_IGNORE=id1,id2 (see Fuzz/README.md; never in CI).
func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, id: String? = nil) {
    if let id, ignoredInvariants.contains(id) { return }
    if !condition() { fatalError("fuzz invariant violated\(id.map { " [\($0)]" } ?? ""): \(message())") }
}

let ignoredInvariants: Set<String> = Set(
    (getenv("FUZZ_IGNORE").map { String(cString: $0) } ?? "").split(separator: ",").map(String.init))

/// The input as an owned array.
func fuzzBytes(_ data: UnsafePointer<UInt8>, _ size: Int) -> [UInt8] {
    Array(UnsafeBufferPointer(start: data, count: size))
}

// MARK: - DER trees

/// Walks a DER tree and runs every public primitive decoder on every leaf; errors are
/// expected, crashes are not.
///
/// - `validated`: the node came from `DER.parse`, which checked the whole tree, so reading
///   it again must not fail. Nodes the X.509 model keeps opaque (algorithm parameters,
///   otherName values, x400Address, policy qualifiers) were never walked by the parser, so
///   for them errors are fine.
/// - The harness's own recursion is capped; the library's depth cap is checked separately.
func touch(_ node: ASN1Node, depth: Int = 0, validated: Bool = false) {
    sink(node.identifier.description)
    sink(node.offset)
    sink(bytes: node.content)
    invariant(node.encodedBytes.endIndex == node.content.endIndex, "content must end where the element ends")
    if node.isConstructed {
        if validated {
            invariant(depth <= DER.maximumDepth, "DER.parse accepted nesting deeper than DER.maximumDepth (\(depth))")
        }
        guard depth < 64 else { return }
        var children = node.children()
        var count = 0
        while true {
            _ = children.peekIdentifier()
            let next: ASN1Node?
            do { next = try children.next() } catch {
                // DER.parse validated the whole tree: iterating it again must not fail.
                invariant(!validated, "re-reading a tree DER.parse accepted failed: \(error)")
                return
            }
            guard let child = next else { break }
            count += 1
            touch(child, depth: depth + 1, validated: validated)
        }
        sink(count)
        // Structured decoders on constructed nodes as well (they must reject, not crash).
        if let string = try? ASN1String(node, "fuzz") { sink(string.value) }
        return
    }
    if let value = try? node.boolean("fuzz") { sink(value) }
    if let value = try? node.integerBytes("fuzz") { sink(bytes: value) }
    if let value = try? node.integer("fuzz", in: Int.min...Int.max) { sink(value) }
    if let value = try? node.integer("fuzz", identifier: node.identifier) { sink(value) }
    _ = try? node.null("fuzz")
    if let value = try? node.octetString("fuzz", identifier: node.identifier) { sink(bytes: value) }
    if let bits = try? node.bitString("fuzz", identifier: node.identifier) { touch(bits) }
    if let oid = try? node.objectIdentifier("fuzz") { touch(oid) }
    if let time = try? node.time("fuzz") { touch(time) }
    if let string = try? ASN1String(node, "fuzz") {
        sink(string.value)
        sink(string.kind.rawValue)
        sink(bytes: string.rawBytes)
    }
}

func touch(_ bits: ASN1BitString) {
    sink(bits.bitCount)
    for n in -1...(min(bits.bitCount, 64) + 1) { sink(bits.bit(n)) }
}

func touch(_ oid: ASN1ObjectIdentifier) {
    let dotted = oid.dotted
    sink(dotted)
    sink(oid.arcs.count)
    // A validated OID prints as dotted text that parses back to the same content octets,
    // unless an arc is too large for the text parser (first arc 2 with a second arc > 2^64-80).
    if let again = ASN1ObjectIdentifier(dotted) {
        invariant(again == oid, "OID \(dotted) does not round-trip through its dotted form")
    }
}

func touch(_ time: ASN1Time) {
    sink(time.rfc3339)
    sink(Int(truncatingIfNeeded: time.secondsSince1970))
    let again = ASN1Time(secondsSince1970: time.secondsSince1970)
    invariant(again == time, "ASN1Time \(time.rfc3339) does not round-trip through secondsSince1970")
    if let parsed = ASN1Time(rfc3339: time.rfc3339) {
        invariant(parsed == time, "ASN1Time \(time.rfc3339) does not round-trip through RFC 3339")
    }
}

// MARK: - X.509 model

func touch(_ name: DistinguishedName) {
    sink(name.isEmpty)
    sink(bytes: name.derBytes)
    let rdns = name.rdns
    sink(rdns.count)
    // The parser accepted the Name, so decoding its RDNs must not fail: `rdns` answers [] on
    // failure, and an empty RDN list for a non-empty name hides the name from RFC 4514 text,
    // directoryName name constraints and emailAddress checks.
    invariant(rdns.isEmpty == name.isEmpty, "DistinguishedName.rdns lost the RDNs of a non-empty name (\(name.derBytes.count) bytes)",
              id: "rdns-lost")
    for rdn in rdns {
        for attribute in rdn.attributes {
            touch(attribute.type)
            sink(attribute.stringValue)
            sink(attribute.rfc4514)
            sink(attribute.description)
            if let value = attribute.value { sink(value.value) }
            sink(bytes: attribute.valueNode.encodedBytes)
            if let short = AttributeTypeAndValue.shortName(attribute.type) { sink(short) }
        }
    }
    sink(name.attributes.count)
    sink(name.commonName ?? "")
    sink(name.values(of: AttributeTypeAndValue.commonName).count)
    sink(name.rfc4514)
    sink(name.description)
    // RFC 5280 §7.1 comparison: a name matches itself, lies within itself, and matching names
    // hash alike (the trust store's index depends on it).
    invariant(name.matches(name) && name.isWithin(name), "a name does not match itself (RFC 5280 7.1)")
    sink(name.comparisonHash)
    // The Name's bytes were validated as part of a larger structure; standalone they parse too.
    do {
        let again = try DistinguishedName(derEncoded: Array(name.derBytes))
        invariant(again == name, "Name bytes re-parse to a different name")
        invariant(again.rfc4514 == name.rfc4514, "Name re-parse changes its RFC 4514 text")
    } catch {
        invariant(false, "a Name accepted inside a structure is rejected standalone: \(error)")
    }
}

func touch(_ general: GeneralName) {
    sink(general.description)
    switch general {
    case .otherName(let type, let value):
        touch(type)
        touch(value)
    case .rfc822Name(let s), .dnsName(let s), .uri(let s):
        sink(s)
    case .x400Address(let node), .ediPartyName(let node):
        touch(node)
    case .directoryName(let name):
        touch(name)
    case .ipAddress(let bytes):
        let text = IPAddressText.format(bytes)
        sink(text)
        if bytes.count == 4 || bytes.count == 16 {
            // Formatted 4- and 16-byte addresses parse back to the same bytes.
            invariant(IPAddressText.parse(text).map { $0[...] == bytes } ?? false, "IP \(text) does not round-trip")
        }
    case .registeredID(let oid):
        touch(oid)
    }
}

func touch(_ algorithm: AlgorithmIdentifier) {
    touch(algorithm.algorithm)
    sink(algorithm.hasNullParameters)
    sink(algorithm.description)
    sink(bytes: algorithm.derBytes)
    if let parameters = algorithm.parameters { touch(parameters) }
    let signature = SignatureAlgorithm(algorithm)
    sink(signature.description)
    sink(signature.digest?.rawValue ?? "")
    if let digest = signature.digest { sink(digest.outputSize) }
}

func touch(_ spki: SubjectPublicKeyInfo) {
    touch(spki.algorithm)
    touch(spki.subjectPublicKey)
    sink(bytes: spki.derBytes)
    sink(spki.key.algorithmName)
    sink(spki.key.bitSize)
    switch spki.key {
    case .rsa(let modulus, let exponent):
        sink(bytes: modulus)
        sink(bytes: exponent)
    case .ec(let curve, let point):
        sink(curve.rawValue)
        sink(curve.bits)
        sink(curve.coordinateSize)
        sink(bytes: point)
    case .ed25519(let key), .ed448(let key):
        sink(bytes: key)
    case .unsupported(let algorithm, let key):
        touch(algorithm)
        touch(key)
    }
    do {
        let again = try SubjectPublicKeyInfo(derEncoded: Array(spki.derBytes))
        invariant(again == spki, "SPKI bytes re-parse to a different key")
    } catch {
        invariant(false, "an SPKI accepted inside a certificate is rejected standalone: \(error)")
    }
}

func touch(_ extensions: Extensions) {
    for ext in extensions.all {
        touch(ext.oid)
        sink(ext.critical)
        sink(bytes: ext.value)
        sink(bytes: ext.derBytes)
        sink(extensions.isCritical(ext.oid))
        invariant(extensions[ext.oid] != nil, "extension lookup by its own OID fails")
    }
    sink(extensions.unknownCritical.count)
    if let bc = extensions.basicConstraints {
        sink(bc.isCertificateAuthority)
        sink(bc.pathLengthConstraint ?? -1)
    }
    if let ku = extensions.keyUsage {
        sink(ku.description)
        for name in ku.setNames { invariant(ku.contains(named: name), "keyUsage set name \(name) not contained") }
        sink(ku.digitalSignature || ku.nonRepudiation || ku.keyEncipherment || ku.dataEncipherment || ku.keyAgreement
            || ku.keyCertSign || ku.cRLSign || ku.encipherOnly || ku.decipherOnly)
        touch(ku.bits)
    }
    if let eku = extensions.extendedKeyUsage {
        for usage in eku.usages {
            sink(ExtendedKeyUsage.name(of: usage))
            invariant(eku.contains(usage), "EKU does not contain its own usage")
        }
    }
    for name in extensions.subjectAlternativeNames ?? [] { touch(name) }
    for name in extensions.issuerAlternativeNames ?? [] { touch(name) }
    if let nc = extensions.nameConstraints {
        for name in nc.permittedSubtrees { touch(name) }
        for name in nc.excludedSubtrees { touch(name) }
    }
    if let aki = extensions.authorityKeyIdentifier {
        sink(bytes: aki.keyIdentifier ?? [])
        for name in aki.authorityCertIssuer ?? [] { touch(name) }
        sink(bytes: aki.authorityCertSerialNumber ?? [])
    }
    sink(bytes: extensions.subjectKeyIdentifier ?? [])
    for policy in extensions.certificatePolicies ?? [] {
        touch(policy.policyIdentifier)
        for qualifier in policy.qualifiers {
            touch(qualifier.qualifierID)
            touch(qualifier.qualifier)
            sink(qualifier.cpsURI ?? "")
        }
    }
    for mapping in extensions.policyMappings ?? [] {
        touch(mapping.issuerDomainPolicy)
        touch(mapping.subjectDomainPolicy)
    }
    if let pc = extensions.policyConstraints {
        sink(pc.requireExplicitPolicy ?? -1)
        sink(pc.inhibitPolicyMapping ?? -1)
    }
    sink(extensions.inhibitAnyPolicy ?? -1)
    for access in extensions.authorityInformationAccess ?? [] {
        touch(access.accessMethod)
        touch(access.accessLocation)
    }
    for point in extensions.crlDistributionPoints ?? [] {
        touch(point)
    }
    sink(bytes: extensions.signedCertificateTimestamps ?? [])
}

func touch(_ serial: SerialNumber) {
    sink(serial.isNegative)
    sink(serial.isZero)
    sink(serial.isOverlong)
    sink(serial.hex)
    sink(serial.description)
}

/// Reads every field of an accepted certificate and checks the round trips.
func touch(_ certificate: Certificate) {
    sink(certificate.version.rawValue)
    touch(certificate.serialNumber)
    sink(certificate.signatureAlgorithm.description)
    touch(certificate.signatureAlgorithmIdentifier)
    sink(bytes: certificate.signature)
    sink(bytes: certificate.tbsBytes)
    touch(certificate.issuer)
    touch(certificate.subject)
    touch(certificate.notBefore)
    touch(certificate.notAfter)
    touch(certificate.subjectPublicKeyInfo)
    if let uid = certificate.issuerUniqueID { touch(uid) }
    if let uid = certificate.subjectUniqueID { touch(uid) }
    touch(certificate.extensions)
    for name in certificate.subjectAlternativeNames { touch(name) }
    sink(certificate.isSelfIssued)
    sink(certificate.isCertificateAuthority)
    sink(certificate.description)
    sink(bytes: certificate.sha256Fingerprint)
    sink(bytes: certificate.sha1Fingerprint)
    sink(bytes: certificate.spkiSHA256)
    sink(certificate.spkiSHA256Base64)
    var set = Set<Certificate>()
    set.insert(certificate)
    invariant(set.contains(certificate), "certificate hashing is inconsistent with equality")
    // PEM round trip: the PEM form loads back to the same certificate.
    do {
        let again = try Certificate(pemEncoded: certificate.pemString)
        invariant(again == certificate, "PEM round trip changes the certificate")
    } catch {
        invariant(false, "an accepted certificate's own PEM does not load: \(error)")
    }
}

func touch(_ point: DistributionPoint) {
    if let name = point.name { touch(name, relativeTo: nil) }
    sink(point.reasons?.description ?? "")
    for name in point.crlIssuer ?? [] { touch(name) }
}

func touch(_ name: DistributionPointName, relativeTo issuer: DistinguishedName?) {
    switch name {
    case .fullName(let names): for general in names { touch(general) }
    case .nameRelativeToCRLIssuer(let rdn):
        for attribute in rdn.attributes { sink(attribute.rfc4514) }
        invariant(rdn.matches(rdn), "an RDN does not match itself")
        if let issuer {
            for general in name.names(relativeTo: issuer) { touch(general) }
        }
    }
}

func touch(_ crl: CertificateRevocationList) {
    sink(bytes: crl.derBytes)
    sink(bytes: crl.tbsBytes)
    sink(crl.signatureAlgorithm.description)
    sink(bytes: crl.signature)
    touch(crl.issuer)
    touch(crl.thisUpdate)
    if let next = crl.nextUpdate { touch(next) }
    for entry in crl.entries {
        touch(entry.serialNumber)
        touch(entry.revocationDate)
        sink(entry.reason?.description ?? "")
        if let date = entry.invalidityDate { touch(date) }
        for name in entry.certificateIssuer ?? [] { touch(name) }
        if let hold = entry.holdInstruction { touch(hold) }
        sink(entry.unknownCriticalExtensions.count)
        invariant(crl.isRevoked(entry.serialNumber), "a listed serial is not reported as revoked")
    }
    sink(crl.number?.description ?? "")
    sink(crl.deltaBase?.description ?? "")
    sink(crl.numberIsCritical)
    if let idp = crl.issuingDistributionPoint {
        if let point = idp.distributionPoint { touch(point, relativeTo: crl.issuer) }
        sink(idp.onlyContainsUserCerts)
        sink(idp.onlyContainsCACerts)
        sink(idp.onlySomeReasons?.description ?? "")
        sink(idp.indirectCRL)
        sink(idp.onlyContainsAttributeCerts)
    }
    for point in crl.freshestCRL ?? [] { touch(point) }
    sink(crl.unknownCriticalExtensions.count)
    invariant(crl.issuer.matches(crl.issuer), "a name does not match itself")
    for ext in crl.extensions {
        touch(ext.oid)
        sink(ext.critical)
        sink(bytes: ext.value)
    }
    var set = Set<CertificateRevocationList>()
    set.insert(crl)
    invariant(set.contains(crl), "CRL hashing is inconsistent with equality")
}
