#!/usr/bin/env bash
# Generates the fuzz seed corpora (not committed): Fuzz/make-seeds.sh [OUT=/tmp/fuzz-seeds]
#
#   OUT/der, certificate   DER of every certificate in the system bundle, plus a test PKI made
#                          here with the openssl CLI (RSA, RSA-PSS, P-256/384/521, Ed25519,
#                          Ed448; name constraints, policies, AIA, CRL DP, every SAN type)
#   OUT/crl                DER CRLs (empty, with revoked entries, v1)
#   OUT/pem                PEM files: single and chains, with `openssl x509 -text` around them,
#                          CRLF, keys, encrypted (Proc-Type) keys, TRUSTED CERTIFICATE, CRLs
#   OUT/chain              length-prefixed certificate lists for the path-building targets
#   OUT/pkcs12             PKCS #12 files (password "fuzz"; also wrong password, no MAC,
#                          no encryption, keys only, certificates only)
#   OUT/privatekey         private keys, PEM and DER, plain and encrypted (password "fuzz")
#   OUT/limbo              limbo-jsonl/1 request lines built from the first 200 test cases of
#                          ../shared/conformance/limbo-open.json.gz (non-BetterTLS cases first)
#   OUT/policy             examples/policies/*.json and variants pointing at OUT/policy-base
#   OUT/pinset             policies to sign, and envelopes signed by the fuzz target's fixed Ed25519
#                          key (RFC 8032 §7.1 TEST 1), valid at 2030-01-01, some tampered
#   OUT/wwwauth            WWW-Authenticate / Proxy-Authenticate values
#
# Needs: openssl, python3. Deterministic apart from keys and signatures (fresh each run);
# certificates are valid 2025-01-01 .. 2035-01-01, the chain targets validate at 2030-01-01.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-/tmp/fuzz-seeds}"
SHARED="$(cd "$ROOT/.." && pwd)/shared"
BUNDLE="${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"
TMP="$OUT.tmp.$$"
rm -rf "$TMP"
mkdir -p "$TMP"/{der,certificate,crl,pem,names,chain,chain-accept,pkcs12,privatekey,limbo,policy,policy-base/certs,pinset,wwwauth,work}
W="$TMP/work"
cd "$W"
O() { openssl "$@" 2>>"$W/openssl.log"; }
trap 'echo "make-seeds: failed at line $LINENO; openssl log: $W/openssl.log" >&2; tail -4 "$W/openssl.log" >&2' ERR

