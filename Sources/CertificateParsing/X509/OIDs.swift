/// Object identifiers used by the X.509 model (RFC 5280, RFC 3279, RFC 4055, RFC 5480, RFC 8410).
public enum OID {
    // Signature algorithms.
    /// md5WithRSAEncryption (RFC 3279 §2.2.1): recognised in order to refuse it.
    public static let md5WithRSAEncryption: ASN1ObjectIdentifier = "1.2.840.113549.1.1.4"
    /// sha1WithRSAEncryption (RFC 3279 §2.2.1).
    public static let sha1WithRSAEncryption: ASN1ObjectIdentifier = "1.2.840.113549.1.1.5"
    /// sha224WithRSAEncryption (RFC 4055 §5).
    public static let sha224WithRSAEncryption: ASN1ObjectIdentifier = "1.2.840.113549.1.1.14"
    /// sha256WithRSAEncryption (RFC 4055 §5): RSA PKCS#1 v1.5 with SHA-256.
    public static let sha256WithRSAEncryption: ASN1ObjectIdentifier = "1.2.840.113549.1.1.11"
    /// sha384WithRSAEncryption (RFC 4055 §5).
    public static let sha384WithRSAEncryption: ASN1ObjectIdentifier = "1.2.840.113549.1.1.12"
    /// sha512WithRSAEncryption (RFC 4055 §5).
    public static let sha512WithRSAEncryption: ASN1ObjectIdentifier = "1.2.840.113549.1.1.13"
    /// id-RSASSA-PSS (RFC 4055 §3.1), with its parameters in ``RSAPSSParameters``.
    public static let rsassaPSS: ASN1ObjectIdentifier = "1.2.840.113549.1.1.10"
    /// id-mgf1, the mask generation function of RSASSA-PSS (RFC 4055 §2.2).
    public static let mgf1: ASN1ObjectIdentifier = "1.2.840.113549.1.1.8"
    /// ecdsa-with-SHA1 (RFC 3279 §2.2.3).
    public static let ecdsaWithSHA1: ASN1ObjectIdentifier = "1.2.840.10045.4.1"
    /// ecdsa-with-SHA224 (RFC 5758 §3.2).
    public static let ecdsaWithSHA224: ASN1ObjectIdentifier = "1.2.840.10045.4.3.1"
    /// ecdsa-with-SHA256 (RFC 5758 §3.2).
    public static let ecdsaWithSHA256: ASN1ObjectIdentifier = "1.2.840.10045.4.3.2"
    /// ecdsa-with-SHA384 (RFC 5758 §3.2).
    public static let ecdsaWithSHA384: ASN1ObjectIdentifier = "1.2.840.10045.4.3.3"
    /// ecdsa-with-SHA512 (RFC 5758 §3.2).
    public static let ecdsaWithSHA512: ASN1ObjectIdentifier = "1.2.840.10045.4.3.4"
    /// id-Ed25519 (RFC 8410 §3), both the key and the signature algorithm.
    public static let ed25519: ASN1ObjectIdentifier = "1.3.101.112"
    /// id-Ed448 (RFC 8410 §3), both the key and the signature algorithm.
    public static let ed448: ASN1ObjectIdentifier = "1.3.101.113"

    // Digests.
    /// MD5 (RFC 3279 §2.1).
    public static let md5: ASN1ObjectIdentifier = "1.2.840.113549.2.5"
    /// SHA-1 (RFC 3279 §2.1).
    public static let sha1: ASN1ObjectIdentifier = "1.3.14.3.2.26"
    /// SHA-224 (RFC 4055 §2.1).
    public static let sha224: ASN1ObjectIdentifier = "2.16.840.1.101.3.4.2.4"
    /// SHA-256 (RFC 4055 §2.1).
    public static let sha256: ASN1ObjectIdentifier = "2.16.840.1.101.3.4.2.1"
    /// SHA-384 (RFC 4055 §2.1).
    public static let sha384: ASN1ObjectIdentifier = "2.16.840.1.101.3.4.2.2"
    /// SHA-512 (RFC 4055 §2.1).
    public static let sha512: ASN1ObjectIdentifier = "2.16.840.1.101.3.4.2.3"

