#!/usr/bin/env bash
# HTTP/2 multiplexing and bulk-download runs beside scripts/https-ab.sh: ServerTrust's HTTPSession
# (`servertrust bench h2` / `bench download`) against the curl command line and Go's net/http
# (scripts/bench/go/h2_bench.go) in the same rounds, against a loopback nginx of this script's
# own with HTTP/2 on (the shared bench's nginx serves HTTP/1.1 only):
#
#   scripts/https-h2-bulk.sh                      5 rounds, p256, both modes
#   scripts/https-h2-bulk.sh --modes h2 --rounds 10 --algs "p256 rsa2048"
#   scripts/https-h2-bulk.sh --summary FILE.jsonl
#
# h2:       one connection, --requests GETs of a 1 KiB file with --concurrency of them in flight
#           (default 10000 and 100). ServerTrust and Go time themselves after a GET that opened the
#           connection. curl is one `curl --http2 --parallel --parallel-max C` process per run, so its
#           start-up (the CA bundle parse, the handshake) is cancelled by difference: a run of C + N
#           URLs minus a run of C URLs, wall clock and CPU (RUSAGE_CHILDREN) alike.
# download: one GET of a --download-size file (default 1 GiB, sparse, served by nginx through TLS),
#           body discarded: MB/s, client CPU, and the client's peak resident memory (maxrss; curl's
#           from /usr/bin/time). Over HTTP/2 by default; --http1 adds an HTTP/1.1 run per client.
#
# Trust everywhere: the test PKI's trust-store.pem (140 roots), the host name, and the leaf's SPKI
# pin (curl --pinnedpubkey). Clients on CPU 1 and nginx on CPU 0 when there are two CPUs.
#
# Options:
#   --servertrust PATH   the binary (default .build/release/servertrust)
#   --rounds N           rounds (default 5)
#   --algs "A B"         rsa2048 and/or p256 (default p256)
#   --modes "M ..."      h2 and/or download (default both)
#   --requests N         h2 GETs per run (default 10000)
#   --concurrency C      h2 GETs in flight (default 100)
#   --download-size S    size of the download file, as truncate(1) takes it (default 1G)
#   --http1 yes          also download over HTTP/1.1
#   --out FILE           the JSON lines (default $BENCH_OUT/h2-bulk/<UTC stamp>.jsonl)
#   --summary FILE       print the summary of FILE and exit
# Exit status: 0 when every run succeeded, 1 when a run failed, 2 on bad usage.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SHARED_BENCH="${SHARED_BENCH:-$ROOT/../shared/bench}"
[ -f "$SHARED_BENCH/lib.sh" ] || { echo "https-h2-bulk: no ../shared/bench beside the project ($SHARED_BENCH)" >&2; exit 2; }
# shellcheck source=/dev/null
source "$SHARED_BENCH/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }

ST="$ROOT/.build/release/servertrust"
ROUNDS=5
ALGS="p256"
MODES="h2 download"
REQUESTS=10000
CONCURRENCY=100
SIZE=1G
HTTP1=""
OUTFILE=""
SUMMARY_ONLY=""
positive() { [[ "$2" =~ ^[1-9][0-9]*$ ]] || { echo "https-h2-bulk: $1 needs a positive integer, got '$2'" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in -h|--help) usage ;; esac
  [ $# -ge 2 ] || { echo "https-h2-bulk: '$1' needs a value, or is not an option (--help lists them)" >&2; exit 2; }
  case "$1" in
    --servertrust) ST="$2" ;;
    --rounds) positive "$1" "$2"; ROUNDS="$2" ;;
    --algs) ALGS="$2" ;;
    --modes) MODES="$2" ;;
    --requests) positive "$1" "$2"; REQUESTS="$2" ;;
    --concurrency) positive "$1" "$2"; CONCURRENCY="$2" ;;
    --download-size) SIZE="$2" ;;
    --http1) HTTP1="$2" ;;
    --out) OUTFILE="$2" ;;
    --summary) SUMMARY_ONLY="$2" ;;
    *) echo "https-h2-bulk: unknown option '$1' (--help lists them)" >&2; exit 2 ;;
  esac
  shift 2
done

