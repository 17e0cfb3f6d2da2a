#!/usr/bin/env bash
# libFuzzer targets for ServerTrust (issue 7). Builds each target with
# `swiftc -sanitize=fuzzer,address` straight from Sources/ (not through SwiftPM, which cannot
# build fuzzers), caches the builds in $FUZZ_BUILD, and runs them from generated seed corpora.
#
#   Fuzz/run.sh list                    targets and whether they build
#   Fuzz/run.sh build [TARGET...]       build (cached; rebuilt when a source file changes)
#   Fuzz/run.sh TARGET SECONDS          fuzz one target for SECONDS, print executions and crashes
#   Fuzz/run.sh all SECONDS             every target in turn, SECONDS each
#   Fuzz/run.sh smoke [SECONDS]         CI: regressions + every target for ~1 s (total ~25 s); exit 1 on a crash
#   Fuzz/run.sh until N [TARGET...]     fuzz each target in 300 s slices until its recorded total reaches N
#                                       executions (issue 7's goal: N = 10000000); stops at the first crash
#   Fuzz/run.sh repro TARGET FILE...    run saved inputs once (a regression check)
#   Fuzz/run.sh minimize TARGET FILE    shrink a crashing input (libFuzzer -minimize_crash)
#   Fuzz/run.sh results                 the table of past runs (executions, exec/s, crashes)
#
# Environment: FUZZ_BUILD (/tmp/fuzz-build), FUZZ_SEEDS (/tmp/fuzz-seeds, made by
# Fuzz/make-seeds.sh when missing), FUZZ_CORPUS (/tmp/fuzz-corpus: what the fuzzer adds),
# FUZZ_ARGS (extra libFuzzer flags; for long runs on a shared machine, "-timeout=1200": libFuzzer's
# timeout is wall-clock, so a fuzzer paused with SIGSTOP or starved at nice 19 reports a false
# timeout at 10 s). Several run.sh processes may fuzz different targets at once (each appends one line per run to the results); the machine
# is shared. Regression inputs live in Fuzz/regressions/TARGET/ and are replayed first.
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
FUZZ="$ROOT/Fuzz"
B="${FUZZ_BUILD:-/tmp/fuzz-build}"
SEEDS="${FUZZ_SEEDS:-/tmp/fuzz-seeds}"
CORPUS="${FUZZ_CORPUS:-/tmp/fuzz-corpus}"
M="$B/modules"
RESULTS="$B/results.tsv"

# Every target, in the order `all` and `smoke` run them.
TARGETS=(der pem certificate crl names chain chain-accept pkcs12 privatekey limbo policy pinset wwwauth)
# Targets allowed to be skipped when they do not build (none: every target's code exists, so a
# build failure fails `smoke` and CI). Kept for targets added ahead of their code.
OPTIONAL_TARGETS=" "

SWIFTC="${SWIFTC:-swiftc}"
CLANG="${CLANG:-$(dirname "$(command -v "$SWIFTC")")/clang}"
[ -x "$CLANG" ] || CLANG=clang
# The package's settings (Package.swift: Swift 6 mode, ExistentialAny, InternalImportsByDefault).
SWIFTFLAGS=(-swift-version 6 -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault
  -package-name main -O -g -sanitize=fuzzer,address -parse-as-library -I "$M")
CMODULES=(-I /usr/include/x86_64-linux-gnu
  -Xcc -fmodule-map-file="$ROOT/Sources/COpenSSL/module.modulemap"
  -Xcc -fmodule-map-file="$ROOT/Sources/CCurl/module.modulemap"
  -Xcc -fmodule-map-file="$M/CServerTrustShims/module.modulemap"
  -Xcc -I -Xcc "$ROOT/Sources/CServerTrustShims/include")

# Runtime: no Swift backtracer (it would hold the terminal for up to 30 s per crash and libFuzzer
# prints the stack anyway); symbolised ASan stacks.
export SWIFT_BACKTRACE="enable=no"
export FUZZ_POLICY_BASE="${FUZZ_POLICY_BASE:-$SEEDS/policy-base}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-symbolize=1:detect_stack_use_after_return=0:handle_abort=1:allocator_may_return_null=1}"
SYMBOLIZER="$(dirname "$(command -v "$SWIFTC")")/llvm-symbolizer"
[ -x "$SYMBOLIZER" ] && export ASAN_SYMBOLIZER_PATH="$SYMBOLIZER"