    // Public key algorithms and curves.
    /// rsaEncryption (RFC 3279 §2.3.1): an RSA public key.
    public static let rsaEncryption: ASN1ObjectIdentifier = "1.2.840.113549.1.1.1"
    /// id-ecPublicKey (RFC 5480 §2.1.1): an elliptic-curve public key, its curve in the parameters.
    public static let ecPublicKey: ASN1ObjectIdentifier = "1.2.840.10045.2.1"
    /// id-dsa (RFC 3279 §2.3.2): named in descriptions; DSA keys and signatures are not supported.
    public static let dsa: ASN1ObjectIdentifier = "1.2.840.10040.4.1"
    /// secp256r1, NIST P-256 (RFC 5480 §2.1.1.1).
    public static let secp256r1: ASN1ObjectIdentifier = "1.2.840.10045.3.1.7"
    /// secp384r1, NIST P-384 (RFC 5480 §2.1.1.1).
    public static let secp384r1: ASN1ObjectIdentifier = "1.3.132.0.34"
    /// secp521r1, NIST P-521 (RFC 5480 §2.1.1.1).
    public static let secp521r1: ASN1ObjectIdentifier = "1.3.132.0.35"

    // Extensions (RFC 5280 §4.2).
    /// subjectKeyIdentifier (RFC 5280 §4.2.1.2).
    public static let subjectKeyIdentifier: ASN1ObjectIdentifier = "2.5.29.14"
    /// keyUsage (RFC 5280 §4.2.1.3).
    public static let keyUsage: ASN1ObjectIdentifier = "2.5.29.15"
    /// subjectAltName (RFC 5280 §4.2.1.6).
    public static let subjectAltName: ASN1ObjectIdentifier = "2.5.29.17"
    /// issuerAltName (RFC 5280 §4.2.1.7).
    public static let issuerAltName: ASN1ObjectIdentifier = "2.5.29.18"
    /// basicConstraints (RFC 5280 §4.2.1.9).
    public static let basicConstraints: ASN1ObjectIdentifier = "2.5.29.19"
    /// nameConstraints (RFC 5280 §4.2.1.10).
    public static let nameConstraints: ASN1ObjectIdentifier = "2.5.29.30"
    /// cRLDistributionPoints (RFC 5280 §4.2.1.13).
    public static let crlDistributionPoints: ASN1ObjectIdentifier = "2.5.29.31"
    /// certificatePolicies (RFC 5280 §4.2.1.4).
    public static let certificatePolicies: ASN1ObjectIdentifier = "2.5.29.32"
    /// policyMappings (RFC 5280 §4.2.1.5).
    public static let policyMappings: ASN1ObjectIdentifier = "2.5.29.33"
    /// authorityKeyIdentifier (RFC 5280 §4.2.1.1).
    public static let authorityKeyIdentifier: ASN1ObjectIdentifier = "2.5.29.35"
    /// policyConstraints (RFC 5280 §4.2.1.11).
    public static let policyConstraints: ASN1ObjectIdentifier = "2.5.29.36"
    /// extKeyUsage (RFC 5280 §4.2.1.12).
    public static let extendedKeyUsage: ASN1ObjectIdentifier = "2.5.29.37"
    /// inhibitAnyPolicy (RFC 5280 §4.2.1.14).
    public static let inhibitAnyPolicy: ASN1ObjectIdentifier = "2.5.29.54"
    /// authorityInfoAccess (RFC 5280 §4.2.2.1).
    public static let authorityInfoAccess: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.1.1"
    /// The embedded Signed Certificate Timestamp list of Certificate Transparency (RFC 6962 §3.3).
    public static let signedCertificateTimestampList: ASN1ObjectIdentifier = "1.3.6.1.4.1.11129.2.4.2"
    /// freshestCRL, where the delta CRLs are (RFC 5280 §4.2.1.15).
    public static let freshestCRL: ASN1ObjectIdentifier = "2.5.29.46"

