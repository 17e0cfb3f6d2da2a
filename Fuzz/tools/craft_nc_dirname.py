# Usage: cd SCRATCH && python3 Fuzz/tools/craft_nc_dirname.py opaque|deep|plain
# (needs the openssl CLI; makes P-256 keys root.key, int.key, leaf.key in the current directory
# on first use, then {root,int,leaf}-MODE.der and chain-MODE.bin in the chain targets' format).
# The chain-*.bin files in Fuzz/regressions/chain*/ were made with it (FZ-1, see regressions/README.md).
# Crafts a real, correctly signed chain (root -> name-constrained intermediate -> leaf) where the
# intermediate EXCLUDES the directoryName subtree C=US, O=Evil and the leaf's subject lies in it,
# with one extra opaque attribute whose value is a constructed [APPLICATION 30] holding non-DER
# bytes (an INTEGER that announces more content than it has).
import subprocess, struct, sys, os

def tlv(tag, content):
    n = len(content)
    if n < 0x80: l = bytes([n])
    elif n < 0x100: l = bytes([0x81, n])
    else: l = bytes([0x82, n >> 8, n & 0xFF])
    return bytes([tag]) + l + content
def seq(*xs): return tlv(0x30, b"".join(xs))
def set_(*xs): return tlv(0x31, b"".join(xs))
def oid(dotted):
    arcs = [int(a) for a in dotted.split(".")]
    out = [arcs[0] * 40 + arcs[1]] + arcs[2:]
    b = b""
    for a in out:
        chunk = [a & 0x7F]; a >>= 7
        while a: chunk.append(0x80 | (a & 0x7F)); a >>= 7
        b += bytes(reversed(chunk))
    return tlv(0x06, b)
def integer(v):
    b = v.to_bytes((v.bit_length() + 8) // 8, "big")
    return tlv(0x02, b)
def printable(s): return tlv(0x13, s.encode())
def utf8(s): return tlv(0x0C, s.encode())
def utctime(s): return tlv(0x17, s.encode())
def octet(b): return tlv(0x04, b)
def bitstring(b): return tlv(0x03, b"\x00" + b)
def boolean(v): return tlv(0x01, b"\xff" if v else b"\x00")
def ctx(n, content, constructed=True): return tlv((0xA0 if constructed else 0x80) | n, content)

def atv(o, value): return set_(seq(oid(o), value))
C, O, CN = "2.5.4.6", "2.5.4.10", "2.5.4.3"
def name(*rdns): return seq(*rdns)

ECDSA_SHA256 = seq(oid("1.2.840.10045.4.3.2"))
def spki(keyfile):
    return subprocess.run(["openssl", "pkey", "-in", keyfile, "-pubout", "-outform", "DER"], capture_output=True, check=True).stdout
def ski(keyfile):
    import hashlib
    der = spki(keyfile)
    # SHA-1 of the BIT STRING content (RFC 5280 method 1) is not needed: any stable id works.
    return hashlib.sha1(der).digest()
def ext(o, value, critical=False):
    return seq(oid(o), *( [boolean(True)] if critical else [] ), octet(value))
def sign(tbs, keyfile):
    sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", keyfile], input=tbs, capture_output=True, check=True).stdout
    return seq(tbs, ECDSA_SHA256, bitstring(sig))
def cert(serial, issuer, subject, keyfile, issuer_key, exts):
    tbs = seq(ctx(0, integer(2)), integer(serial), ECDSA_SHA256, issuer,
              seq(utctime("250101000000Z"), utctime("350101000000Z")), subject, spki(keyfile),
              ctx(3, seq(*exts)))
    return sign(tbs, issuer_key)

for k in ("root", "int", "leaf"):
    if not os.path.exists(k + ".key"):
        subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", k + ".key"], check=True, capture_output=True)

root_name = name(atv(C, printable("US")), atv(O, printable("NC Test")), atv(CN, printable("NC Test Root")))
int_name = name(atv(C, printable("US")), atv(O, printable("NC Test")), atv(CN, printable("Constrained CA")))
excluded = name(atv(C, printable("US")), atv(O, printable("Evil")))
mode = sys.argv[1] if len(sys.argv) > 1 else "opaque"
if mode == "opaque":
    # The extra attribute: type 2.5.4.72 (any OID), value [APPLICATION 30] constructed, content 02 05 00 (truncated INTEGER).
    odd = set_(seq(oid("2.5.4.72"), tlv(0x7E, b"\x02\x05\x00")))
elif mode == "deep":
    # Valid DER, but nested 40 levels deep inside the opaque value (DER.maximumDepth is 32).
    inner = tlv(0x05, b"")
    for _ in range(40): inner = tlv(0x30, inner)
    odd = set_(seq(oid("2.5.4.72"), tlv(0x7E, inner)))
else:
    odd = set_(seq(oid("2.5.4.72"), utf8("plain")))
leaf_name = name(atv(C, printable("US")), atv(O, printable("Evil")), atv(CN, utf8("example.com")), odd)

BC, KU, EKU, SAN, SKI, AKI, NC = "2.5.29.19", "2.5.29.15", "2.5.29.37", "2.5.29.17", "2.5.29.14", "2.5.29.35", "2.5.29.30"
root = cert(1, root_name, root_name, "root.key", "root.key", [
    ext(BC, seq(boolean(True)), True), ext(KU, tlv(0x03, b"\x01\x06"), True), ext(SKI, octet(ski("root.key")))])
intermediate = cert(2, root_name, int_name, "int.key", "root.key", [
    ext(BC, seq(boolean(True)), True), ext(KU, tlv(0x03, b"\x01\x06"), True), ext(SKI, octet(ski("int.key"))),
    ext(AKI, seq(ctx(0, ski("root.key"), constructed=False))),
    ext(NC, seq(ctx(1, seq(ctx(4, excluded)))), True)])
leaf = cert(3, int_name, leaf_name, "leaf.key", "int.key", [
    ext(BC, seq(), True), ext(KU, tlv(0x03, b"\x07\x80"), True), ext(EKU, seq(oid("1.3.6.1.5.5.7.3.1"))),
    ext(SAN, seq(tlv(0x82, b"example.com"))), ext(SKI, octet(ski("leaf.key"))),
    ext(AKI, seq(ctx(0, ski("int.key"), constructed=False)))])
for n, d in (("root", root), ("int", intermediate), ("leaf", leaf)):
    open(f"{n}-{mode}.der", "wb").write(d)
chain = bytes([0x00, 8]) + b"".join(struct.pack(">H", len(b)) + b for b in (leaf, intermediate, root))
open(f"chain-{mode}.bin", "wb").write(chain)
print("wrote", f"chain-{mode}.bin", len(chain), "bytes")