# ---------------------------------------------------------------- test PKI (openssl ca)
mkdir -p newcerts
: >index.txt
echo 1000 >serial
echo 01 >crlnumber
cat >ca.cnf <<'EOF'
[ ca ]
default_ca = CA_default
[ CA_default ]
dir = .
database = ./index.txt
new_certs_dir = ./newcerts
serial = ./serial
crlnumber = ./crlnumber
default_md = default
policy = policy_any
unique_subject = no
copy_extensions = none
default_crl_days = 3650
crl_extensions = crl_ext
email_in_dn = yes
preserve = yes
[ policy_any ]
countryName = optional
stateOrProvinceName = optional
localityName = optional
organizationName = optional
organizationalUnitName = optional
commonName = optional
emailAddress = optional
domainComponent = optional
serialNumber = optional
title = optional
[ crl_ext ]
authorityKeyIdentifier = keyid:always
[ v3_root ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[ v3_int ]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign, digitalSignature
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
extendedKeyUsage = serverAuth, clientAuth
authorityInfoAccess = OCSP;URI:http://ocsp.example.com/, caIssuers;URI:http://ca.example.com/root.der
crlDistributionPoints = URI:http://crl.example.com/root.crl
certificatePolicies = 2.23.140.1.2.1, @cps
[ v3_int_nc ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
nameConstraints = critical, permitted;DNS:example.com, permitted;DNS:.example.com, permitted;IP:192.0.2.0/255.255.255.0, permitted;email:example.com, permitted;dirName:nc_dir, excluded;DNS:bad.example.com, excluded;IP:2001:db8::/ffff:ffff::, excluded;URI:.evil.example
[ v3_int_policy ]
basicConstraints = critical, CA:TRUE, pathlen:3
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always, issuer:always
certificatePolicies = critical, 1.2.3.4, 2.5.29.32.0
policyMappings = 1.2.3.4:1.2.3.5
policyConstraints = requireExplicitPolicy:1, inhibitPolicyMapping:2
inhibitAnyPolicy = 1
issuerAltName = DNS:issuer.example.com, email:ca@example.com
crlDistributionPoints = crldp
[ v3_leaf ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth, clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
subjectAltName = @san
certificatePolicies = 2.23.140.1.2.1, @cps
authorityInfoAccess = OCSP;URI:http://ocsp.example.com/
[ v3_leaf_nc ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
subjectAltName = DNS:example.com, DNS:www.example.com, IP:192.0.2.1, email:admin@example.com
[ v3_leaf_min ]
subjectAltName = DNS:example.com
[ v3_leaf_odd ]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature, nonRepudiation, dataEncipherment, keyAgreement, encipherOnly, decipherOnly
extendedKeyUsage = codeSigning, emailProtection, timeStamping, OCSPSigning, 1.3.6.1.4.1.311.10.3.3, 2.5.29.37.0
subjectAltName = critical, DNS:*.example.com, DNS:xn--bcher-kva.example, IP:0.0.0.0, IP:::, IP:::ffff:192.0.2.1, URI:ldap://x/, RID:1.2.3.4, otherName:1.3.6.1.5.5.7.8.9;UTF8:u@example.com
1.2.3.4.5 = critical, DER:0500
1.3.6.1.4.1.11129.2.4.2 = ASN1:FORMAT:HEX,OCTETSTRING:0000
[ san ]
DNS.1 = example.com
DNS.2 = *.example.com
DNS.3 = www.example.com
IP.1 = 192.0.2.1
IP.2 = 2001:db8::1
email.1 = admin@example.com
URI.1 = https://example.com/
dirName.1 = san_dir
otherName.1 = 1.2.3.4;UTF8:other
[ san_dir ]
C = US
O = Example
CN = Directory Name
[ nc_dir ]
C = US
O = Example
[ cps ]
policyIdentifier = 1.3.6.1.4.1.99999.1
CPS.1 = "http://cps.example.com/"
userNotice.1 = @notice
[ notice ]
explicitText = "Explicit notice text"
organization = "Example Org"
noticeNumbers = 1, 2
[ crldp ]
fullname = URI:http://crl.example.com/a.crl
CRLissuer = dirName:nc_dir
reasons = keyCompromise, CACompromise
EOF

DATES=(-startdate 20250101000000Z -enddate 20350101000000Z)
key() { # key NAME TYPE
  case "$2" in
    rsa) O genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1.key" ;;
    rsa1024) O genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out "$1.key" ;;
    rsapss) O genpkey -algorithm RSA-PSS -pkeyopt rsa_keygen_bits:2048 -out "$1.key" ;;
    p256) O genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" ;;
    p384) O genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out "$1.key" ;;
    p521) O genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-521 -out "$1.key" ;;
    k256) O genpkey -algorithm EC -pkeyopt ec_paramgen_curve:secp256k1 -out "$1.key" ;;
    ed25519) O genpkey -algorithm ED25519 -out "$1.key" ;;
    ed448) O genpkey -algorithm ED448 -out "$1.key" ;;
  esac
}
# issue NAME SUBJECT EXT ISSUER [extra openssl ca args]: ISSUER=self for a self-signed root.
issue() {
  local name="$1" subj="$2" ext="$3" issuer="$4"
  shift 4
  O req -new -key "$name.key" -subj "$subj" -multivalue-rdn -utf8 -out "$name.csr"
  if [ "$issuer" = self ]; then
    O ca -config ca.cnf -batch -notext -selfsign -keyfile "$name.key" -in "$name.csr" -out "$name.pem" -extensions "$ext" "${DATES[@]}" "$@"
  else
    O ca -config ca.cnf -batch -notext -cert "$issuer.pem" -keyfile "$issuer.key" -in "$name.csr" -out "$name.pem" -extensions "$ext" "${DATES[@]}" "$@"
  fi
}

