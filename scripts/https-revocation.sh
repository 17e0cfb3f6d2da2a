#!/usr/bin/env bash
# What checking revocation adds to a new connection once the CRLs are cached: `servertrust bench
# https --mode newconn` against an nginx of its own (TLS 1.3, P-256) whose chain names CRLs on a
# plain-HTTP server beside it, three ways in each round, back to back:
#
#   off      revocation off (the library's default: nothing asked of the server, nothing fetched)
#   crl      hard-fail over the chain: both certificates settled by CRLs from the cache (the
#            untimed warm-up request fetched them)
#   staple   hard-fail over the chain against a server that staples a `good` OCSP response: the
#            leaf settled by the staple, the issuing CA by its cached CRL
#
# and prints, per way, the median latency and client CPU per request, each way's ratio to `off`
# (median of the per-round ratios with a bootstrap 95% interval), and callgrind's instructions
# per request (runs of 10 and 40 requests, the difference ÷ 30: start-up and the warm-up's fetch
# cancel out).
#
#   scripts/https-revocation.sh [--rounds N] [--requests N] [--servertrust PATH] [--no-callgrind]
#
# Everything is generated with the openssl command (the PKI, the CRLs with `openssl ca -gencrl`,
# the staple with `openssl ocsp`) under $BENCH_OUT/revocation; nginx is started there and
# stopped at the end, by its PID. Clients run on CPU 1 and nginx on CPU 0 when there are two.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ST="$ROOT/.build/release/servertrust"
ROUNDS=6
REQUESTS=300
CALLGRIND=1
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2 ;;
    --no-callgrind) CALLGRIND=0; shift; continue ;;
  esac
  [ $# -ge 2 ] || { echo "https-revocation: '$1' needs a value" >&2; exit 2; }
  case "$1" in
    --rounds) ROUNDS="$2" ;;
    --requests) REQUESTS="$2" ;;
    --servertrust) ST="$2" ;;
    *) echo "https-revocation: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift 2
done
[ -x "$ST" ] || { echo "https-revocation: '$ST' is not an executable (swift build -c release --product servertrust)" >&2; exit 2; }
NGINX="${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}"
[ -x "$NGINX" ] || { echo "https-revocation: nginx is needed (apt-get install nginx-light)" >&2; exit 2; }

OUT="${BENCH_OUT:-/tmp/servertrust-bench}/revocation"
rm -rf "$OUT"; mkdir -p "$OUT/pki" "$OUT/www" "$OUT/crl" "$OUT/nginx/logs"
HOST=www.example.test
read -r PORT_TLS PORT_STAPLE PORT_CRL < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])')
log() { echo "https-revocation: $*" >&2; }

# --- PKI: root → issuing CA (its CRL point: root.crl) → leaf (its CRL point: ca.crl) -----------
cd "$OUT/pki"
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
key root.key; key ca.key; key leaf.key
openssl req -x509 -new -key root.key -subj "/CN=Revocation Bench Root" -days 3650 -out root.pem \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -addext "subjectKeyIdentifier=hash" 2>/dev/null
cat > ca.ext <<EOF
basicConstraints=critical,CA:TRUE,pathlen:0
keyUsage=critical,digitalSignature,keyCertSign,cRLSign
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
crlDistributionPoints=URI:http://127.0.0.1:$PORT_CRL/root.crl
EOF
openssl req -new -key ca.key -subj "/CN=Revocation Bench Issuing CA" -out ca.csr 2>/dev/null
openssl x509 -req -in ca.csr -CA root.pem -CAkey root.key -CAcreateserial -days 1825 -extfile ca.ext -out ca.pem 2>/dev/null
cat > leaf.ext <<EOF
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:$HOST
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
crlDistributionPoints=URI:http://127.0.0.1:$PORT_CRL/ca.crl
EOF
openssl req -new -key leaf.key -subj "/CN=$HOST" -out leaf.csr 2>/dev/null
openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 90 -extfile leaf.ext -out leaf.pem 2>/dev/null
cat leaf.pem ca.pem > chain.pem