mkdir -p "$M" "$B/bin" "$B/logs" "$B/artifacts"
say() { printf '%s\n' "$*" >&2; }

swift_sources() { find "$ROOT/Sources/$1" -name '*.swift' | LC_ALL=C sort; }

# hash_of FILE... : content hash of files plus the compiler flags (the cache key).
hash_of() {
  { printf '%s\n' "${SWIFTFLAGS[@]}" "$($SWIFTC --version 2>&1 | head -1)"; cat "$@"; } | sha256sum | cut -c1-16
}

# build_module NAME "DEPS" [extra swiftc flags...]: Sources/NAME as one instrumented object and
# a .swiftmodule in $M. Returns 1 (and keeps the log) when it does not compile.
build_module() {
  local name="$1" deps="$2"
  shift 2
  local sources
  mapfile -t sources < <(swift_sources "$name")
  local depstamps=()
  for d in $deps; do
    build_module_cached "$d" || return 1
    depstamps+=("$M/$d.stamp")
  done
  local key
  key="$(hash_of "${sources[@]}" "${depstamps[@]}" <(printf '%s\n' "$@"))"
  if [ -f "$M/$name.stamp" ] && [ "$(cat "$M/$name.stamp")" = "$key" ] && [ -f "$M/$name.o" ]; then return 0; fi
  say "build: module $name (${#sources[@]} files)"
  local log="$B/logs/module-$name.log"
  if nice -n 5 "$SWIFTC" "${SWIFTFLAGS[@]}" "${CMODULES[@]}" -module-name "$name" -wmo \
      -emit-module -emit-module-path "$M/$name.swiftmodule" "$@" -c "${sources[@]}" -o "$M/$name.o" >"$log" 2>&1; then
    echo "$key" >"$M/$name.stamp"
    return 0
  fi
  rm -f "$M/$name.stamp"
  say "build: module $name does not compile (log: $log):"
  grep -m5 "error:" "$log" >&2
  return 1
}

# Modules are built once per script run even when several targets need them.
declare -A MODULE_OK=()
build_module_cached() {
  local name="$1"
  if [ -n "${MODULE_OK[$name]:-}" ]; then [ "${MODULE_OK[$name]}" = yes ]; return; fi
  local ok=no
  case "$name" in
    CertificateParsing) build_module CertificateParsing "" && ok=yes ;;
    TrustEvaluation) build_shims && build_module TrustEvaluation "CertificateParsing" && ok=yes ;;
    ServerTrust) build_module ServerTrust "TrustEvaluation" && ok=yes ;;
    # -enable-testing: the WWW-Authenticate parser (AuthenticateHeader) is internal.
    ServerTrustHTTP) build_module ServerTrustHTTP "ServerTrust" -enable-testing && ok=yes ;;
    *) say "unknown module $name" ;;
  esac
  MODULE_OK[$name]=$ok
  [ $ok = yes ]
}

# CServerTrustShims: SwiftPM generates its module map; so do we. shims.c is one-line wrappers,
# built with ASan (not with fuzzer coverage: it has no branches worth steering on).
write_shims_modulemap() {
  mkdir -p "$M/CServerTrustShims"
  cat >"$M/CServerTrustShims/module.modulemap.new" <<EOF
module CServerTrustShims {
    umbrella header "$ROOT/Sources/CServerTrustShims/include/CServerTrustShims.h"
    export *
}
EOF
  cmp -s "$M/CServerTrustShims/module.modulemap.new" "$M/CServerTrustShims/module.modulemap" 2>/dev/null \
    || mv "$M/CServerTrustShims/module.modulemap.new" "$M/CServerTrustShims/module.modulemap"
  rm -f "$M/CServerTrustShims/module.modulemap.new"
}
write_shims_modulemap