key root rsa;      issue root "/C=US/O=Fuzz Root/CN=Fuzz Root CA" v3_root self
key int p384;      issue int "/C=US/O=Fuzz/OU=Issuing+CN=Fuzz Intermediate" v3_int root
key intnc p256;    issue intnc "/C=US/O=Example/CN=Constrained Intermediate" v3_int_nc root
key intpol p521;   issue intpol "/DC=com/DC=example/CN=Policy Intermediate" v3_int_policy root
key intpss rsa;    issue intpss "/CN=PSS Intermediate" v3_int root -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:32 -md sha256
key leaf p256;     issue leaf "/C=US/ST=CA/L=Mountain View/O=Example, Inc./CN=example.com/emailAddress=admin@example.com" v3_leaf int
key leafrsa rsa;   issue leafrsa "/C=US/O=Example/CN=www.example.com" v3_leaf_nc intnc
key leafed ed25519; issue leafed "/CN=ed25519.example.com" v3_leaf int
key leafpol p256;  issue leafpol "/CN=policy.example.com" v3_leaf intpol
key leaf2 p256;    issue leaf2 "/CN=not-revoked.example.com" v3_leaf int
key pssroot rsapss; issue pssroot "/CN=RSA-PSS key root" v3_root self
key leaf448 ed448; issue leaf448 "/CN=ed448.example.com" v3_leaf int
key leafpss rsa;   issue leafpss "/CN=pss.example.com" v3_leaf intpss -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:32 -md sha256
key leafodd p384;  issue leafodd "/CN=odd \\, name+O=Multi  /serialNumber=1234/title=  spaced # " v3_leaf_odd intnc
key leafmin k256;  issue leafmin "/CN=secp256k1 leaf" v3_leaf_min int -md sha384
key leafsha1 rsa1024; issue leafsha1 "/CN=sha1.example.com" v3_leaf int -md sha1
key edroot ed25519; issue edroot "/CN=Ed25519 Root" v3_root self
# v1 self-signed certificate (no extensions).
O req -new -key root.key -subj "/CN=v1 certificate" -out v1.csr
O x509 -req -in v1.csr -signkey root.key -set_serial 7 -days 3650 -out v1.pem || true
# Revocation: revoke leaf and leafrsa, then CRLs from int (revoked), root (empty) and intnc.
O ca -config ca.cnf -revoke leaf.pem -cert int.pem -keyfile int.key -crl_reason keyCompromise || true
O ca -config ca.cnf -gencrl -cert int.pem -keyfile int.key -out int.crl
O ca -config ca.cnf -gencrl -cert root.pem -keyfile root.key -out root.crl
O ca -config ca.cnf -revoke leafrsa.pem -cert intnc.pem -keyfile intnc.key -crl_reason superseded || true
O ca -config ca.cnf -gencrl -cert intnc.pem -keyfile intnc.key -out intnc.crl -crlhours 1
O ca -config ca.cnf -gencrl -cert intpol.pem -keyfile intpol.key -out intpol.crl -crlexts crl_ext

PKI_CERTS=(root int intnc intpol intpss leaf leaf2 leafrsa leafed leafpol leaf448 leafpss leafodd leafmin leafsha1 edroot pssroot v1)
for c in "${PKI_CERTS[@]}"; do
  [ -s "$c.pem" ] || { echo "make-seeds: $c.pem was not made (see $W/openssl.log)" >&2; continue; }
  O x509 -in "$c.pem" -outform DER -out "$c.der"
  cp "$c.der" "$TMP/certificate/pki-$c.der"
  cp "$c.der" "$TMP/der/pki-$c.der"
  cp "$c.pem" "$TMP/pem/pki-$c.pem"
done
for c in int root intnc intpol; do
  [ -s "$c.crl" ] || continue
  O crl -in "$c.crl" -outform DER -out "$c.crl.der"
  cp "$c.crl.der" "$TMP/crl/pki-$c.crl"
  cp "$c.crl.der" "$TMP/der/crl-$c.der"
  cp "$c.crl" "$TMP/pem/crl-$c.pem"
done

# ---------------------------------------------------------------- system bundle
python3 - "$BUNDLE" "$TMP" <<'PY'
import base64, hashlib, re, sys
bundle, out = sys.argv[1], sys.argv[2]
text = open(bundle, encoding="ascii", errors="replace").read()
blocks = re.findall(r"-----BEGIN CERTIFICATE-----\s*(.*?)\s*-----END CERTIFICATE-----", text, re.S)
for i, b64 in enumerate(blocks):
    der = base64.b64decode("".join(b64.split()))
    name = "sys-%03d-%s" % (i, hashlib.sha256(der).hexdigest()[:12])
    open(f"{out}/certificate/{name}.der", "wb").write(der)
    open(f"{out}/der/{name}.der", "wb").write(der)
    if i % 20 == 0:  # a few as PEM (the whole bundle is far larger than a useful seed)
        open(f"{out}/pem/{name}.pem", "w").write("-----BEGIN CERTIFICATE-----\n" + b64.strip() + "\n-----END CERTIFICATE-----\n")