summarise() { # FILE
  python3 - "$1" <<'PY'
import collections, json, random, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
random.seed(7)
def interval(ratios):
    if len(ratios) < 2:
        return ratios[0], ratios[0]
    medians = sorted(statistics.median(random.choices(ratios, k=len(ratios))) for _ in range(2000))
    return medians[49], medians[1949]
by = collections.defaultdict(dict)  # (bench, alg, protocol-class, round) -> label -> row
for r in rows:
    if not r.get("ok"):
        continue
    key = (r["bench"], r["alg"], r.get("wanted", ""), r["round"])
    by[key][r["label"]] = r
def cells(bench, metric, better_high):
    groups = sorted({(b, a, w) for b, a, w, _ in by if b == bench})
    for b, a, w in groups:
        rounds = [v for (bb, aa, ww, _), v in sorted(by.items()) if (bb, aa, ww) == (b, a, w)]
        for label in ["servertrust", "go-net-http", "curl"]:
            values = [r[label][metric] for r in rounds if label in r]
            if not values:
                continue
            ratios = [r[label][metric] / r["curl"][metric] for r in rounds if label in r and "curl" in r]
            yield a, w, label, rounds, values, ratios
print("HTTP/2, one connection, 1 KiB GETs with 100 in flight")
print("| alg | client | rounds | req/s | CPU µs/req | µs/req ÷ curl: median [95% interval] | CPU ÷ curl |")
print("|---|---|---|---|---|---|---|")
for a, w, label, rounds, values, ratios in cells("h2-parallel", "us_per_req", False):
    cpu = [r[label]["client_cpu_us_per_req"] for r in rounds if label in r]
    cpur = [r[label]["client_cpu_us_per_req"] / r["curl"]["client_cpu_us_per_req"] for r in rounds if label in r and "curl" in r]
    lo, hi = interval(ratios) if ratios else (0, 0)
    print(f"| {a} | {label} | {len(values)} | {1e6 / statistics.median(values):,.0f} | {statistics.median(cpu):.1f} | "
          f"{statistics.median(ratios):.2f} [{lo:.2f}–{hi:.2f}] | {statistics.median(cpur):.2f} |" if ratios else
          f"| {a} | {label} | {len(values)} | {1e6 / statistics.median(values):,.0f} | {statistics.median(cpu):.1f} | – | – |")
print()
print("Download, body discarded")
print("| alg | protocol | client | rounds | MB/s | MB/s ÷ curl: median [95% interval] | client CPU s | peak RSS MiB |")
print("|---|---|---|---|---|---|---|---|")
for a, w, label, rounds, values, ratios in cells("download", "mb_per_sec", True):
    cpu = [r[label]["client_cpu_s"] for r in rounds if label in r]
    rss = [r[label]["maxrss_kb"] / 1024 for r in rounds if label in r]
    lo, hi = interval(ratios) if ratios else (0, 0)
    ratio = f"{statistics.median(ratios):.2f} [{lo:.2f}–{hi:.2f}]" if ratios else "–"
    print(f"| {a} | {w} | {label} | {len(values)} | {statistics.median(values):,.0f} | {ratio} | {statistics.median(cpu):.2f} | {statistics.median(rss):.1f} |")
PY
}

if [ -n "$SUMMARY_ONLY" ]; then
  [ -r "$SUMMARY_ONLY" ] || { echo "https-h2-bulk: cannot read '$SUMMARY_ONLY'" >&2; exit 2; }
  summarise "$SUMMARY_ONLY"
  exit 0
fi

for alg in $ALGS; do case "$alg" in rsa2048|p256) ;; *) echo "https-h2-bulk: --algs: '$alg' is not rsa2048 or p256" >&2; exit 2 ;; esac; done
for mode in $MODES; do case "$mode" in h2|download) ;; *) echo "https-h2-bulk: --modes: '$mode' is not h2 or download" >&2; exit 2 ;; esac; done
[ -x "$ST" ] || { echo "https-h2-bulk: '$ST' is not an executable (swift build -c release --product servertrust)" >&2; exit 2; }
for tool in curl python3 /usr/bin/time; do command -v "$tool" >/dev/null || { echo "https-h2-bulk: $tool is needed" >&2; exit 2; }; done
NGINX="${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}"
[ -x "$NGINX" ] || { echo "https-h2-bulk: nginx is needed" >&2; exit 2; }

[ -f "$BENCH_PKI/p256/meta.json" ] && [ -f "$BENCH_PKI/rsa2048/meta.json" ] || "$SHARED_BENCH/pki/gen-pki.sh"
GO_PEER="$BENCH_BIN/go_h2_bench"
if command -v go >/dev/null; then
  mkdir -p "$BENCH_BIN"
  ( cd "$ROOT/scripts/bench/go" && GOCACHE="$BENCH_OUT/go-cache" GOPATH="$BENCH_OUT/gopath" GOPROXY=off GO111MODULE=off \
      GOTOOLCHAIN=local go build -o "$GO_PEER" h2_bench.go )
else
  log "go missing (apt-get install golang-go): the Go peer is skipped"
  GO_PEER=""
fi