build_shims() {
  local src="$ROOT/Sources/CServerTrustShims/shims.c" key
  key="$(hash_of "$src" "$ROOT/Sources/CServerTrustShims/include/CServerTrustShims.h")"
  if [ -f "$M/shims.stamp" ] && [ "$(cat "$M/shims.stamp")" = "$key" ]; then return 0; fi
  "$CLANG" -O1 -g -fsanitize=address -fPIC $(pkg-config --cflags openssl libcurl 2>/dev/null) \
    -I "$ROOT/Sources/CServerTrustShims/include" -c "$src" -o "$M/shims.o" || return 1
  echo "$key" >"$M/shims.stamp"
}

# What each target is made of: modules, extra sources, libraries.
target_modules() {
  case "$1" in
    der | pem | certificate | crl) echo "CertificateParsing" ;;
    names | chain | chain-accept | pkcs12 | privatekey) echo "CertificateParsing TrustEvaluation" ;;
    policy | pinset) echo "CertificateParsing TrustEvaluation ServerTrust" ;;
    # ProgramVersion (Support/, compiled into the limbo target) prints libcurl's version, from ServerTrustHTTP.
    limbo) echo "CertificateParsing TrustEvaluation ServerTrust ServerTrustHTTP" ;;
    wwwauth) echo "CertificateParsing TrustEvaluation ServerTrust ServerTrustHTTP" ;;
    *) return 1 ;;
  esac
}
target_sources() {
  local t="$1"
  case "$t" in
    chain-accept) echo "$FUZZ/Targets/chain.swift" ;;
    # The limbo decoder lives in the servertrust executable: compile its real files (the
    # request handling, and the commands' shared plumbing in Support/: JSON output, option
    # parsing, errors, the terminal) with stubs for the unrelated subcommands.
    limbo) write_cli_stubs && echo "$FUZZ/Targets/limbo.swift $ROOT/Sources/servertrust/Commands/LimboServeCommand.swift $ROOT/Sources/servertrust/CLI.swift $B/cli-stubs.swift" && swift_sources servertrust/Support ;;
    *) echo "$FUZZ/Targets/$t.swift" ;;
  esac
  echo "$FUZZ/Support/Touch.swift"
}
# Stand-ins for the other subcommands CLI.swift dispatches to (generated from CLI.swift, so a
# new command does not break the build): never called by the limbo target.
write_cli_stubs() {
  {
    echo "// Generated by Fuzz/run.sh from Sources/servertrust/CLI.swift: the subcommands the limbo"
    echo "// fuzz target does not link. Never called."
    grep -o -E '\b[A-Z][A-Za-z0-9]*Command\.run\b' "$ROOT/Sources/servertrust/CLI.swift" | sed 's/\.run$//' | sort -u \
      | grep -v -x LimboServeCommand \
      | sed 's/.*/enum & { static func run(_ arguments: [String]) throws -> Int32 { ExitCode.badInput } }/'
  } >"$B/cli-stubs.swift.new"
  cmp -s "$B/cli-stubs.swift.new" "$B/cli-stubs.swift" 2>/dev/null || mv "$B/cli-stubs.swift.new" "$B/cli-stubs.swift"
  rm -f "$B/cli-stubs.swift.new"
}
target_defines() {
  case "$1" in
    chain-accept) echo "-D FUZZ_ACCEPT_ALL_SIGNATURES" ;;
  esac
}
target_libs() {
  case "$1" in
    der | pem | certificate | crl) ;;
    # shims.o also wraps libcurl's variadic setters, so it needs -lcurl wherever it is linked.
    *) echo "$M/shims.o -lssl -lcrypto -lcurl" ;;
  esac
}

is_target() { local t; for t in "${TARGETS[@]}"; do [ "$t" = "$1" ] && return 0; done; return 1; }
is_optional() { [[ "$OPTIONAL_TARGETS" == *" $1 "* ]]; }