print(f"make-seeds: {len(blocks)} certificates from {bundle}", file=sys.stderr)
PY

# ---------------------------------------------------------------- PEM variants
cat leaf.pem int.pem root.pem >"$TMP/pem/chain.pem"
O x509 -in leaf.pem -text >"$TMP/pem/leaf-with-text.pem"
{ echo "Subject: explanatory text before"; cat int.pem; echo "and between"; cat root.pem; echo "after"; } >"$TMP/pem/explanatory.pem"
sed 's/$/\r/' "$TMP/pem/chain.pem" >"$TMP/pem/crlf.pem"
O x509 -in root.pem -trustout -addtrust serverAuth >"$TMP/pem/trusted-certificate.pem" || true
O pkey -in leaf.key -pubout >"$TMP/pem/public-key.pem"
O pkey -in leaf.key -pubout -outform DER >"$TMP/der/spki-leaf.der"
O pkey -in leafrsa.key -pubout -outform DER >"$TMP/der/spki-rsa.der"
O pkey -in leafed.key -pubout -outform DER >"$TMP/der/spki-ed25519.der"
O rsa -in leafrsa.key -traditional -aes128 -passout pass:fuzz >"$TMP/pem/encrypted-proc-type.pem"
cat leafed.key >"$TMP/pem/private-key.pem"
printf -- '-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n' >"$TMP/pem/tiny.pem"
printf -- '-----BEGIN X509 CERTIFICATE-----\n%s\n-----END X509 CERTIFICATE-----\n' "$(base64 -w 64 leafmin.der)" >"$TMP/pem/x509-label.pem"
cat intnc.crl int.crl >"$TMP/pem/two-crls.pem"

# ---------------------------------------------------------------- private keys
for k in root leaf leafed leaf448 leafrsa intpss leafmin; do
  cp "$k.key" "$TMP/privatekey/pkcs8-$k.pem"
  O pkey -in "$k.key" -outform DER -out "$TMP/privatekey/pkcs8-$k.der"
done
O rsa -in leafrsa.key -traditional -out "$TMP/privatekey/pkcs1-rsa.pem"
O rsa -in leafrsa.key -traditional -outform DER -out "$TMP/privatekey/pkcs1-rsa.der"
O ec -in leaf.key -out "$TMP/privatekey/sec1-p256.pem"
O ec -in leaf.key -outform DER -out "$TMP/privatekey/sec1-p256.der"
O rsa -in leafrsa.key -traditional -aes128 -passout pass:fuzz -out "$TMP/privatekey/pkcs1-encrypted.pem"
O pkcs8 -topk8 -in leaf.key -v2 aes-128-cbc -iter 1 -passout pass:fuzz -out "$TMP/privatekey/pkcs8-encrypted.pem"
O pkcs8 -topk8 -in leaf.key -v2 aes-128-cbc -iter 1 -passout pass:fuzz -outform DER -out "$TMP/privatekey/pkcs8-encrypted.der"
O pkcs8 -topk8 -in leafed.key -v2 aes-256-cbc -iter 1 -passout pass:wrong -out "$TMP/privatekey/pkcs8-wrong-password.pem"