# nginx with HTTP/2: our own prefix, ports and PID, stopped at exit.
PREFIX="$BENCH_OUT/h2-nginx"
PORT_RSA=$((BENCH_PORT_BASE + 10)); PORT_P256=$((BENCH_PORT_BASE + 11))
port_of() { [ "$1" = rsa2048 ] && echo "$PORT_RSA" || echo "$PORT_P256"; }
mkdir -p "$PREFIX/logs" "$PREFIX/www"
head -c 1024 /dev/urandom > "$PREFIX/www/1k.bin"
rm -f "$PREFIX/www/big.bin"; truncate -s "$SIZE" "$PREFIX/www/big.bin"
BIG_BYTES=$(stat -c %s "$PREFIX/www/big.bin")
cat > "$PREFIX/nginx.conf" <<EOF
worker_processes 1;
error_log $PREFIX/logs/error.log warn;
pid $PREFIX/logs/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nodelay on;
    keepalive_timeout 60s;
    keepalive_requests 1000000;
    http2_max_requests 1000000;
    http2_max_concurrent_streams 128;
    default_type application/octet-stream;
    ssl_protocols TLSv1.3;
    ssl_session_cache shared:H2BENCH:4m;
    server {
        listen 127.0.0.1:$PORT_RSA ssl http2;
        server_name $BENCH_HOST;
        ssl_certificate $BENCH_PKI/rsa2048/server-chain.pem;
        ssl_certificate_key $BENCH_PKI/rsa2048/leaf.key;
        root $PREFIX/www;
    }
    server {
        listen 127.0.0.1:$PORT_P256 ssl http2;
        server_name $BENCH_HOST;
        ssl_certificate $BENCH_PKI/p256/server-chain.pem;
        ssl_certificate_key $BENCH_PKI/p256/leaf.key;
        root $PREFIX/www;
    }
}
EOF
SERVER_PIN=(); command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ] && SERVER_PIN=(taskset -c 0)
"${SERVER_PIN[@]}" "$NGINX" -p "$PREFIX" -c "$PREFIX/nginx.conf" -e "$PREFIX/logs/error.log" -g 'daemon off;' >"$PREFIX/logs/stdout.log" 2>&1 &
NGINX_PID=$!
cleanup() { kill -QUIT "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; }
trap cleanup EXIT
for _ in $(seq 50); do
  curl -s -o /dev/null --cacert "$BENCH_PKI/p256/trust-store.pem" --resolve "$BENCH_HOST:$PORT_P256:$BENCH_IP" "https://$BENCH_HOST:$PORT_P256/1k.bin" && break
  sleep 0.1
done
log "nginx with HTTP/2 (pid $NGINX_PID) on 127.0.0.1:$PORT_RSA,$PORT_P256; download file $BIG_BYTES bytes"

PIN_CPU=(); command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ] && PIN_CPU=(taskset -c 1)
if [ -z "$OUTFILE" ]; then mkdir -p "$BENCH_OUT/h2-bulk"; OUTFILE="$BENCH_OUT/h2-bulk/$(date -u +%Y%m%dT%H%M%SZ).jsonl"; fi
: > "$OUTFILE"
FAILED=0
record() { # LABEL ROUND WANTED JSON
  python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r.update(label=sys.argv[2], round=int(sys.argv[3]), wanted=sys.argv[4]); print(json.dumps(r))' \
    "$4" "$1" "$2" "$3" >> "$OUTFILE"
}

# curl --parallel over one HTTP/2 connection: (C + N URLs) minus (C URLs), wall and child CPU.
curl_h2() { # ALG PIN -> JSON line
  python3 - "$1" "$2" "$REQUESTS" "$CONCURRENCY" "$BENCH_PKI/$1/trust-store.pem" "https://$BENCH_HOST:$(port_of "$1")/1k.bin" \
    "$BENCH_HOST:$(port_of "$1"):$BENCH_IP" "$PREFIX" "${PIN_CPU[@]}" <<'PY'
import json, os, resource, subprocess, sys, time
alg, pin, n, c, cacert, url, resolve, prefix = sys.argv[1:9]
pin_cpu = sys.argv[9:]
n, c = int(n), int(c)
def run(count):
    config = f"{prefix}/curl-{count}.cfg"
    with open(config, "w") as f:
        f.write(f'url = "{url}"\noutput = "/dev/null"\n' * count)
    command = pin_cpu + ["curl", "--http2", "--tlsv1.3", "--parallel", "--parallel-max", str(c), "-s", "-S", "--fail",
                         "--cacert", cacert, "--resolve", resolve, "--pinnedpubkey", pin,
                         "-w", "%{http_version} %{num_connects}\n", "-K", config]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = done.stdout.split()
    versions = set(lines[0::2])
    connects = sum(int(x) for x in lines[1::2])
    ok = done.returncode == 0 and len(lines) == 2 * count
    if not ok:
        sys.stderr.write(f"curl: exit {done.returncode}: {done.stderr[:300]}\n")
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), versions, connects, ok
w1, c1, _, _, ok1 = run(c)
w2, c2, versions, connects, ok2 = run(c + n)
seconds, cpu = w2 - w1, c2 - c1
print(json.dumps({"impl": "curl", "bench": "h2-parallel", "alg": alg, "requests": n, "concurrency": c, "errors": 0 if ok1 and ok2 else 1,
                  "connections": connects, "protocol": ",".join(sorted(versions)), "seconds": seconds, "req_per_sec": n / seconds,
                  "us_per_req": seconds * 1e6 / n, "client_cpu_us_per_req": cpu * 1e6 / n, "ok": ok1 and ok2 and seconds > 0}))
