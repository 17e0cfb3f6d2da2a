#!/usr/bin/env bash
# The signature memo never changes a decision: x509-limbo's open suite and NIST PKITS, each run
# through `servertrust limbo-serve` twice, once with every signature verified afresh
# (--signature-memo off) and once with every case evaluated twice through the process-wide memo,
# the second, warm answer given (--signature-memo twice). The two runs must agree case for case,
# on the result and on the reason text, and the warm run must have hit the memo (else the
# comparison proved nothing).
#
#   scripts/memo-differential.sh [SERVERTRUST]     default .build/release/servertrust
#
# Output folder: $MEMO_DIFF_OUT (default /tmp/servertrust-memo-differential), one runner folder
# per suite and mode. Exit status: 0 when both suites agree, 1 on any difference, 2 on bad setup.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED="${SHARED:-$(cd .. && pwd)/shared}"
ST="${1:-.build/release/servertrust}"
OUT="${MEMO_DIFF_OUT:-/tmp/servertrust-memo-differential}"
[ -x "$ST" ] || { echo "memo-differential: '$ST' is not an executable (swift build -c release --product servertrust)" >&2; exit 2; }
[ -f "$SHARED/conformance/limbo_run.py" ] || { echo "memo-differential: no ../shared/conformance beside the project" >&2; exit 2; }
rm -rf "$OUT"
mkdir -p "$OUT"

status=0
for suite in limbo-open pkits; do
  for mode in off twice; do
    python3 "$SHARED/conformance/limbo_run.py" --limbo "$SHARED/conformance/$suite.json.gz" \
      --out "$OUT/$suite-$mode" --quiet -- "$ST" limbo-serve --signature-memo "$mode" >"$OUT/$suite-$mode.log" 2>&1 \
      || { echo "memo-differential: the $suite run with --signature-memo $mode failed:" >&2; tail -20 "$OUT/$suite-$mode.log" >&2; exit 2; }
  done
  python3 - "$suite" "$OUT/$suite-off" "$OUT/$suite-twice" <<'PY' || status=1
import json, re, sys
suite, off_dir, warm_dir = sys.argv[1:4]
def load(folder):
    with open(f"{folder}/results.jsonl") as f:
        return {row["id"]: (row["actual"], row["reason"]) for row in map(json.loads, f) if row}
off, warm = load(off_dir), load(warm_dir)
stderr = open(f"{warm_dir}/impl-stderr.log").read()
counters = re.findall(r"signature memo: hits (\d+), misses (\d+), insertions (\d+), evictions (\d+), entries (\d+)", stderr)
hits = sum(int(c[0]) for c in counters)
differ = sorted(i for i in off.keys() | warm.keys() if off.get(i) != warm.get(i))
for case in differ[:20]:
    print(f"  {case}: memo off {off.get(case)}, memo warm {warm.get(case)}")
results = {}
for result, _ in off.values():
    results[result] = results.get(result, 0) + 1
print(f"{suite}: {len(off)} cases ({', '.join(f'{n} {r}' for r, n in sorted(results.items()))}); "
      f"memo off and memo warm differ in {len(differ)}; warm run: {'; '.join(', '.join(c) for c in counters) or 'no counters'} "
      f"(hits, misses, insertions, evictions, entries per process)")
if differ or not off or hits == 0:
    sys.exit(1)
PY
done
exit $status