# ---------------------------------------------------------------- PKCS #12 (password "fuzz")
P12=(-export -passout pass:fuzz)
O pkcs12 "${P12[@]}" -iter 1 -inkey leaf.key -in leaf.pem -certfile <(cat int.pem root.pem) -out "$TMP/pkcs12/leaf-chain-iter1.p12"
O pkcs12 "${P12[@]}" -inkey leafrsa.key -in leafrsa.pem -out "$TMP/pkcs12/default-iterations.p12"
O pkcs12 "${P12[@]}" -iter 1 -inkey leafed.key -in leafed.pem -out "$TMP/pkcs12/ed25519.p12"
O pkcs12 "${P12[@]}" -iter 1 -keypbe NONE -certpbe NONE -inkey leaf.key -in leaf.pem -out "$TMP/pkcs12/unencrypted.p12"
O pkcs12 "${P12[@]}" -iter 1 -nomac -inkey leaf.key -in leaf.pem -out "$TMP/pkcs12/no-mac.p12"
O pkcs12 -export -passout pass:other -iter 1 -inkey leaf.key -in leaf.pem -out "$TMP/pkcs12/wrong-password.p12"
O pkcs12 "${P12[@]}" -iter 1 -nokeys -in "$TMP/pem/chain.pem" -out "$TMP/pkcs12/certificates-only.p12"
O pkcs12 "${P12[@]}" -iter 1 -nocerts -inkey leaf.key -out "$TMP/pkcs12/key-only.p12"
O pkcs12 "${P12[@]}" -iter 1 -macalg sha1 -keypbe PBE-SHA1-3DES -certpbe PBE-SHA1-3DES -inkey leaf.key -in leaf.pem -out "$TMP/pkcs12/sha1-3des.p12" || true
O pkcs12 -export -passout pass: -iter 1 -inkey leaf.key -in leaf.pem -out "$TMP/pkcs12/empty-password.p12"

# ---------------------------------------------------------------- chains (Fuzz/Targets/chain.swift format)
python3 - "$W" "$TMP" <<'PY'
import os, struct, sys
work, out = sys.argv[1], sys.argv[2]
def der(name):
    path = f"{work}/{name}.der" if not name.endswith(".crl") else f"{work}/{name}.der"
    return open(path, "rb").read() if os.path.exists(path) else None
def pack(flags, max_int, names):
    blobs = [der(n) for n in names]
    blobs = [b for b in blobs if b]
    return bytes([flags, max_int]) + b"".join(struct.pack(">H", len(b)) + b for b in blobs)
# flags: bits 0-1 anchors-1 (taken from the end), 2-3 policy (server DNS / server IP / client / basic),
# 4 trace, 5 CRLs, 6 SHA-1 allowed, 7 leaf also trusted.  byte 1: maximumIntermediates (Int8).
cases = {
    "leaf-int-root": (0x00, 8, ["leaf", "int", "root"]),
    "leaf-int-root-ip": (0x04, 8, ["leaf", "int", "root"]),
    "leaf-int-root-client": (0x08, 8, ["leaf", "int", "root"]),
    "leaf-int-root-basic-trace": (0x1C, 8, ["leaf", "int", "root"]),
    "nc-rsa": (0x00, 8, ["leafrsa", "intnc", "root"]),
    "nc-odd": (0x0C, 8, ["leafodd", "intnc", "root"]),
    "ed25519": (0x10, 8, ["leafed", "int", "root"]),
    "policy": (0x10, 8, ["leafpol", "intpol", "root"]),
    "crl-good": (0x20, 8, ["leaf2", "int.crl", "int", "root.crl", "root"]),
    "crl-good-client": (0x28, 8, ["leaf2", "int.crl", "int", "root.crl", "root"]),
    "pss-root": (0x0C, 8, ["pssroot", "pssroot"]),
    "ed448": (0x00, 8, ["leaf448", "int", "root"]),
    "pss": (0x00, 8, ["leafpss", "intpss", "root"]),
    "k256": (0x00, 8, ["leafmin", "int", "root"]),
    "sha1": (0x40, 8, ["leafsha1", "int", "root"]),
    "crl-revoked": (0x20, 8, ["leaf", "int", "int.crl", "root.crl", "root"]),
    "crl-nc": (0x20, 8, ["leafrsa", "intnc", "intnc.crl", "root.crl", "root"]),
    "shuffled-extra": (0x01, 8, ["leaf", "intnc", "intpol", "int", "edroot", "root"]),
    "two-anchors": (0x01, 8, ["leaf", "int", "root", "edroot"]),
    "depth-zero": (0x00, 0, ["leaf", "int", "root"]),
    "depth-negative": (0x00, 0xFF, ["leaf", "int", "root"]),
    "self-trusted-leaf": (0x80, 8, ["leaf", "root"]),
    "v1-anchor": (0x0C, 8, ["v1", "v1"]),
    "root-only": (0x0C, 8, ["root", "root"]),
}
n = 0
for name, (flags, max_int, names) in cases.items():
    data = pack(flags, max_int, names)
    for target in ("chain", "chain-accept"):
        open(f"{out}/{target}/{name}.bin", "wb").write(data)
    n += 1