# build_target NAME: $B/bin/fuzz-NAME, cached on its sources and modules.
build_target() {
  local t="$1" mods sources defines libs objs=() stamps=()
  mods="$(target_modules "$t")" || { say "unknown target $t"; return 2; }
  for m in $mods; do
    build_module_cached "$m" || { say "build: target $t skipped: module $m does not build"; return 1; }
    objs+=("$M/$m.o")
    stamps+=("$M/$m.stamp")
  done
  read -r -a sources <<<"$(target_sources "$t" | tr '\n' ' ')"
  read -r -a defines <<<"$(target_defines "$t")"
  read -r -a libs <<<"$(target_libs "$t")"
  for s in "${sources[@]}"; do [ -f "$s" ] || { say "build: target $t skipped: $s is missing"; return 1; }; done
  local key
  key="$(hash_of "${sources[@]}" "${stamps[@]}" <(printf '%s\n' "${defines[@]}" "${libs[@]}"))"
  local bin="$B/bin/fuzz-$t"
  if [ -x "$bin" ] && [ -f "$bin.stamp" ] && [ "$(cat "$bin.stamp")" = "$key" ]; then return 0; fi
  say "build: target $t"
  local log="$B/logs/target-$t.log"
  if nice -n 5 "$SWIFTC" "${SWIFTFLAGS[@]}" "${CMODULES[@]}" "${defines[@]}" -module-name "fuzz_${t//-/_}" \
      "${sources[@]}" "${objs[@]}" "${libs[@]}" -o "$bin" >"$log" 2>&1; then
    echo "$key" >"$bin.stamp"
    return 0
  fi
  rm -f "$bin.stamp"
  say "build: target $t does not compile (log: $log):"
  grep -m5 "error:" "$log" >&2
  return 1
}

ensure_seeds() {
  if [ ! -d "$SEEDS" ] || [ ! -f "$SEEDS/.complete" ]; then
    say "seeds: $SEEDS missing; running Fuzz/make-seeds.sh"
    "$FUZZ/make-seeds.sh" "$SEEDS" >&2 || { say "seeds: make-seeds.sh failed"; return 1; }
  fi
}

target_options() {
  local t="$1" opts=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
  local dict="$FUZZ/dict/$t.dict"
  case "$t" in chain-accept) dict="$FUZZ/dict/chain.dict" ;; esac
  [ -f "$dict" ] && opts+=(-dict="$dict")
  case "$t" in
    # Whole JSON requests with several PEM certificates: allow larger inputs than the default.
    limbo) opts+=(-max_len=65536) ;;
    chain | chain-accept) opts+=(-max_len=16384) ;;
    policy | wwwauth) opts+=(-max_len=8192) ;;
  esac
  # Foundation and the Swift runtime keep caches that LeakSanitizer reports as leaks after a
  # JSONSerialization call; leaks are still checked in the targets without Foundation.
  case "$t" in limbo | policy | wwwauth) opts+=(-detect_leaks=0) ;; esac
  printf '%s\n' "${opts[@]}"
}

