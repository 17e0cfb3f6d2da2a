/// Object identifiers used by the X.509 model (RFC 5280, RFC 3279, RFC 4055, RFC 5480, RFC 8410).
public enum OID {
    // Signature algorithms.
    public static let md5WithRSAEncryption: ASN1ObjectIdentifier = "1.2.840.113549.1.1.4"
    public static let sha1WithRSAEncryption: ASN1ObjectIdentifier = "1.2.840.113549.1.1.5"
    public static let sha224WithRSAEncryption: ASN1ObjectIdentifier = "1.2.840.113549.1.1.14"
    public static let sha256WithRSAEncryption: ASN1ObjectIdentifier = "1.2.840.113549.1.1.11"
    public static let sha384WithRSAEncryption: ASN1ObjectIdentifier = "1.2.840.113549.1.1.12"
    public static let sha512WithRSAEncryption: ASN1ObjectIdentifier = "1.2.840.113549.1.1.13"
    public static let rsassaPSS: ASN1ObjectIdentifier = "1.2.840.113549.1.1.10"
    public static let mgf1: ASN1ObjectIdentifier = "1.2.840.113549.1.1.8"
    public static let ecdsaWithSHA1: ASN1ObjectIdentifier = "1.2.840.10045.4.1"
    public static let ecdsaWithSHA224: ASN1ObjectIdentifier = "1.2.840.10045.4.3.1"
    public static let ecdsaWithSHA256: ASN1ObjectIdentifier = "1.2.840.10045.4.3.2"
    public static let ecdsaWithSHA384: ASN1ObjectIdentifier = "1.2.840.10045.4.3.3"
    public static let ecdsaWithSHA512: ASN1ObjectIdentifier = "1.2.840.10045.4.3.4"
    public static let ed25519: ASN1ObjectIdentifier = "1.3.101.112"
    public static let ed448: ASN1ObjectIdentifier = "1.3.101.113"

    // Digests.
    public static let md5: ASN1ObjectIdentifier = "1.2.840.113549.2.5"
    public static let sha1: ASN1ObjectIdentifier = "1.3.14.3.2.26"
    public static let sha224: ASN1ObjectIdentifier = "2.16.840.1.101.3.4.2.4"
    public static let sha256: ASN1ObjectIdentifier = "2.16.840.1.101.3.4.2.1"
    public static let sha384: ASN1ObjectIdentifier = "2.16.840.1.101.3.4.2.2"
    public static let sha512: ASN1ObjectIdentifier = "2.16.840.1.101.3.4.2.3"

    // Public key algorithms and curves.
    public static let rsaEncryption: ASN1ObjectIdentifier = "1.2.840.113549.1.1.1"
    public static let ecPublicKey: ASN1ObjectIdentifier = "1.2.840.10045.2.1"
    public static let dsa: ASN1ObjectIdentifier = "1.2.840.10040.4.1"
    public static let secp256r1: ASN1ObjectIdentifier = "1.2.840.10045.3.1.7"
    public static let secp384r1: ASN1ObjectIdentifier = "1.3.132.0.34"
    public static let secp521r1: ASN1ObjectIdentifier = "1.3.132.0.35"

    // Extensions (RFC 5280 §4.2).
    public static let subjectKeyIdentifier: ASN1ObjectIdentifier = "2.5.29.14"
    public static let keyUsage: ASN1ObjectIdentifier = "2.5.29.15"
    public static let subjectAltName: ASN1ObjectIdentifier = "2.5.29.17"
    public static let issuerAltName: ASN1ObjectIdentifier = "2.5.29.18"
    public static let basicConstraints: ASN1ObjectIdentifier = "2.5.29.19"
    public static let nameConstraints: ASN1ObjectIdentifier = "2.5.29.30"
    public static let crlDistributionPoints: ASN1ObjectIdentifier = "2.5.29.31"
    public static let certificatePolicies: ASN1ObjectIdentifier = "2.5.29.32"
    public static let policyMappings: ASN1ObjectIdentifier = "2.5.29.33"
    public static let authorityKeyIdentifier: ASN1ObjectIdentifier = "2.5.29.35"
    public static let policyConstraints: ASN1ObjectIdentifier = "2.5.29.36"
    public static let extendedKeyUsage: ASN1ObjectIdentifier = "2.5.29.37"
    public static let inhibitAnyPolicy: ASN1ObjectIdentifier = "2.5.29.54"
    public static let authorityInfoAccess: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.1.1"
    public static let signedCertificateTimestampList: ASN1ObjectIdentifier = "1.3.6.1.4.1.11129.2.4.2"
    public static let freshestCRL: ASN1ObjectIdentifier = "2.5.29.46"

    // CRL and CRL entry extensions (RFC 5280 §5.2, §5.3).
    public static let crlNumber: ASN1ObjectIdentifier = "2.5.29.20"
    public static let reasonCode: ASN1ObjectIdentifier = "2.5.29.21"
    public static let holdInstructionCode: ASN1ObjectIdentifier = "2.5.29.23"
    public static let invalidityDate: ASN1ObjectIdentifier = "2.5.29.24"
    public static let deltaCRLIndicator: ASN1ObjectIdentifier = "2.5.29.27"
    public static let issuingDistributionPoint: ASN1ObjectIdentifier = "2.5.29.28"
    public static let certificateIssuer: ASN1ObjectIdentifier = "2.5.29.29"
    public static let anyPolicy: ASN1ObjectIdentifier = "2.5.29.32.0"

    // Extended key usages (RFC 5280 §4.2.1.12).
    public static let anyExtendedKeyUsage: ASN1ObjectIdentifier = "2.5.29.37.0"
    public static let serverAuth: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.3.1"
    public static let clientAuth: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.3.2"
    public static let codeSigning: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.3.3"
    public static let emailProtection: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.3.4"
    public static let timeStamping: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.3.8"
    public static let ocspSigning: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.3.9"

    // Access methods (RFC 5280 §4.2.2.1).
    public static let ocsp: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.48.1"
    public static let caIssuers: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.48.2"

    // Policy qualifiers.
    public static let cpsQualifier: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.2.1"
    public static let userNoticeQualifier: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.2.2"
}
