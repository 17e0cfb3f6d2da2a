import CertificateParsing

/// RFC 5280 §4.2.1.10 name constraints, applied to the names of every certificate below the
/// constraining CA: the leaf's SANs and subject, and the SANs and subjects of intermediates
/// that are not self-issued (self-issued intermediates are exempt, §6.1.3 (b)).
///
/// Each comparison spends one unit of a budget, so a crafted chain with many names and many
/// constraints cannot make validation quadratic without bound (pyca and Go use 2^20).
struct NameConstraintChecker {
    /// One certificate's names; prepared for comparison only when a constraint needs them
    /// (most paths have no name constraints at all).
    struct Names {
        let sans: [GeneralName]
        let subject: DistinguishedName?

        var prepared: [PreparedName] {
            var names = sans.map(PreparedName.init)
            // RFC 5280 §4.2.1.10: directoryName constraints apply to the subject field too, and
            // when there is no subjectAltName, rfc822Name constraints apply to any
            // emailAddress attribute of the subject (the legacy place for email addresses).
            if let subject, !subject.isEmpty {
                names.append(PreparedName(.directoryName(subject)))
                if sans.isEmpty {
                    for email in subject.values(of: NameConstraintChecker.emailAddress) {
                        names.append(PreparedName(.rfc822Name(email)))
                    }
                }
            }
            return names
        }
    }

    /// PKCS #9 emailAddress (1.2.840.113549.1.9.1).
    static let emailAddress: ASN1ObjectIdentifier = "1.2.840.113549.1.9.1"

    enum Kind {
        case permitted
        case excluded
    }

    /// A name from a certificate, validated once.
    enum PreparedName: CustomStringConvertible {
        case dns(DNSPattern?, raw: String)
        case ip(IPAddress?, count: Int)
        case email(RFC822Name?, raw: String)
        case directory(DistinguishedName)
        case uri(DNSName?, raw: String)
        case other(GeneralName)

        init(_ name: GeneralName) {
            switch name {
            case .dnsName(let s): self = .dns(DNSPattern(s), raw: s)
            case .ipAddress(let bytes): self = .ip(IPAddress(bytes: bytes), count: bytes.count)
            case .rfc822Name(let s): self = .email(RFC822Name(s), raw: s)
            case .directoryName(let n): self = .directory(n)
            case .uri(let s): self = .uri(URIHost.host(of: s).flatMap { DNSName($0) }, raw: s)
            default: self = .other(name)
            }
        }

        var description: String {
            switch self {
            case .dns(_, let raw): return "DNS:\(DisplayText.escaped(raw))"
            case .ip(let address, _): return "IP:\(address.map(\.description) ?? "(malformed)")"
            case .email(_, let raw): return "email:\(DisplayText.escaped(raw))"
            case .directory(let name): return "DirName:\(name.rfc4514)"
            case .uri(_, let raw): return "URI:\(DisplayText.escaped(raw))"
            case .other(let name): return name.description
            }
        }
    }

    /// A constraint subtree, validated once.
    enum PreparedConstraint: CustomStringConvertible {
        case dns(DNSName?, raw: String)
        case ip(IPConstraint?)
        case email(RFC822Constraint?, raw: String)
        case directory(DistinguishedName)
        case uri(host: DNSName?, subdomainsOnly: Bool, raw: String)
        case unsupported(GeneralName)

        init(_ name: GeneralName) {
            switch name {
            case .dnsName(let s):
                // RFC 5280 §4.2.1.10 defines no leading-period form for dNSName constraints (that
                // form belongs to URIs and email): ".example.com" is malformed and fails closed
                // (limbo rfc5280::nc::invalid-dnsname-leading-period). An empty constraint
                // covers every name.
                self = .dns(s.isEmpty ? nil : DNSName(s), raw: s)
            case .ipAddress(let bytes): self = .ip(IPConstraint(bytes))
            case .rfc822Name(let s): self = .email(RFC822Constraint(s), raw: s)
            case .directoryName(let n): self = .directory(n)
            case .uri(let s):
                let subdomains = s.hasPrefix(".")
                self = .uri(host: DNSName(subdomains ? String(s.dropFirst()) : s), subdomainsOnly: subdomains, raw: s)
            default: self = .unsupported(name)
            }
        }

        var description: String {
            switch self {
            case .dns(_, let raw): return "DNS:\(DisplayText.escaped(raw))"
            case .ip(let c): return "IP:\(c.map { IPAddressText.format(($0.address + $0.mask)[...]) } ?? "(malformed)")"
            case .email(_, let raw): return "email:\(DisplayText.escaped(raw))"
            case .directory(let name): return "DirName:\(name.rfc4514)"
            case .uri(_, _, let raw): return "URI:\(DisplayText.escaped(raw))"
            case .unsupported(let name): return name.description
            }
        }
    }

    /// A CA's constraints, prepared.
    struct Prepared {
        let permitted: [PreparedConstraint]
        let excluded: [PreparedConstraint]

        init(_ constraints: NameConstraints) {
            permitted = constraints.permittedSubtrees.map(PreparedConstraint.init)
            excluded = constraints.excludedSubtrees.map(PreparedConstraint.init)
        }
    }

    /// Checks `names` (every certificate below the CA) against `constraints`.
    static func check(_ constraints: Prepared, names: ArraySlice<Names>, budget: inout Budget) -> ValidationFailure? {
        // The worst case is every name against every subtree. When even that bound exceeds
        // the remaining budget, stop before doing the work: a chain this large is a
        // denial-of-service shape (limbo pathological::nc-dos-*), not a real PKI.
        let prepared = names.map(\.prepared)
        let nameCount = prepared.reduce(0) { $0 + $1.count }
        let (worst, overflow) = nameCount.multipliedReportingOverflow(by: constraints.permitted.count + constraints.excluded.count)
        if overflow || worst > budget.nameConstraintChecks { return Budget.exhaustedFailure }
        for certificateNames in prepared {
            for name in certificateNames {
                if let failure = checkOne(name, constraints, budget: &budget) { return failure }
            }
        }
        return nil
    }