# Real roots as anchors for a PKI leaf (wrong issuer: path building must fail cleanly).
sysdir = f"{out}/certificate"
roots = sorted(f for f in os.listdir(sysdir) if f.startswith("sys-"))[:6]
for i, r in enumerate(roots):
    data = bytes([0x00, 8]) + b"".join(struct.pack(">H", len(b)) + b for b in [der("leaf"), der("int"), open(f"{sysdir}/{r}", "rb").read()])
    for target in ("chain", "chain-accept"):
        open(f"{out}/{target}/sys-{i}.bin", "wb").write(data)
print(f"make-seeds: {n + len(roots)} chain seeds", file=sys.stderr)
PY

# ---------------------------------------------------------------- limbo requests
python3 - "$SHARED/conformance" "$TMP/limbo" <<'PY'
import gzip, json, sys
conf, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, conf)
try:
    from limbo_common import to_request  # the runner's own request builder
except Exception as e:
    print(f"make-seeds: cannot import limbo_common ({e}); no limbo seeds", file=sys.stderr)
    sys.exit(0)
with gzip.open(f"{conf}/limbo-open.json.gz", "rt", encoding="utf-8") as f:
    suite = json.load(f)
cases = suite["testcases"]
# The first 200 cases, hand-written (non-BetterTLS) ones first: they cover more features.
ordered = [c for c in cases if not c["id"].startswith("bettertls::")] + [c for c in cases if c["id"].startswith("bettertls::")]
count = 0
for tc in ordered[:200]:
    line = json.dumps(to_request(tc, tc["id"], "2026-01-01T00:00:00+00:00"), separators=(",", ":"))
    if len(line) > 65536:
        continue  # larger than the target's -max_len
    name = tc["id"].replace("::", "__").replace("/", "_")
    open(f"{out}/{name}.json", "w").write(line + "\n")
    count += 1
print(f"make-seeds: {count} limbo requests", file=sys.stderr)
PY

