#!/usr/bin/env bash
# Interleaved HTTPS A/B runs: the libcurl-with-pin anchor of ../shared/bench against
# `servertrust bench https`, and optionally against a second servertrust binary (the build
# before a change), many short rounds in one run:
#
#   scripts/https-ab.sh                          10 rounds, both algorithms, all three modes
#   scripts/https-ab.sh --rounds 4 --modes keepalive --algs p256
#   scripts/https-ab.sh --baseline /tmp/old/servertrust      compare a change with its base
#   scripts/https-ab.sh --summary FILE.jsonl                 only summarise an earlier run
#
# Why this beside ../shared/bench/run-anchors.sh (the reference run, whose figures go in
# issue notes): single rounds on the 2-core machine move ±10%, so a 5-round median cannot
# tell a 3% change from noise. Here only the clients that are compared run, each round runs
# them back to back (same load, same nginx), and the summary gives, per cell, the median of
# the per-round ratios to libcurl with a bootstrap 95% interval over the rounds, plus the ratio
# of client CPU. An interval that excludes 1.0 is a difference the rounds agree on.
#
# It uses the anchor's own machinery (nothing here measures by itself): the test PKI and
# programs under $BENCH_OUT (../shared/bench/lib.sh; built by `pki/gen-pki.sh` and `build.sh`
# when missing), and the loopback nginx of `https/server.sh`, started if it is not answering
# and then stopped again. Clients run on CPU 1 and nginx on CPU 0 when there are two CPUs, as
# in run-anchors.sh.
#
# Options:
#   --servertrust PATH   the binary to measure (default .build/release/servertrust; build it
#                        with `swift build -c release --product servertrust`)
#   --baseline PATH      a second servertrust binary, measured in the same rounds
#   --rounds N           rounds (default 10)
#   --algs "A B"         rsa2048 and/or p256 (default both)
#   --modes "M ..."      newconn, resume and/or keepalive (default all three)
#   --requests N         requests per newconn/resume run (default 1000)
#   --keepalive N        requests per keep-alive run (default 10000)
#   --out FILE           the JSON lines, one per run, tagged "label" and "round"
#                        (default $BENCH_OUT/ab/<UTC stamp>.jsonl)
#   --summary FILE       print the summary of FILE and exit
# Exit status: 0 when every run succeeded, 1 when a run failed, 2 on bad usage.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SHARED_BENCH="${SHARED_BENCH:-$ROOT/../shared/bench}"
[ -f "$SHARED_BENCH/lib.sh" ] || { echo "https-ab: no ../shared/bench beside the project ($SHARED_BENCH)" >&2; exit 2; }
# shellcheck source=/dev/null
source "$SHARED_BENCH/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2; }

ST="$ROOT/.build/release/servertrust"
BASELINE=""
ROUNDS=10
ALGS="rsa2048 p256"
MODES="newconn resume keepalive"
REQUESTS=1000
KEEPALIVE=10000
OUTFILE=""
SUMMARY_ONLY=""

positive() { [[ "$2" =~ ^[1-9][0-9]*$ ]] || { echo "https-ab: $1 needs a positive integer, got '$2'" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in -h|--help) usage ;; esac
  [ $# -ge 2 ] || { echo "https-ab: '$1' needs a value, or is not an option (--help lists them)" >&2; exit 2; }
  case "$1" in
    --servertrust) ST="$2" ;;
    --baseline) BASELINE="$2" ;;
    --rounds) positive "$1" "$2"; ROUNDS="$2" ;;
    --algs) ALGS="$2" ;;
    --modes) MODES="$2" ;;
    --requests) positive "$1" "$2"; REQUESTS="$2" ;;
    --keepalive) positive "$1" "$2"; KEEPALIVE="$2" ;;
    --out) OUTFILE="$2" ;;
    --summary) SUMMARY_ONLY="$2" ;;
    *) echo "https-ab: unknown option '$1' (--help lists them)" >&2; exit 2 ;;
  esac
  shift 2
done

summarise() { # FILE: the table, from the JSON lines
  python3 - "$1" <<'PY'
import collections, json, random, statistics, sys

rows = []
with open(sys.argv[1]) as f:
    for number, line in enumerate(f, 1):
        line = line.strip()
        if not line:
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as error:
            sys.exit(f"https-ab: {sys.argv[1]}:{number}: not a JSON line ({error})")
runs = collections.defaultdict(dict)  # (alg, mode, round) -> label -> row
for row in rows:
    runs[(row["alg"], row["bench"].removeprefix("https-"), row["round"])][row["label"]] = row
labels = sorted({row["label"] for row in rows} - {"libcurl"})
if not labels:
    sys.exit(f"https-ab: {sys.argv[1]} holds no servertrust run to compare")
random.seed(7)  # a fixed seed: the same file always prints the same intervals

def interval(ratios):
    medians = sorted(statistics.median(random.choices(ratios, k=len(ratios))) for _ in range(2000))
    return medians[49], medians[1949]

print("| alg | mode | client | rounds | libcurl µs/req | its µs/req | ÷ libcurl: median [95% interval] | client CPU ÷ libcurl |")
print("|---|---|---|---|---|---|---|---|")
order = {"newconn": 0, "resume": 1, "keepalive": 2}
for alg, mode in sorted({(a, m) for a, m, _ in runs}, key=lambda k: (k[0], order.get(k[1], 9))):
    rounds = [v for (a, m, _), v in sorted(runs.items()) if (a, m) == (alg, mode)]
    for label in labels:
        pairs = [(r["libcurl"], r[label]) for r in rounds if "libcurl" in r and label in r
                 and r["libcurl"].get("ok") and r[label].get("ok")]
        if not pairs:
            print(f"| {alg} | {mode} | {label} | 0 | – | – | no successful pair | – |")
            continue
        wall = [ours["us_per_req"] / curl["us_per_req"] for curl, ours in pairs]
        cpu = [ours["client_cpu_us_per_req"] / curl["client_cpu_us_per_req"] for curl, ours in pairs]
        low, high = interval(wall) if len(wall) > 1 else (wall[0], wall[0])
        print(f"| {alg} | {mode} | {label} | {len(pairs)} | {statistics.median(c['us_per_req'] for c, _ in pairs):.1f} | "
              f"{statistics.median(o['us_per_req'] for _, o in pairs):.1f} | {statistics.median(wall):.3f} [{low:.3f}–{high:.3f}] | "
              f"{statistics.median(cpu):.3f} |")
PY
}