# CRLs (with cRLNumber and AKI, as RFC 5280 §5.2 wants them), one per CA, nothing revoked.
crl() { # NAME KEY CERT
  mkdir -p "ca-$1"; : > "ca-$1/index.txt"; echo 01 > "ca-$1/crlnumber"
  cat > "ca-$1/ca.cnf" <<EOF
[ca]
default_ca = d
[d]
database = $OUT/pki/ca-$1/index.txt
crlnumber = $OUT/pki/ca-$1/crlnumber
default_md = sha256
default_crl_days = 7
crl_extensions = ext
[ext]
authorityKeyIdentifier = keyid:always
EOF
  openssl ca -config "ca-$1/ca.cnf" -gencrl -keyfile "$2" -cert "$3" -out "ca-$1/crl.pem" 2>/dev/null
  openssl crl -in "ca-$1/crl.pem" -outform DER -out "$OUT/crl/$1.crl"
}
crl root root.key root.pem
crl ca ca.key ca.pem

# The staple: `good` for the leaf, from the issuing CA, by openssl's own responder.
serial=$(openssl x509 -in leaf.pem -noout -serial | cut -d= -f2)
printf 'V\t%s\t\t%s\tunknown\t/CN=%s\n' "$(date -u -d '+90 days' +%y%m%d%H%M%SZ)" "$serial" "$HOST" > ocsp-index.txt
openssl ocsp -issuer ca.pem -cert leaf.pem -no_nonce -reqout ocsp-request.der 2>/dev/null
openssl ocsp -index ocsp-index.txt -CA ca.pem -rsigner ca.pem -rkey ca.key -reqin ocsp-request.der -respout staple.der -ndays 7 2>/dev/null
head -c 1024 /dev/urandom > "$OUT/www/1k.bin"

# --- nginx: TLS without and with the staple, and the CRL server ---------------------------------
USER_LINE=""; [ "$(id -u)" = 0 ] && USER_LINE="user root root;"
cat > "$OUT/nginx/nginx.conf" <<EOF
daemon on;
worker_processes 1;
$USER_LINE
pid $OUT/nginx/nginx.pid;
error_log $OUT/nginx/logs/error.log notice;
events { worker_connections 1024; }
http {
    access_log $OUT/nginx/logs/access.log;
    server { listen 127.0.0.1:$PORT_TLS ssl; server_name $HOST; ssl_certificate $OUT/pki/chain.pem;
             ssl_certificate_key $OUT/pki/leaf.key; ssl_protocols TLSv1.3; root $OUT/www; access_log off; }
    server { listen 127.0.0.1:$PORT_STAPLE ssl; server_name $HOST; ssl_certificate $OUT/pki/chain.pem;
             ssl_certificate_key $OUT/pki/leaf.key; ssl_protocols TLSv1.3; ssl_stapling on;
             ssl_stapling_file $OUT/pki/staple.der; root $OUT/www; access_log off; }
    server { listen 127.0.0.1:$PORT_CRL; root $OUT/crl; }
}
EOF
PIN_NGINX=(); PIN_CPU=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then PIN_NGINX=(taskset -c 0); PIN_CPU=(taskset -c 1); fi
"${PIN_NGINX[@]}" "$NGINX" -p "$OUT/nginx/" -c "$OUT/nginx/nginx.conf" -e "$OUT/nginx/logs/error.log"
for _ in $(seq 50); do [ -s "$OUT/nginx/nginx.pid" ] && break; sleep 0.1; done
NGINX_PID=$(cat "$OUT/nginx/nginx.pid")
trap 'kill "$NGINX_PID" 2>/dev/null || true' EXIT

bench() { # LABEL REQUESTS [extra options]: one JSON line
  local label=$1 requests=$2; shift 2
  local port=$PORT_TLS options=()
  case "$label" in
    crl) options=(--revocation hard-fail) ;;
    staple) port=$PORT_STAPLE; options=(--revocation hard-fail) ;;
  esac
  "$@" "$ST" bench https --url "https://$HOST:$port/1k.bin" --connect-ip 127.0.0.1 --cainfo "$OUT/pki/root.pem" \
    --mode newconn --requests "$requests" --max-seconds 120 --alg p256 --impl "$label" "${options[@]}"
}

