#!/usr/bin/env bash
# DocC documentation of the public API, and its gate (run by .ci/run):
#
#   scripts/docs.sh                 build the docs into $OUT (default /tmp/servertrust-docs)
#   OUT=DIR scripts/docs.sh         elsewhere
#
# 1. `swift build` (debug, the package's .build), then `swift-symbolgraph-extract` for each
#    library module: its public symbols, one symbol graph per module in $OUT/symbol-graphs/<M>.
# 2. Coverage: every public symbol written in the sources carries its own `///` comment.
#    Symbols with no source location are skipped: the compiler synthesized them (Equatable's
#    `==`, Hashable's `hash(into:)`, Codable's `init(from:)`, a raw-value enum's
#    `init(rawValue:)`) or they are the standard library's default implementations. Each
#    undocumented symbol is printed as `Module: Type.member (file:line)`.
# 3. `docc convert` of each module with its catalog, Sources/<M>/<M>.docc, and
#    --warnings-as-errors: an unresolved ``symbol link``, an undocumented parameter or a
#    malformed comment fails. The modules are converted in dependency order, each with the
#    archives before it as --dependency, so a comment links another module's symbol with a
#    leading slash: ``/TrustEvaluation/Verifier``.
# 4. `docc merge` of the module archives into $OUT/ServerTrust.doccarchive, where those
#    cross-module links resolve.
#
# To read the result: `python3 -m http.server -d $OUT/ServerTrust.doccarchive 8000` and open
# http://localhost:8000/documentation/ (the archives are built for static hosting), or, while
# writing one module's comments, `docc preview Sources/<M>/<M>.docc
# --additional-symbol-graph-dir $OUT/symbol-graphs/<M>` after a run.
#
# Exit status: 0 when every symbol is documented and docc printed no warning.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/servertrust-docs}"
# Dependency order: a module's archive is built after the archives of the modules it links to.
MODULES=(CertificateParsing TrustEvaluation ServerTrust ServerTrustHTTP ServerTrustURLSession ServerTrustKit ServerTrustLab)
started=$(date +%s)

# docc and swift-symbolgraph-extract ship in the toolchain, beside swift.
toolchain_bin="$(dirname "$(readlink -f "$(command -v swift)")")"
tool() { command -v "$1" 2>/dev/null || { [ -x "$toolchain_bin/$1" ] && echo "$toolchain_bin/$1"; } || { echo "docs: $1 not found (it ships with the Swift toolchain)" >&2; exit 1; }; }
DOCC="$(tool docc)"
EXTRACT="$(tool swift-symbolgraph-extract)"

mkdir -p "$OUT"
rm -rf "$OUT/symbol-graphs" "$OUT/modules" "$OUT/logs" "$OUT/ServerTrust.doccarchive"
mkdir -p "$OUT/symbol-graphs" "$OUT/modules" "$OUT/logs"

echo "== docs: build"
swift build >"$OUT/logs/build.log" 2>&1 || { tail -40 "$OUT/logs/build.log"; exit 1; }
BIN="$(swift build --show-bin-path)"
MODULE_DIR="$BIN/Modules"
[ -d "$MODULE_DIR" ] || MODULE_DIR="$BIN" # SwiftPM before 6.0 kept .swiftmodule files beside the objects
SHIMS_MODULEMAP="$BIN/CServerTrustShims.build/module.modulemap"
[ -f "$SHIMS_MODULEMAP" ] || { echo "docs: $SHIMS_MODULEMAP missing after the build" >&2; exit 1; }

echo "== docs: symbol graphs"
extract_flags=(
  -target "$(uname -m)-unknown-linux-gnu"
  -I "$MODULE_DIR"
  -Xcc "-fmodule-map-file=Sources/COpenSSL/module.modulemap"
  -Xcc "-fmodule-map-file=Sources/CCurl/module.modulemap"
  -Xcc "-fmodule-map-file=$SHIMS_MODULEMAP"
  -Xcc -I -Xcc Sources/CServerTrustShims/include
  -minimum-access-level public
)
# Extensions of other modules' types (URLSessionConfiguration, URLError) as their own symbols.
# (The help text is read whole first: `grep -q` on a pipe would end it early, and pipefail.)
extract_help="$("$EXTRACT" --help 2>&1 || true)"
if [[ "$extract_help" == *-emit-extension-block-symbols* ]]; then
  extract_flags+=(-emit-extension-block-symbols)
