# Denial-of-service shapes for path building and parsing, with fake signatures (meant for the
# chain-accept target; `chain` rejects them at the first signature). Writes into the current
# directory, in the chain targets' input format (Fuzz/Targets/chain.swift):
#   chain-50.bin                 leaf + 48 intermediates + root, maximumIntermediates 127
#   chain-50-default-depth.bin   the same with maximumIntermediates 8
#   mesh.bin                     120 cross-signed CAs all named "Mesh", none reaching the anchor
#   nc-1024x1024.bin             1,024 excluded DNS subtrees over a leaf with 1,024 SANs (basicX509
#                                policy, so validation gets past the hostname to the constraints)
#   cert-1mb.der                 a certificate with a 1 MB unknown extension (certificate target)
# Usage: cd SCRATCH && python3 Fuzz/tools/craft_dos_shapes.py && FUZZ_VERBOSE=1 Fuzz/run.sh repro chain-accept mesh.bin
# Figures for these inputs: docs/bad-input-catalogue.md section 5.
import struct, sys, hashlib
def tlv(tag, content):
    n = len(content)
    if n < 0x80: l = bytes([n])
    elif n < 0x100: l = bytes([0x81, n])
    elif n < 0x10000: l = bytes([0x82, n >> 8, n & 0xFF])
    else: l = bytes([0x83, n >> 16, (n >> 8) & 0xFF, n & 0xFF])
    return bytes([tag]) + l + content
def seq(*xs): return tlv(0x30, b"".join(xs))
def set_(*xs): return tlv(0x31, b"".join(xs))
def oid(d):
    arcs = [int(a) for a in d.split(".")]; out = [arcs[0]*40+arcs[1]] + arcs[2:]; b = b""
    for a in out:
        ch = [a & 0x7F]; a >>= 7
        while a: ch.append(0x80 | (a & 0x7F)); a >>= 7
        b += bytes(reversed(ch))
    return tlv(6, b)
def integer(v): return tlv(2, v.to_bytes((v.bit_length()+8)//8, "big"))
def name(cn): return seq(set_(seq(oid("2.5.4.3"), tlv(0x0C, cn.encode()))))
def octet(b): return tlv(4, b)
def ext(o, v, crit=False): return seq(oid(o), *([tlv(1, b"\xff")] if crit else []), octet(v))
ECDSA = seq(oid("1.2.840.10045.4.3.2"))
def spki(i):
    x = hashlib.sha512(str(i).encode()).digest()
    # Not a point on the curve: fine for the accept-all verifier, which never uses it.
    return seq(seq(oid("1.2.840.10045.2.1"), oid("1.2.840.10045.3.1.7")), tlv(3, b"\x00\x04" + x[:32] + x[32:64]))
def kid(i): return hashlib.sha1(str(i).encode()).digest()
def cert(serial, issuer, subject, key, issuer_key, ca, extra=(), san=None):
    exts = [ext("2.5.29.19", seq(tlv(1, b"\xff")) if ca else seq(), True),
            ext("2.5.29.15", tlv(3, b"\x01\x06") if ca else tlv(3, b"\x07\x80"), True),
            ext("2.5.29.14", octet(kid(key))), ext("2.5.29.35", seq(tlv(0x80, kid(issuer_key))))]
    if not ca:
        exts += [ext("2.5.29.37", seq(oid("1.3.6.1.5.5.7.3.1"))), ext("2.5.29.17", san if san is not None else seq(tlv(0x82, b"example.com")))]
    exts += list(extra)
    tbs = seq(tlv(0xA0, integer(2)), integer(serial), ECDSA, issuer,
              seq(tlv(0x17, b"250101000000Z"), tlv(0x17, b"350101000000Z")), subject, spki(key), tlv(0xA3, seq(*exts)))
    return seq(tbs, ECDSA, tlv(3, b"\x00" + seq(integer(1), integer(1))))
def pack(flags, maxint, certs):
    return bytes([flags, maxint]) + b"".join(struct.pack(">H", len(c)) + c for c in certs)

# 1. A straight chain of 50: leaf <- I1 <- ... <- I48 <- root; maximumIntermediates 127.
root = cert(1, name("Root"), name("Root"), 0, 0, True)
chain = []
prev_name, prev_key = name("Root"), 0
for i in range(1, 49):
    chain.append(cert(100 + i, prev_name, name(f"I{i}"), i, prev_key, True)); prev_name, prev_key = name(f"I{i}"), i
leaf = cert(999, prev_name, name("leaf"), 999, prev_key, False)
open("chain-50.bin", "wb").write(pack(0x00, 127, [leaf] + list(reversed(chain)) + [root]))
open("chain-50-default-depth.bin", "wb").write(pack(0x00, 8, [leaf] + list(reversed(chain)) + [root]))
# 2. A mesh: 40 CAs all named "Mesh", each cross-signing every other (40*39 certificates is too
#    many; take each key signed by 3 others), none reachable from the anchor.
mesh = []
N = 40
for i in range(N):
    for j in range(1, 4):
        mesh.append(cert(1000 + i * 10 + j, name("Mesh"), name("Mesh"), 10_000 + i, 10_000 + (i + j) % N, True))
leaf2 = cert(2, name("Mesh"), name("leaf"), 5, 10_000, False)
open("mesh.bin", "wb").write(pack(0x00, 127, [leaf2] + mesh[:len(mesh)] + [root]))
# 3. Name-constraint work: 1 leaf with 1024 DNS SANs under a CA with 1024 excluded subtrees.
sans = seq(*[tlv(0x82, f"h{i}.example.com".encode()) for i in range(1024)])
nc = seq(tlv(0xA1, b"".join(seq(tlv(0x82, f"x{i}.example.org".encode())) for i in range(1024))))
ca = cert(3, name("Root"), name("NC CA"), 7, 0, True, [ext("2.5.29.30", nc, True)])
leaf3 = cert(4, name("NC CA"), name("leaf"), 8, 7, False)
# replace the leaf's SAN by the big one
leaf3 = cert(4, name("NC CA"), name("leaf"), 8, 7, False, san=sans)
open("nc-1024x1024.bin", "wb").write(pack(0x0C, 8, [leaf3, ca, root]))
# 4. A 1 MB certificate (an unknown non-critical extension of 1 MB).
big = cert(5, name("Root"), name("big"), 9, 0, False, [ext("1.2.3.4", b"\x00" * 1_000_000)])
open("cert-1mb.der", "wb").write(big)
print("ok", len(open("chain-50.bin","rb").read()), len(open("mesh.bin","rb").read()), len(big))