    // CRL and CRL entry extensions (RFC 5280 §5.2, §5.3).
    /// cRLNumber (RFC 5280 §5.2.3).
    public static let crlNumber: ASN1ObjectIdentifier = "2.5.29.20"
    /// reasonCode, a CRL entry's CRLReason (RFC 5280 §5.3.1).
    public static let reasonCode: ASN1ObjectIdentifier = "2.5.29.21"
    /// holdInstructionCode, a CRL entry extension of RFC 3280 §5.3.2 (dropped from RFC 5280,
    /// still met in CRLs).
    public static let holdInstructionCode: ASN1ObjectIdentifier = "2.5.29.23"
    /// invalidityDate, a CRL entry extension (RFC 5280 §5.3.2).
    public static let invalidityDate: ASN1ObjectIdentifier = "2.5.29.24"
    /// deltaCRLIndicator: the CRL is a delta CRL, and the base CRL number it extends (RFC 5280
    /// §5.2.4).
    public static let deltaCRLIndicator: ASN1ObjectIdentifier = "2.5.29.27"
    /// issuingDistributionPoint, a CRL's scope (RFC 5280 §5.2.5).
    public static let issuingDistributionPoint: ASN1ObjectIdentifier = "2.5.29.28"
    /// certificateIssuer, an indirect CRL entry's issuer (RFC 5280 §5.3.3).
    public static let certificateIssuer: ASN1ObjectIdentifier = "2.5.29.29"
    /// anyPolicy (RFC 5280 §4.2.1.4).
    public static let anyPolicy: ASN1ObjectIdentifier = "2.5.29.32.0"

    // Extended key usages (RFC 5280 §4.2.1.12).
    /// anyExtendedKeyUsage (RFC 5280 §4.2.1.12).
    public static let anyExtendedKeyUsage: ASN1ObjectIdentifier = "2.5.29.37.0"
    /// id-kp-serverAuth: TLS server authentication.
    public static let serverAuth: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.3.1"
    /// id-kp-clientAuth: TLS client authentication.
    public static let clientAuth: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.3.2"
    /// id-kp-codeSigning.
    public static let codeSigning: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.3.3"
    /// id-kp-emailProtection (S/MIME).
    public static let emailProtection: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.3.4"
    /// id-kp-timeStamping.
    public static let timeStamping: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.3.8"
    /// id-kp-OCSPSigning.
    public static let ocspSigning: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.3.9"

    // Access methods (RFC 5280 §4.2.2.1).
    /// id-ad-ocsp: the location of the issuer's OCSP responder.
    public static let ocsp: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.48.1"
    /// id-ad-caIssuers: where the issuer's certificate can be fetched.
    public static let caIssuers: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.48.2"

    // OCSP (RFC 6960 §4.2.1, §4.2.2.2.1, §4.4).
    /// id-pkix-ocsp-basic, the only responseType clients must support (RFC 6960 §4.2.1).
    public static let ocspBasic: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.48.1.1"
    /// id-pkix-ocsp-nonce, a response extension echoing the request's nonce (RFC 6960 §4.4.1).
    public static let ocspNonce: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.48.1.2"
    /// id-pkix-ocsp-crl, the CRL Reference single extension (RFC 6960 §4.4.2).
    public static let ocspCRLReference: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.48.1.3"
    /// id-pkix-ocsp-nocheck, in a delegated responder's certificate: clients need not check
    /// its revocation status (RFC 6960 §4.2.2.2.1).
    public static let ocspNoCheck: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.48.1.5"
    /// id-pkix-ocsp-archive-cutoff, a single extension (RFC 6960 §4.4.4).
    public static let ocspArchiveCutoff: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.48.1.6"
    /// id-pkix-ocsp-extended-revoke, a response extension (RFC 6960 §4.4.8).
    public static let ocspExtendedRevoke: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.48.1.9"
    /// The SCT list Certificate Transparency delivers in an OCSP single response's
    /// singleExtensions (RFC 6962 §3.3).
    public static let ocspSignedCertificateTimestampList: ASN1ObjectIdentifier = "1.3.6.1.4.1.11129.2.4.5"

    // Policy qualifiers.
    /// id-qt-cps: a pointer to the Certification Practice Statement (RFC 5280 §4.2.1.4).
    public static let cpsQualifier: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.2.1"
    /// id-qt-unotice: a user notice (RFC 5280 §4.2.1.4).
    public static let userNoticeQualifier: ASN1ObjectIdentifier = "1.3.6.1.5.5.7.2.2"
}
