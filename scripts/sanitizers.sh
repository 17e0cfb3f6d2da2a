#!/usr/bin/env bash
# Sanitizer runs of the test suite (issue 7, "Sanitizers"):
#
#   scripts/sanitizers.sh            both runs below, one after the other
#   scripts/sanitizers.sh address    the whole suite under AddressSanitizer (+ LeakSanitizer)
#   scripts/sanitizers.sh thread     the concurrency tests under ThreadSanitizer
#
# Each run has its own scratch path (never the package's .build): $SAN_BUILD/address and
# $SAN_BUILD/thread (SAN_BUILD defaults to /tmp/san-build). Logs: $SAN_BUILD/<kind>.log; the
# sanitizer reports, if any, are extracted to $SAN_BUILD/<kind>-reports.txt.
#
# A run passes when the tests pass AND no sanitizer report was printed (a report in a child
# process or a detached thread does not always fail the test that caused it, so the log is
# searched too). Exit status: 0 when every requested run passes.
#
# The thread run covers the suites that start threads or tasks: ServerTrustLab's loopback
# TLS server and MITM relay, every ServerTrustHTTPTests suite (libcurl multi handles, session
# queues, challenge handlers), and the concurrent signature-key test. Extend THREAD_FILTER
# when a new concurrent suite lands.
set -uo pipefail
cd "$(dirname "$0")/.."

SAN_BUILD="${SAN_BUILD:-/tmp/san-build}"
THREAD_FILTER="${THREAD_FILTER:-ServerTrustLabTests\.(LocalTLSServerTests|MITMRelayTests)|ServerTrustHTTPTests\.|SignatureVerificationTests/concurrent}"
mkdir -p "$SAN_BUILD"

# The Swift backtracer would add minutes per crash and hide the sanitizer's own report.
export SWIFT_BACKTRACE="enable=no"
SYMBOLIZER="$(dirname "$(command -v swift)")/llvm-symbolizer"
[ -x "$SYMBOLIZER" ] && export ASAN_SYMBOLIZER_PATH="$SYMBOLIZER" TSAN_SYMBOLIZER_PATH="$SYMBOLIZER"

# run KIND SANITIZER [swift test args...]
run() {
  local kind="$1" sanitizer="$2"
  shift 2
  local log="$SAN_BUILD/$kind.log" reports="$SAN_BUILD/$kind-reports.txt"
  local start status
  start=$(date +%s)
  echo "== sanitizers: $kind (swift test --sanitize=$sanitizer $*), log $log"
  # -j 1: the machine is shared; sanitizer builds are large.
  swift test --sanitize="$sanitizer" --scratch-path "$SAN_BUILD/$kind" -j 1 "$@" >"$log" 2>&1
  status=$?
  grep -n -E "^(==|WARNING: ThreadSanitizer|ERROR: AddressSanitizer|ERROR: LeakSanitizer|SUMMARY: (Address|Thread|Leak)Sanitizer)" "$log" >"$reports" || true
  local count
  count=$(grep -c -E "^SUMMARY: (Address|Thread|Leak)Sanitizer|WARNING: ThreadSanitizer:" "$reports" || true)
  local tests
  tests=$(grep -E "Test run with [0-9]+ tests|Executed [0-9]+ tests" "$log" | tail -2 | tr '\n' ' ')
  echo "   exit $status, $((($(date +%s) - start) / 60)) min, sanitizer reports: $count; ${tests:-no test summary (build failed?)}"
  if [ "$count" -gt 0 ]; then
    echo "   first reports (all in $reports):"
    grep -E "SUMMARY:|WARNING: ThreadSanitizer" "$reports" | sort | uniq -c | sort -rn | head -10 | sed 's/^/     /'
  fi
  if [ $status -ne 0 ]; then
    grep -E "error:|✘|failed" "$log" | grep -v "^.*passed" | head -15 | sed 's/^/     /'
  fi
  [ $status -eq 0 ] && [ "$count" -eq 0 ]
}

which="${1:-all}"
failed=0
case "$which" in
  address | all)
    # detect_leaks: on, but only for leaks ASan can attribute; Foundation's process-wide
    # caches are reachable and not reported.
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:handle_abort=1}" run address address || failed=1
    ;;&
  thread | all)
    TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=0:second_deadlock_stack=1}" run thread thread --filter "$THREAD_FILTER" || failed=1
    ;;
  address) ;;
  *)
    echo "usage: scripts/sanitizers.sh [address|thread|all]" >&2
    exit 2
    ;;
esac
exit $failed