PY
}

curl_download() { # ALG PIN HTTPFLAG -> JSON line
  local timing
  timing=$(mktemp)
  local out
  out=$("${PIN_CPU[@]}" /usr/bin/time -o "$timing" -f '%e %U %S %M' curl "$3" --tlsv1.3 -s -S --fail -o /dev/null \
        --cacert "$BENCH_PKI/$1/trust-store.pem" --resolve "$BENCH_HOST:$(port_of "$1"):$BENCH_IP" --pinnedpubkey "$2" \
        -w '%{size_download} %{time_total} %{http_version}' "https://$BENCH_HOST:$(port_of "$1")/big.bin") || true
  python3 - "$1" "$out" "$(cat "$timing")" "$BIG_BYTES" <<'PY'
import json, sys
alg, out, timing, expected = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), int(sys.argv[4])
ok = len(out) == 3 and int(out[0]) == expected
size, seconds = (int(out[0]), float(out[1])) if ok else (0, 0.0)
print(json.dumps({"impl": "curl", "bench": "download", "alg": alg, "protocol": "HTTP/" + out[2] if ok else "", "bytes": size,
                  "seconds": seconds, "mb_per_sec": size / seconds / 1e6 if ok else 0, "client_cpu_s": float(timing[-3]) + float(timing[-2]),
                  "maxrss_kb": int(timing[-1]), "ok": ok}))
PY
  rm -f "$timing"
}

for round in $(seq "$ROUNDS"); do
  log "round $round of $ROUNDS"
  for alg in $ALGS; do
    pin="sha256//$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["spki_sha256_b64"])' "$BENCH_PKI/$alg/meta.json")"
    common=(--connect-ip "$BENCH_IP" --cainfo "$BENCH_PKI/$alg/trust-store.pem" --pin "$pin" --alg "$alg")
    small="https://$BENCH_HOST:$(port_of "$alg")/1k.bin"
    big="https://$BENCH_HOST:$(port_of "$alg")/big.bin"
    for mode in $MODES; do
      if [ "$mode" = h2 ]; then
        line=$("${PIN_CPU[@]}" "$ST" bench h2 --url "$small" "${common[@]}" --requests "$REQUESTS" --concurrency "$CONCURRENCY") || FAILED=1
        [ -n "$line" ] && record servertrust "$round" h2 "$line"
        if [ -n "$GO_PEER" ]; then
          line=$(GOMAXPROCS=1 "${PIN_CPU[@]}" "$GO_PEER" --mode parallel --url "$small" "${common[@]}" --requests "$REQUESTS" --concurrency "$CONCURRENCY") || FAILED=1
          [ -n "$line" ] && record go-net-http "$round" h2 "$line"
        fi
        line=$(curl_h2 "$alg" "$pin") || FAILED=1
        [ -n "$line" ] && record curl "$round" h2 "$line"
      else
        for protocol in h2 ${HTTP1:+h1}; do
          stflag=(); goflag=(); curlflag=--http2
          [ "$protocol" = h1 ] && { stflag=(--http1); goflag=(--http1); curlflag=--http1.1; }
          line=$("${PIN_CPU[@]}" "$ST" bench download --url "$big" "${common[@]}" "${stflag[@]}") || FAILED=1
          [ -n "$line" ] && record servertrust "$round" "$protocol" "$line"
          if [ -n "$GO_PEER" ]; then
            line=$(GOMAXPROCS=1 "${PIN_CPU[@]}" "$GO_PEER" --mode download --url "$big" "${common[@]}" "${goflag[@]}") || FAILED=1
            [ -n "$line" ] && record go-net-http "$round" "$protocol" "$line"
          fi
          line=$(curl_download "$alg" "$pin" "$curlflag") || FAILED=1
          [ -n "$line" ] && record curl "$round" "$protocol" "$line"
        done
      fi
    done
  done
done
log "runs: $OUTFILE"
summarise "$OUTFILE"
exit "$FAILED"