# Bad requests (docs/bad-input-catalogue.md section 7): replay one with
# FUZZ_VERBOSE=1 Fuzz/run.sh repro limbo /tmp/fuzz-seeds/limbo/probe-*.json
python3 - "$W" "$TMP/limbo" <<'PY'
import json, sys
work, out = sys.argv[1], sys.argv[2]
pem = lambda n: open(f"{work}/{n}.pem").read()
leaf, root, inter = pem("leaf"), pem("root"), pem("int")
t = "2030-01-01T00:00:00Z"
ok = {"peer_certificate": leaf, "trusted_certs": [root], "untrusted_intermediates": [inter], "validation_time": t}
cases = {
    "not-json": "not json at all",
    "id-not-string": {"id": 1},
    "no-leaf": {},
    "bad-pem": {"peer_certificate": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"},
    "no-time": {"peer_certificate": leaf},
    "bad-time": {"peer_certificate": leaf, "validation_time": "2030-13-01T00:00:00Z"},
    "bad-name": dict(ok, expected_peer_name={"kind": "DNS"}),
    "uri-name": dict(ok, expected_peer_name={"kind": "URI", "value": "x"}),
    "bad-eku": dict(ok, extended_key_usage=["secretAuth"]),
    "sigalgs": dict(ok, signature_algorithms=["RSA"]),
    "bad-crl": dict(ok, crls=["-----BEGIN X509 CRL-----\nMAA=\n-----END X509 CRL-----\n"]),
    "negative-depth": dict(ok, max_chain_depth=-5),
    "huge-depth": dict(ok, max_chain_depth=1e300),
    "ok-case-dot": dict(ok, expected_peer_name={"kind": "DNS", "value": "EXAMPLE.com."}),
    "trusted-certificate-block": dict(ok, trusted_certs=["-----BEGIN TRUSTED CERTIFICATE-----\nMAA=\n-----END TRUSTED CERTIFICATE-----\n"]),
    "two-leaves": dict(ok, peer_certificate=leaf + inter),
}
for name, body in cases.items():
    line = body if isinstance(body, str) else json.dumps(dict({"id": name}, **body) if "id" not in body else body)
    open(f"{out}/probe-{name}.json", "w").write(line + "\n")
PY

# ---------------------------------------------------------------- policy files
cp "$W/leaf.pem" "$W/int.pem" "$W/root.pem" "$TMP/policy-base/"
cp "$W/leaf.der" "$TMP/policy-base/leaf.der"
cp "$W/intnc.pem" "$W/leafrsa.pem" "$TMP/policy-base/certs/"
echo "not a certificate" >"$TMP/policy-base/garbage.pem"
cp "$ROOT"/examples/policies/*.json "$TMP/policy/" 2>/dev/null || true
SPKI="$(openssl pkey -in leaf.key -pubout -outform DER 2>/dev/null | openssl dgst -sha256 -binary | base64)"
cat >"$TMP/policy/certificates.json" <<EOF
{"version": 1, "anchors": ["root.pem"], "anchorsOnly": true, "hosts": [
 {"host": "example.com", "evaluator": "pinnedCertificates", "certificates": ["leaf.pem", "certs"], "acceptSelfSignedCertificates": true},
 {"host": "*.example.com", "evaluator": "securityPolicy", "pinningMode": "certificate", "certificates": ["leaf.der"], "allowInvalidCertificates": false},
 {"host": "keys.example.com", "evaluator": "publicKeys", "certificates": ["int.pem"], "performDefaultValidation": false},
 {"host": "192.0.2.1", "evaluator": ["default", "spkiPins"], "pins": ["sha256/$SPKI", {"pin": "sha256/$SPKI", "scope": "ca"}], "enforcePinning": false}
]}
EOF
cat >"$TMP/policy/errors.json" <<'EOF'
{"version": 2, "hosts": [{"host": "*.com", "pins": ["sha1/abc"], "evaluator": "nope", "certificates": ["garbage.pem", "missing.pem"]},
 {"host": "*.com", "excludeFromParentPolicy": true}, {"host": "a..b", "expirationDate": "2026-13-40"}], "unknownKey": 1}
EOF
printf '%s' '{"version":1,"hosts":[]}' >"$TMP/policy/empty-hosts.json"
# Certificate "files" that are devices or directories (docs/bad-input-catalogue.md section 6).
for special in /dev/zero /dev/stdin /dev/urandom /proc; do
  printf '{"version":1,"hosts":[{"host":"example.com","evaluator":"pinnedCertificates","certificates":["%s"]}]}' "$special" \
    >"$TMP/policy/probe-$(basename "$special").json"
done
printf '%s' '[1, "x", null, {"a": [[[[]]]]}]' >"$TMP/policy/not-an-object.json"

# ---------------------------------------------------------------- signed pin sets
# The fuzz target's fixed key: PKCS #8 around RFC 8032 §7.1 TEST 1's secret.
printf '302e020100300506032b6570042204209d61b19deffd5a60ba844af492ec2cc44449c5697b7ec5d6b5b6d6c7f9d5a3de' \
  | python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.stdin.read()))' >pinset-key.der
O pkey -inform DER -in pinset-key.der -out pinset-key.pem
KEYID="$(O pkey -in pinset-key.pem -pubout -outform DER | openssl dgst -sha256 -hex | sed 's/^.* //')"
cp "$ROOT"/examples/policies/spki-pins.json "$TMP/pinset/policy-spki-pins.json"
pinset_envelope() {  # NAME SERIAL PAYLOAD-TEXT [tamper]
  printf '%s' "$3" >"pinset-$1.payload"
  O pkeyutl -sign -inkey pinset-key.pem -rawin -in "pinset-$1.payload" -out "pinset-$1.sig"
  [ "${4:-}" = tamper ] && printf '%s' "$3" | sed 's/"serial": [0-9]*/"serial": 99/' >"pinset-$1.payload"
  printf '{"keyId": "%s", "payload": "%s", "signature": "%s"}\n' "$KEYID" \
    "$(base64 -w0 <"pinset-$1.payload")" "$(base64 -w0 <"pinset-$1.sig")" >"$TMP/pinset/$1.json"
}
PINS='"pins": ["sha256/'"$SPKI"'", "sha256/IKOvAC5GbNlBN8FCd8u8d3I4riNIMX5c7w5L/wR+ytQ="]'
pinset_envelope good 5 '{"version": 1, "pinSet": {"version": 1, "serial": 5, "issuedAt": "2029-12-31T00:00:00Z", "expiresAt": "2030-06-01T00:00:00Z"}, "hosts": [{"host": "api.example.com", '"$PINS"', "negativePins": ["sha256/C5+lpZ7tcVwmwQIMcRtPbsQtWLABXhQzejna0wHFr8M="]}]}'
pinset_envelope expired 6 '{"version": 1, "pinSet": {"version": 1, "serial": 6, "issuedAt": "2029-01-01", "expiresAt": "2029-06-01"}, "hosts": [{"host": "**.example.com", '"$PINS"'}]}'
pinset_envelope tampered 5 '{"version": 1, "pinSet": {"version": 1, "serial": 5, "issuedAt": "2029-12-31T00:00:00Z", "expiresAt": "2030-06-01T00:00:00Z"}, "hosts": [{"host": "api.example.com", '"$PINS"'}]}' tamper
pinset_envelope rotates 8 '{"version": 1, "pinSet": {"version": 1, "serial": 8, "issuedAt": "2029-12-31T00:00:00Z", "expiresAt": "2030-06-01T00:00:00Z", "signingKeys": ["MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=", "MCowBQYDK2VwAyEAPUAXw+hDiVqStwqnTRt+vJyYLM8uxJaMwM1V8Sr0Zgw="]}, "hosts": [{"host": "api.example.com", '"$PINS"'}]}'
pinset_envelope duplicate-serial 9 '{"version": 1, "pinSet": {"version": 1, "serial": 9, "serial": 1, "issuedAt": "2029-12-31T00:00:00Z", "expiresAt": "2030-06-01T00:00:00Z"}, "hosts": [{"host": "api.example.com", '"$PINS"'}]}'
printf '%s' '{"version": 1, "hosts": [{"host": "api.example.com", "pins": ["sha256/'"$SPKI"'", "sha256/IKOvAC5GbNlBN8FCd8u8d3I4riNIMX5c7w5L/wR+ytQ="], "certificates": ["leaf.pem"], "evaluator": "disabled"}]}' >"$TMP/pinset/policy-not-allowed.json"

