/// Which reading of AFNetworking's rules ``SecurityPolicy`` applies.
///
/// `compat` reproduces `-[AFSecurityPolicy evaluateServerTrust:forDomain:]` (AFNetworking 4.0.1,
/// AFSecurityPolicy.m:220-292 @ d9f589cc) bit for bit, quirks included. `strict` keeps AFNetworking's
/// order of checks (the six steps listed on ``SecurityPolicy``) and its meaning for every flag,
/// and fixes these quirks (the README's demo matrix shows each against live servers, in both
/// semantics):
///
/// 1. **Public-key mode with `allowInvalidCertificates` checks nothing but the key** (with or
///    without `validatesDomainName`: hostname, expiry and chain are never checked; AF's own test
///    `testThatPolicyWithDomainNameValidationAndSelfSignedCommonNameCertificateAllowsServerTrust`
///    relies on it). Strict evaluates the chain with the certificates whose keys are pinned as
///    the only anchors, so the host name (when `validatesDomainName`), the validity dates, the
///    signatures and the TLS profile are all checked — what certificate mode already does.
/// 2. **Keys are taken from an unevaluated chain** when the system evaluation was skipped
///    (step 6 runs after step 4 was waived by `allowInvalidCertificates`). Strict matches keys
///    only on the chain that validated.
/// 3. **A pin waives expiry** (a consequence of 1). Strict never lets a pin excuse an expired
///    certificate unless ``SecurityPolicy/allowsExpiredPinnedCertificates`` asks for it.
/// 4. **A nil domain disables the host check**: step 1 is skipped and
///    `SecPolicyCreateSSL(true, NULL)` checks no name, so mode `none` with
///    `allowInvalidCertificates` and `validatesDomainName` accepts everything, and public-key
///    and certificate mode with both flags lose the host check. Strict validates against the
///    trust's own ``PeerTrust/host`` and refuses
///    (``TrustEvaluationError/Kind/noHostToValidate``) when there is none.
/// 5. **`validatesDomainName = NO` drops the TLS server profile** (`SecPolicyCreateBasicX509`:
///    the serverAuth EKU is not checked, even in mode `none` without `allowInvalidCertificates`).
///    Strict uses the SSL server policy without a name, as Alamofire's `validateHost: false`
///    does, so a client-only or code-signing certificate is not accepted for a TLS server.
///
/// Not changed by strict, deliberately: the early rejection of `allowInvalidCertificates` +
/// `validatesDomainName` without pins (step 1; it fails closed, and AFNetworking issue #2914
/// explains it is intended), and mode `none` + `allowInvalidCertificates` + no domain
/// validation, which is the explicit "trust everything" configuration (see
/// ``DisabledTrustEvaluator``).
public enum PolicySemantics: String, Hashable, Sendable, CaseIterable {
    /// AFNetworking's behaviour, quirks included.
    case compat
    /// AFNetworking's behaviour with the quirks listed above fixed.
    case strict
}
