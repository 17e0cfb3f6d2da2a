#!/usr/bin/env bash
# What requiring Certificate Transparency adds to a new connection: `servertrust bench https
# --mode newconn` against an nginx of its own (TLS 1.3, P-256) serving a chain whose leaf embeds
# two SCTs from two Lab logs of different operators (`servertrust bench ct-fixture`: the
# openssl command cannot make SCTs over a precertificate), three ways in each round, back to
# back:
#
#   off      CT off (the library's default: nothing asked of the server, no SCT read)
#   apple    --ct require --ct-policy apple: the SCT extension and the staple are asked for, each
#            embedded SCT verified with its log's key, Apple's policy applied
#   chrome   the same under Chrome's policy
#
# and prints, per way, the median latency and client CPU per request, each way's ratio to `off`
# (median of the per-round ratios with a bootstrap 95% interval), and callgrind's instructions
# per request (runs of 10 and 40 requests, the difference / 30: start-up cancels out).
# `--cainfo` names the fixture's root, which `bench https` treats as the system roots, so the
# chain is not exempt as a private anchor's would be.
#
#   scripts/https-ct.sh [--rounds N] [--requests N] [--servertrust PATH] [--no-callgrind]
#
# Files live under $BENCH_OUT/ct; nginx is started there and stopped at the end, by its PID.
# Clients run on CPU 1 and nginx on CPU 0 when there are two.
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
  [ $# -ge 2 ] || { echo "https-ct: '$1' needs a value" >&2; exit 2; }
  case "$1" in
    --rounds) ROUNDS="$2" ;;
    --requests) REQUESTS="$2" ;;
    --servertrust) ST="$2" ;;
    *) echo "https-ct: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift 2
done
[ -x "$ST" ] || { echo "https-ct: '$ST' is not an executable (swift build -c release --product servertrust)" >&2; exit 2; }
NGINX="${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}"
[ -x "$NGINX" ] || { echo "https-ct: nginx is needed (apt-get install nginx-light)" >&2; exit 2; }

OUT="${BENCH_OUT:-/tmp/servertrust-bench}/ct"
rm -rf "$OUT"; mkdir -p "$OUT/pki" "$OUT/www" "$OUT/nginx/logs"
HOST=www.example.test
PORT_TLS=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log() { echo "https-ct: $*" >&2; }

"$ST" bench ct-fixture --out "$OUT/pki" --host "$HOST"
head -c 1024 /dev/urandom > "$OUT/www/1k.bin"

USER_LINE=""; [ "$(id -u)" = 0 ] && USER_LINE="user root root;"
cat > "$OUT/nginx/nginx.conf" <<EOF
daemon on;
worker_processes 1;
$USER_LINE
pid $OUT/nginx/nginx.pid;
error_log $OUT/nginx/logs/error.log notice;
events { worker_connections 1024; }
http {
    access_log off;
    server { listen 127.0.0.1:$PORT_TLS ssl; server_name $HOST; ssl_certificate $OUT/pki/chain.pem;
             ssl_certificate_key $OUT/pki/leaf.key; ssl_protocols TLSv1.3; root $OUT/www; }
}
EOF
PIN_NGINX=(); PIN_CPU=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then PIN_NGINX=(taskset -c 0); PIN_CPU=(taskset -c 1); fi
"${PIN_NGINX[@]}" "$NGINX" -p "$OUT/nginx/" -c "$OUT/nginx/nginx.conf" -e "$OUT/nginx/logs/error.log"
for _ in $(seq 50); do [ -s "$OUT/nginx/nginx.pid" ] && break; sleep 0.1; done
NGINX_PID=$(cat "$OUT/nginx/nginx.pid")
trap 'kill "$NGINX_PID" 2>/dev/null || true' EXIT

ways() { # LABEL: the way's options
  case "$1" in
    off) ;;
    apple) echo --ct require --ct-policy apple --ct-log-list "$OUT/pki/loglist.json" ;;
    chrome) echo --ct require --ct-policy chrome --ct-log-list "$OUT/pki/loglist.json" ;;
  esac
}
bench() { # LABEL REQUESTS [prefix command]: one JSON line
  local label=$1 requests=$2; shift 2
  # shellcheck disable=SC2046
  "$@" "$ST" bench https --url "https://$HOST:$PORT_TLS/1k.bin" --connect-ip 127.0.0.1 --cainfo "$OUT/pki/root.pem" \
    --mode newconn --requests "$requests" --max-seconds 120 --alg p256 --impl "$label" $(ways "$label")
}

# Every way must succeed before it is timed, and the CT ways must really check: `get` with the
# same settings against the fixture's root as the system roots accepts, and a log list without
# the fixture's logs makes it refuse.
for label in off apple chrome; do bench "$label" 2 >/dev/null || { log "the $label client failed against its server"; exit 1; }; done
get() { # LOGLIST
  SSL_CERT_FILE="$OUT/pki/root.pem" SSL_CERT_DIR=/nonexistent "$ST" get "https://$HOST:$PORT_TLS/1k.bin" \
    --resolve "$HOST:$PORT_TLS:127.0.0.1" --ct require --ct-log-list "$1" >/dev/null
}
get "$OUT/pki/loglist.json" 2>"$OUT/get.txt" || { log "get --ct require refused the fixture: $(tail -3 "$OUT/get.txt")"; exit 1; }
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["operators"]=d["operators"][:1]; d["operators"][0]["logs"]=d["operators"][0]["logs"][:1]; json.dump(d, open(sys.argv[2], "w"))' \
  "$OUT/pki/loglist.json" "$OUT/pki/one-log.json"
if get "$OUT/pki/one-log.json" 2>/dev/null; then log "CT is not enforced: one listed log of two passed require"; exit 1; fi

RESULTS="$OUT/runs.jsonl"; : > "$RESULTS"
for round in $(seq "$ROUNDS"); do
  log "round $round of $ROUNDS"
  for label in off apple chrome; do
    line=$(bench "$label" "$REQUESTS" "${PIN_CPU[@]}") || { log "FAILED: $label (round $round)"; exit 1; }
    python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r["round"]=int(sys.argv[2]); print(json.dumps(r))' "$line" "$round" >> "$RESULTS"
  done
done
if [ "$CALLGRIND" = 1 ] && command -v valgrind >/dev/null; then
  log "callgrind: 10 and 40 requests per way"
  # Valgrind 3.19 gives up on the debug info of a Swift release binary ("possibly corrupted
  # debuginfo file"), so it runs a stripped copy: the same code, without the symbols.
  CG="$OUT/servertrust.stripped"; strip -o "$CG" "$ST"
  for label in off apple chrome; do
    for n in 10 40; do
      # shellcheck disable=SC2046
      ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$CG" bench https --url "https://$HOST:$PORT_TLS/1k.bin" \
        --connect-ip 127.0.0.1 --cainfo "$OUT/pki/root.pem" --mode newconn --requests "$n" --max-seconds 600 --alg p256 \
        $(ways "$label") 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | tail -1) \
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
for label in ["off", "apple", "chrome"]:
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