# Every way must succeed before it is timed, and decide as it says: the CRL way settles both
# certificates by CRLs, the staple way the leaf by the staple.
for label in off crl staple; do bench "$label" 2 >/dev/null || { log "the $label client failed against its server"; exit 1; }; done
decided() { # PORT: the decision's steps
  "$ST" get "https://$HOST:$1/1k.bin" --cacert "$OUT/pki/root.pem" --resolve "$HOST:$1:127.0.0.1" --revocation hard-fail --json \
    | python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["decision"].get("pathChecks", [])))'
}
# (Whole outputs, not pipes into grep -q: under pipefail its early exit would fail the pipeline.)
crl_steps=$(decided "$PORT_TLS"); staple_steps=$(decided "$PORT_STAPLE")
grep -q "CRL http://127.0.0.1:$PORT_CRL/ca.crl" <<<"$crl_steps" || { log "the crl way did not settle the leaf by its CRL: $crl_steps"; exit 1; }
grep -q "the stapled OCSP response says good" <<<"$staple_steps" || { log "the staple way did not read the staple: $staple_steps"; exit 1; }

RESULTS="$OUT/runs.jsonl"; : > "$RESULTS"
for round in $(seq "$ROUNDS"); do
  log "round $round of $ROUNDS"
  for label in off crl staple; do
    line=$(bench "$label" "$REQUESTS" "${PIN_CPU[@]}") || { log "FAILED: $label (round $round)"; exit 1; }
    python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r["round"]=int(sys.argv[2]); print(json.dumps(r))' "$line" "$round" >> "$RESULTS"
  done
done
if [ "$CALLGRIND" = 1 ] && command -v valgrind >/dev/null; then
  log "callgrind: 10 and 40 requests per way"
  # Valgrind 3.19 gives up on the debug info of a Swift release binary ("possibly corrupted
  # debuginfo file"), so it runs a stripped copy: the same code, without the symbols.
  CG="$OUT/servertrust.stripped"; strip -o "$CG" "$ST"
  for label in off crl staple; do
    for n in 10 40; do
      ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$CG" bench https --url "https://$HOST:$([ "$label" = staple ] && echo "$PORT_STAPLE" || echo "$PORT_TLS")/1k.bin" \
        --connect-ip 127.0.0.1 --cainfo "$OUT/pki/root.pem" --mode newconn --requests "$n" --max-seconds 600 --alg p256 \
        $( [ "$label" = off ] || echo --revocation hard-fail ) 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | tail -1) \
        || { log "callgrind failed for $label ($n requests)"; exit 1; }
      echo "{\"callgrind\": \"$label\", \"requests\": $n, \"ir\": ${ir:-0}}" >> "$RESULTS"
    done
  done
fi
log "runs: $RESULTS"

python3 - "$RESULTS" <<'PY'
import collections, json, random, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
runs = collections.defaultdict(dict)
ir = collections.defaultdict(dict)
for row in rows:
    if "callgrind" in row:
        ir[row["callgrind"]][row["requests"]] = row["ir"]
    else:
        runs[row["round"]][row["impl"]] = row
random.seed(7)
def interval(ratios):
    medians = sorted(statistics.median(random.choices(ratios, k=len(ratios))) for _ in range(2000))
    return medians[49], medians[1949]
print("| way | rounds | µs/req (median) | client CPU µs/req | ÷ off: latency [95%] | ÷ off: client CPU [95%] | instructions/req | + vs off |")
print("|---|---|---|---|---|---|---|---|")
per = lambda label: (ir[label].get(40, 0) - ir[label].get(10, 0)) / 30 if label in ir and 10 in ir[label] and 40 in ir[label] else None
base_ir = per("off")
for label in ["off", "crl", "staple"]:
    pairs = [(r["off"], r[label]) for r in runs.values() if "off" in r and label in r and r["off"]["ok"] and r[label]["ok"]]
    if not pairs:
        continue
    wall = [b["us_per_req"] / a["us_per_req"] for a, b in pairs]
    cpu = [b["client_cpu_us_per_req"] / a["client_cpu_us_per_req"] for a, b in pairs]
    wl, wh = interval(wall); cl, ch = interval(cpu)
    i = per(label)
    extra = "–" if i is None or base_ir is None else f"{i - base_ir:+,.0f}"
    print(f"| {label} | {len(pairs)} | {statistics.median(b['us_per_req'] for _, b in pairs):.1f} | "
          f"{statistics.median(b['client_cpu_us_per_req'] for _, b in pairs):.1f} | {statistics.median(wall):.3f} [{wl:.3f}–{wh:.3f}] | "
          f"{statistics.median(cpu):.3f} [{cl:.3f}–{ch:.3f}] | {'–' if i is None else f'{i:,.0f}'} | {extra} |")
PY