# replay TARGET: run Fuzz/regressions/TARGET/* once each; 0 when none crashes.
replay() {
  local t="$1" dir="$FUZZ/regressions/$1"
  local files=()
  [ -d "$dir" ] && mapfile -t files < <(find "$dir" -type f ! -name '*.md' ! -name '.*' | LC_ALL=C sort)
  [ ${#files[@]} -eq 0 ] && return 0
  local log="$B/logs/replay-$t.log" failed=0
  for f in "${files[@]}"; do
    # FUZZ_IGNORE never applies here: a regression passes only when its bug is fixed.
    if ! env -u FUZZ_IGNORE "$B/bin/fuzz-$t" -timeout=10 -rss_limit_mb=2048 "$f" </dev/null >"$log" 2>&1; then
      say "REGRESSION $t: $(basename "$f") still fails:"
      summarize_crash "$log" >&2
      failed=1
    fi
  done
  [ $failed = 0 ] && say "regressions: $t: ${#files[@]} input(s) pass"
  return $failed
}

# The useful lines of a libFuzzer/ASan/Swift crash log: the error, then the top frames.
summarize_crash() {
  local log="$1"
  grep -m3 -E "Fatal error|fuzz invariant|ERROR: AddressSanitizer|ERROR: LeakSanitizer|ERROR: libFuzzer|deadly signal|SUMMARY:|timeout after|out-of-memory" "$log" | sed 's/^/  /'
  grep -E "^ +#[0-9]+ " "$log" | grep -v -E "libFuzzer|fuzzer::|__sanitizer|libc\.so|__libc_start|_start\b" | head -12 | sed 's/^/  /'
  grep -m1 -E "Test unit written to" "$log" | sed 's/^/  /'
}

# fuzz TARGET SECONDS: one run; appends to $RESULTS; 0 = no crash, 1 = crash, 2 = not built.
fuzz() {
  local t="$1" secs="$2"
  build_target "$t" || return 2
  ensure_seeds || return 2
  mkdir -p "$CORPUS/$t" "$SEEDS/$t" "$B/artifacts/$t"
  replay "$t"
  local replay_status=$?
  # One log per run.sh process: two processes fuzzing the same target once shared one file, and
  # the executions of one were read from the other's log (recorded as 0).
  local log="$B/logs/fuzz-$t.$$.log" opts
  mapfile -t opts < <(target_options "$t")
  local extra=()
  [ -n "${FUZZ_ARGS:-}" ] && read -r -a extra <<<"$FUZZ_ARGS"
  say "fuzz: $t for ${secs}s (corpus $CORPUS/$t + seeds $SEEDS/$t)"
  local start end status
  start=$(date +%s.%N)
  (cd "$B/artifacts/$t" && exec "$B/bin/fuzz-$t" "${opts[@]}" -max_total_time="$secs" \
      -artifact_prefix="$B/artifacts/$t/" "${extra[@]}" "$CORPUS/$t" "$SEEDS/$t") </dev/null >"$log" 2>&1
  status=$?
  end=$(date +%s.%N)
  local execs elapsed rate corpus_size crashed=no
  execs="$(grep -m1 -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$')"
  [ -z "$execs" ] && execs="$(grep -o -E '^#[0-9]+' "$log" | tail -1 | tr -d '#')"
  [ -z "$execs" ] && execs=0
  elapsed="$(echo "$end - $start" | bc)"
  rate="$(echo "scale=0; $execs / $elapsed" | bc)"
  corpus_size="$(find "$CORPUS/$t" -type f | wc -l)"
  local cov
  cov="$(grep -o -E 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)"
  # A "slow-unit" artifact is not a crash: on a shared machine a niced fuzzer can be starved
  # for many seconds of wall-clock time in the middle of one input.
  if [ $status -ne 0 ] || grep -q -E "==ERROR|deadly signal|Fatal error|fuzz invariant" "$log" \
      || grep "Test unit written" "$log" | grep -q -v "/slow-unit-"; then
    crashed=yes
  fi
  printf '%-13s %6.1fs  %12s execs  %8s exec/s  corpus %5s  %s  %s\n' "$t" "$elapsed" "$execs" "$rate" "$corpus_size" "${cov:-}" \
    "$([ $crashed = yes ] && echo CRASH || echo ok)"
  printf '%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$elapsed" "$execs" "$rate" "$corpus_size" "$crashed" "${cov:-}" >>"$RESULTS"
  if [ $crashed = yes ]; then
    say "CRASH in $t (log: $log):"
    summarize_crash "$log" >&2
    say "  keep it: cp ARTIFACT $FUZZ/regressions/$t/   (then: Fuzz/run.sh repro $t FILE)"
    return 1
  fi
  return $replay_status
}

# total_executions TARGET: the executions recorded for TARGET in $RESULTS.
total_executions() {
  [ -f "$RESULTS" ] || { echo 0; return; }
  awk -F'\t' -v t="$1" '$2 == t { e += $4 } END { print e + 0 }' "$RESULTS"
}

main() {
cmd="${1:-}"
case "$cmd" in
  "" | -h | --help | help)
    sed -n '2,/^set /p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'
    ;;
  list)
    for t in "${TARGETS[@]}"; do
      if build_target "$t" 2>/dev/null; then s="builds"; else s="DOES NOT BUILD"; fi
      printf '%-13s %s  (modules: %s)\n' "$t" "$s" "$(target_modules "$t")"
    done
    ;;
  build)
    shift
    status=0
    list=("$@")
    [ ${#list[@]} -eq 0 ] && list=("${TARGETS[@]}")
    for t in "${list[@]}"; do build_target "$t" || { is_optional "$t" || status=1; }; done
    exit $status
    ;;
  repro)
    t="${2:?usage: run.sh repro TARGET FILE...}"
    shift 2
    build_target "$t" || exit 2
    "$B/bin/fuzz-$t" -timeout=10 -rss_limit_mb=2048 "$@"
    ;;
  minimize)
    t="${2:?usage: run.sh minimize TARGET FILE}"
    build_target "$t" || exit 2
    mkdir -p "$B/artifacts/$t"
    (cd "$B/artifacts/$t" && "$B/bin/fuzz-$t" -minimize_crash=1 -max_total_time=60 -timeout=10 \
      -exact_artifact_path="$B/artifacts/$t/minimized-$(basename "$3")" "$3") 2>&1 | tail -3
    ls -la "$B/artifacts/$t/minimized-$(basename "$3")"
    ;;
  until)
    goal="${2:?usage: run.sh until EXECUTIONS [TARGET...]}"
    shift 2
    list=("$@")
    [ ${#list[@]} -eq 0 ] && list=("${TARGETS[@]}")
    for t in "${list[@]}"; do
      is_target "$t" || { say "unknown target '$t'"; exit 2; }
      while :; do
        total=$(total_executions "$t")
        if [ "$total" -ge "$goal" ]; then say "$t: $total executions recorded (goal $goal)"; break; fi
        say "$t: $total executions recorded, fuzzing on"
        fuzz "$t" "${UNTIL_SLICE:-300}" || { say "$t: stopped (a crash or a build failure, above)"; exit 1; }
      done
    done
    ;;
  results)
    printf '%-21s %-13s %7s %12s %8s %7s %s\n' date target seconds execs exec/s corpus crash
    [ -f "$RESULTS" ] && awk -F'\t' '{printf "%-21s %-13s %7s %12s %8s %7s %s\n", $1, $2, $3, $4, $5, $6, $7}' "$RESULTS"
    echo "totals per target:"
    [ -f "$RESULTS" ] && awk -F'\t' '{e[$2]+=$4; s[$2]+=$3} END {for (t in e) printf "  %-13s %12d execs in %8.0f s\n", t, e[t], s[t]}' "$RESULTS" | sort
    ;;
  all | smoke)
    secs="${2:-}"
    if [ "$cmd" = smoke ]; then
      # ~1 s of fuzzing per target (about 2 s with start-up) from the seeds alone (a scratch corpus, removed afterwards), so the
      # smoke costs the same on a fresh CI machine and on one with a large local corpus.
      secs="${secs:-1}"
      CORPUS="$(mktemp -d /tmp/fuzz-smoke-corpus.XXXXXX)"
      trap 'rm -rf "$CORPUS"' EXIT
    fi
    [ -n "$secs" ] || { say "usage: run.sh all SECONDS"; exit 2; }
    ensure_seeds || exit 2
    failed=()
    skipped=()
    for t in "${TARGETS[@]}"; do
      fuzz "$t" "$secs"
      case $? in
        0) ;;
        2) if is_optional "$t"; then skipped+=("$t"); else failed+=("$t (does not build)"); fi ;;
        *) failed+=("$t") ;;
      esac
    done
    [ ${#skipped[@]} -gt 0 ] && say "skipped (module not buildable yet): ${skipped[*]}"
    if [ ${#failed[@]} -gt 0 ]; then say "FAILED: ${failed[*]}"; exit 1; fi
    say "$cmd: no crash"
    ;;
  *)
    is_target "$cmd" || { say "unknown target or command '$cmd' (targets: ${TARGETS[*]})"; exit 2; }
    secs="${2:?usage: run.sh TARGET SECONDS}"
    fuzz "$cmd" "$secs"
    exit $?
    ;;
esac
}

# The whole file is read before anything runs, so editing it during a long run is safe.
main "$@"; exit $?