    static func checkOne(_ name: PreparedName, _ constraints: Prepared, budget: inout Budget) -> ValidationFailure? {
        // Permitted: if any permitted subtree has this name's type, one of them must match.
        var sawSameType = false
        var permitted = false
        for subtree in constraints.permitted {
            guard budget.spendNameConstraintCheck() else { return Budget.exhaustedFailure }
            switch compare(subtree, name, .permitted) {
            case .differentType: continue
            case .match:
                sawSameType = true
                permitted = true
            case .noMatch: sawSameType = true
            case .failure(let reason): return ValidationFailure(.nameConstraintViolation, reason)
            }
            if permitted { break }
        }
        if sawSameType && !permitted {
            return ValidationFailure(.nameConstraintViolation, "\(name) is not in any permitted subtree")
        }
        for subtree in constraints.excluded {
            guard budget.spendNameConstraintCheck() else { return Budget.exhaustedFailure }
            switch compare(subtree, name, .excluded) {
            case .match: return ValidationFailure(.nameConstraintViolation, "\(name) is in excluded subtree \(subtree)")
            case .failure(let reason): return ValidationFailure(.nameConstraintViolation, reason)
            case .differentType, .noMatch: continue
            }
        }
        return nil
    }

    enum Comparison {
        case differentType
        case match
        case noMatch
        case failure(String)
    }

    static func compare(_ constraint: PreparedConstraint, _ name: PreparedName, _ kind: Kind) -> Comparison {
        switch (constraint, name) {
        case (.dns(let domain, let raw), .dns(let pattern, let nameRaw)):
            guard let domain else {
                return raw.isEmpty ? .match : .failure("malformed dNSName constraint \"\(DisplayText.escaped(raw))\"")
            }
            switch pattern {
            case .exact(let host)?:
                return host.isWithin(domain) ? .match : .noMatch
            case .wildcard(let base)?:
                // A wildcard SAN stands for a set of names: to be permitted the whole set must
                // lie inside the subtree; to be excluded it is enough that the sets overlap
                // (limbo cve::cve-2025-61727, rfc5280::nc::nc-forbids-dnsname-wildcard-san).
                switch kind {
                case .permitted: return base.isWithin(domain) ? .match : .noMatch
                case .excluded:
                    if base.isWithin(domain) { return .match }
                    if let parent = domain.parent, parent == base { return .match }
                    return .noMatch
                }
            case nil:
                return .failure("SAN dNSName \"\(DisplayText.escaped(nameRaw))\" is malformed, so name constraints cannot be checked")
            }
        case (.ip(let range), .ip(let address, let count)):
            guard let range else { return .failure("malformed iPAddress constraint") }
            guard let address else { return .failure("SAN iPAddress has \(count) bytes, so name constraints cannot be checked") }
            return range.contains(address) ? .match : .noMatch
        case (.email(let constraintValue, let raw), .email(let email, let nameRaw)):
            guard let constraintValue else { return .failure("malformed rfc822Name constraint \"\(DisplayText.escaped(raw))\"") }
            guard let email else { return .failure("SAN rfc822Name \"\(DisplayText.escaped(nameRaw))\" cannot be checked against name constraints") }
            return constraintValue.matches(email) ? .match : .noMatch
        case (.directory(let c), .directory(let n)):
            // RFC 5280 §4.2.1.10: the name is within the subtree when its RDN sequence starts
            // with the constraint's RDNs, each compared as §7.1 compares RDNs (case folding,
            // insignificant spaces, any string type), so a constraint cannot be dodged by
            // re-casing or re-encoding a name, nor a permitted name refused for it.
            return n.isWithin(c) ? .match : .noMatch
        case (.uri(let host, let subdomainsOnly, let raw), .uri(let nameHost, let nameRaw)):
            // RFC 5280 §4.2.1.10: a URI constraint names a host (exact) or, with a leading
            // period, every host below a domain; it is matched against the URI's host part.
            guard let host else { return .failure("malformed URI constraint \"\(DisplayText.escaped(raw))\"") }
            guard let nameHost else { return .failure("SAN URI \"\(DisplayText.escaped(nameRaw))\" has no host name to check against name constraints") }
            if subdomainsOnly { return nameHost.labelCount > host.labelCount && nameHost.isWithin(host) ? .match : .noMatch }
            return nameHost == host ? .match : .noMatch
        case (.unsupported(let c), .other(let n)) where sameKind(c, n):
            // No defined matching rule: fail closed rather than guess either way.
            return .failure("name constraints of type \(c) are not supported")
        default:
            return .differentType
        }
    }

    static func sameKind(_ a: GeneralName, _ b: GeneralName) -> Bool {
        switch (a, b) {
        case (.otherName, .otherName), (.x400Address, .x400Address), (.ediPartyName, .ediPartyName),
            (.registeredID, .registeredID):
            return true
        default:
            return false
        }
    }
}

/// The host part of a URI (RFC 3986 §3.2.2), without brackets.
enum URIHost {
    static func host(of uri: String) -> String? {
        guard let schemeEnd = uri.firstRange(of: "://") else { return nil }
        var rest = uri[schemeEnd.upperBound...]
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if rest.hasPrefix("[") { return nil }
        if let colon = rest.lastIndex(of: ":") { rest = rest[..<colon] }
        return rest.isEmpty ? nil : String(rest)
    }
}