fi
for M in "${MODULES[@]}"; do
  mkdir -p "$OUT/symbol-graphs/$M"
  "$EXTRACT" -module-name "$M" "${extract_flags[@]}" -output-dir "$OUT/symbol-graphs/$M" \
    >"$OUT/logs/symbolgraph-$M.log" 2>&1 || { cat "$OUT/logs/symbolgraph-$M.log"; exit 1; }
done

echo "== docs: coverage (every public symbol in the sources has a /// comment)"
coverage_status=0
python3 - "$OUT/symbol-graphs" "$PWD" "${MODULES[@]}" <<'PY' || coverage_status=1
import glob, json, os, sys
from urllib.parse import unquote, urlparse

root_dir, repo = sys.argv[1], sys.argv[2]
modules = sys.argv[3:]
# Every kind of declaration a reader looks up; extension blocks (`swift.extension`) are
# containers, documented by their members.
KINDS = {
    "swift.class", "swift.struct", "swift.enum", "swift.protocol", "swift.actor",
    "swift.func", "swift.func.op", "swift.method", "swift.type.method", "swift.init",
    "swift.property", "swift.type.property", "swift.var", "swift.enum.case",
    "swift.typealias", "swift.subscript", "swift.type.subscript", "swift.associatedtype",
    "swift.macro",
}
missing, summary = [], []
for module in modules:
    checked = documented = skipped = 0
    for path in sorted(glob.glob(os.path.join(root_dir, module, "*.symbols.json"))):
        graph = json.load(open(path))
        for symbol in graph["symbols"]:
            if symbol["kind"]["identifier"] not in KINDS:
                continue
            location = symbol.get("location")
            if not location:
                # Synthesized by the compiler or inherited from the standard library.
                skipped += 1
                continue
            checked += 1
            doc = symbol.get("docComment") or {}
            text = "".join(line.get("text", "") for line in doc.get("lines", [])).strip()
            # A comment inherited from another module's protocol (Swift's CustomStringConvertible,
            # Equatable, ...) describes the requirement, not this type's answer to it.
            own = doc.get("module", module) == module
            if text and own:
                documented += 1
                continue
            file = unquote(urlparse(location["uri"]).path)
            file = os.path.relpath(file, repo) if file.startswith(repo + os.sep) else file
            name = ".".join(symbol["pathComponents"])
            missing.append(f"{module}: {name} ({file}:{location['position']['line'] + 1})")
    summary.append(f"{module} {documented}/{checked}" + (f" (+{skipped} synthesized)" if skipped else ""))
for line in missing:
    print(line)
print("coverage: " + ", ".join(summary) + f"; undocumented: {len(missing)}")
sys.exit(1 if missing else 0)
PY

echo "== docs: docc convert (warnings are errors)"
docc_status=0
dependencies=()
for M in "${MODULES[@]}"; do
  catalog="Sources/$M/$M.docc"
  [ -d "$catalog" ] || { echo "docs: $catalog missing"; docc_status=1; continue; }
  archive="$OUT/modules/$M.doccarchive"
  if "$DOCC" convert "$catalog" \
      --additional-symbol-graph-dir "$OUT/symbol-graphs/$M" \
      --output-dir "$archive" \
      --fallback-display-name "$M" --fallback-bundle-identifier "$M" \
      --enable-experimental-external-link-support "${dependencies[@]}" \
      --warnings-as-errors >"$OUT/logs/docc-$M.log" 2>&1; then
    echo "$M: ok"
  else
    docc_status=1
    # docc prints each diagnostic with a few lines of source after it.
    grep -v -E "^Finished|^Progress" "$OUT/logs/docc-$M.log" | head -200
    echo "$M: docc failed (log: $OUT/logs/docc-$M.log)"
  fi
  if [ -d "$archive" ]; then dependencies+=(--dependency "$archive"); fi
done

if [ $docc_status -eq 0 ]; then
  echo "== docs: docc merge"
  archives=()
  for M in "${MODULES[@]}"; do archives+=("$OUT/modules/$M.doccarchive"); done
  "$DOCC" merge "${archives[@]}" --output-path "$OUT/ServerTrust.doccarchive" \
    --synthesized-landing-page-name "ServerTrust package" >"$OUT/logs/docc-merge.log" 2>&1 \
    || { cat "$OUT/logs/docc-merge.log"; docc_status=1; }
fi

echo "docs: $OUT/ServerTrust.doccarchive in $(( $(date +%s) - started )) s (coverage: exit $coverage_status, docc: exit $docc_status)"
[ $coverage_status -eq 0 ] && [ $docc_status -eq 0 ]