if [ -n "$SUMMARY_ONLY" ]; then
  [ -r "$SUMMARY_ONLY" ] || { echo "https-ab: cannot read '$SUMMARY_ONLY'" >&2; exit 2; }
  summarise "$SUMMARY_ONLY"
  exit 0
fi

for alg in $ALGS; do case "$alg" in rsa2048|p256) ;; *) echo "https-ab: --algs: '$alg' is not rsa2048 or p256" >&2; exit 2 ;; esac; done
for mode in $MODES; do case "$mode" in newconn|resume|keepalive) ;; *) echo "https-ab: --modes: '$mode' is not newconn, resume or keepalive" >&2; exit 2 ;; esac; done
for binary in "$ST" ${BASELINE:+"$BASELINE"}; do
  [ -x "$binary" ] || { echo "https-ab: '$binary' is not an executable (swift build -c release --product servertrust)" >&2; exit 2; }
done
command -v python3 >/dev/null || { echo "https-ab: python3 is needed for the JSON lines and the summary" >&2; exit 2; }

# The anchor's PKI and programs, made once.
[ -f "$BENCH_PKI/p256/meta.json" ] && [ -f "$BENCH_PKI/rsa2048/meta.json" ] || "$SHARED_BENCH/pki/gen-pki.sh"
[ -x "$BENCH_BIN/curl_https_bench" ] || "$SHARED_BENCH/build.sh"
[ -x "$BENCH_BIN/curl_https_bench" ] || { echo "https-ab: the libcurl anchor did not build (libcurl4-openssl-dev?)" >&2; exit 2; }

# nginx: reuse a running one (its PID file and a successful GET), else start ours and stop it at the end.
answering() {
  curl -s -o /dev/null --cacert "$BENCH_PKI/p256/trust-store.pem" \
    --resolve "$BENCH_HOST:$(port_for_alg p256):$BENCH_IP" "https://$BENCH_HOST:$(port_for_alg p256)/1k.bin"
}
STARTED_NGINX=0
if ! answering; then
  "$SHARED_BENCH/https/server.sh" start
  STARTED_NGINX=1
fi
cleanup() { [ "$STARTED_NGINX" = 0 ] || "$SHARED_BENCH/https/server.sh" stop; }
trap cleanup EXIT

PIN_CPU=(); command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ] && PIN_CPU=(taskset -c 1)
if [ -z "$OUTFILE" ]; then
  mkdir -p "$BENCH_OUT/ab"
  OUTFILE="$BENCH_OUT/ab/$(date -u +%Y%m%dT%H%M%SZ).jsonl"
fi
: > "$OUTFILE"

# Labels and programs side by side (paths may hold spaces); the servertrust ones get `bench https`.
LABELS=(libcurl servertrust)
PROGRAMS=("$BENCH_BIN/curl_https_bench" "$ST")
if [ -n "$BASELINE" ]; then LABELS+=(baseline); PROGRAMS+=("$BASELINE"); fi

FAILED=0
for round in $(seq "$ROUNDS"); do
  log "round $round of $ROUNDS"
  for alg in $ALGS; do
    port=$(port_for_alg "$alg")
    pin=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["spki_sha256_b64"])' "$BENCH_PKI/$alg/meta.json")
    for mode in $MODES; do
      count=$REQUESTS; [ "$mode" = keepalive ] && count=$KEEPALIVE
      for index in "${!LABELS[@]}"; do
        label=${LABELS[$index]}
        command=("${PROGRAMS[$index]}")
        [ "$label" = libcurl ] || command+=(bench https)
        if ! line=$("${PIN_CPU[@]}" "${command[@]}" --url "https://$BENCH_HOST:$port/1k.bin" --connect-ip "$BENCH_IP" \
             --cainfo "$BENCH_PKI/$alg/trust-store.pem" --pin "sha256//$pin" --mode "$mode" \
             --requests "$count" --max-seconds "$BENCH_HTTPS_MAX_S" --alg "$alg"); then
          log "FAILED: $label $alg $mode (round $round)"
          FAILED=1
        fi
        [ -n "$line" ] || continue
        python3 -c 'import json,sys; row=json.loads(sys.argv[1]); row.update(label=sys.argv[2], round=int(sys.argv[3])); print(json.dumps(row))' \
          "$line" "$label" "$round" >> "$OUTFILE"
      done
    done
  done
done

log "runs: $OUTFILE"
summarise "$OUTFILE"
exit "$FAILED"