# ---------------------------------------------------------------- WWW-Authenticate values (one per line)
printf '%s\n' 'Basic realm="WallyWorld"' >"$TMP/wwwauth/basic"
printf '%s\n' 'Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"' >"$TMP/wwwauth/digest"
printf '%s\n' 'Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple"' >"$TMP/wwwauth/multiple"
printf '%s\n%s\n' 'Bearer realm="example", error="invalid_token"' 'Negotiate' >"$TMP/wwwauth/two-fields"
printf '%s\n' 'basic REALM=unquoted,digest realm="a\"b\\c"' >"$TMP/wwwauth/unquoted-escaped"
printf '%s\n' 'Basic realm="unterminated' >"$TMP/wwwauth/unterminated"

# ---------------------------------------------------------------- names (first line: reference; then SAN values)
mkdir -p "$TMP/names"
printf '%s\n' 'www.example.com' '*.example.com' 'example.com' >"$TMP/names/wildcard"
printf '%s\n' 'EXAMPLE.com.' 'example.com' >"$TMP/names/case-dot"
printf '%s\n' '192.0.2.1' '192.0.2.1' '2001:db8::1' >"$TMP/names/ipv4"
printf '%s\n' '[2001:db8::ffff:192.0.2.1]' '2001:db8::ffff:c000:201' '::' >"$TMP/names/ipv6"
printf '%s\n' 'admin@example.com' 'admin@example.com' 'Admin@EXAMPLE.com' >"$TMP/names/email"
printf '%s\n' 'a.co.uk' '*.co.uk' '*.s3.amazonaws.com' 'xn--bcher-kva.example' >"$TMP/names/public-suffix"
printf '%s\n' '2030-01-01T00:00:00Z' '2024-02-29T23:59:60.123+01:30' '2.5.29.19' '1.2.840.113549.1.1.11' >"$TMP/names/times-oids"
printf '%s\n' 'f*o.example.com' 'a..b' '-a.example' "$(printf 'a%.0s' $(seq 64)).com" >"$TMP/names/bad"

# ---------------------------------------------------------------- done
rm -rf "$W"
touch "$TMP/.complete"
rm -rf "$OUT"
mv "$TMP" "$OUT"
for d in "$OUT"/*/; do printf 'make-seeds: %-14s %4d files\n' "$(basename "$d")" "$(find "$d" -type f | wc -l)" >&2; done
