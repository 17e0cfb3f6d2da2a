/// The ASN.1 string type used to encode an attribute value or other text.
public enum LabStringType: Sendable, Hashable, CaseIterable {
    /// UTF8String (the RFC 5280 default for most DirectoryString attributes).
    case utf8
    /// PrintableString (required for countryName, serialNumber, dnQualifier).
    case printable
    /// IA5String (emailAddress, domainComponent, URIs).
    case ia5
    /// BMPString (UTF-16BE), seen in legacy certificates.
    case bmp
    /// TeletexString / T61String; the text's UTF-8 bytes are stored verbatim.
    case teletex
    /// UniversalString (UTF-32BE).
    case universal
    /// VisibleString.
    case visible
    /// NumericString.
    case numeric
}
