#!/usr/bin/env bash
# Writes what the compiler prints for every kernel the tests, examples and
# benchmarks know into DIR: the compile sweep and the backward suite
# (gnnc-dump-kernels), then every .gnn file of the repository through gnnc
# (--emit=cuda and --emit=mlir), one file per kernel. Compare two snapshots
# (before and after a change to the compiler) with `diff -r A B`.
#   scripts/emission-snapshot.sh DIR [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: emission-snapshot.sh DIR [BUILD]}
build=${2:-${GNNC_BUILD_DIR:-build}}
mkdir -p "$out/whole" "$out/kernels"
"$build/bin/gnnc-dump-kernels" "$out/whole"
for f in $(git ls-files '*.gnn'); do
  stem=$(echo "$f" | tr '/' '_')
  "$build/bin/gnnc" "$f" -o - > "$out/whole/$stem.cu" 2>&1 || true
done
# One file per kernel (each starts at its "// @module::@kernel" line), and
# the text before the first kernel as <file>.preamble.
python3 - "$out" <<'PY'
import os, re, sys
out = sys.argv[1]
for name in sorted(os.listdir(f"{out}/whole")):
    if not name.endswith(".cu"):
        continue
    text = open(f"{out}/whole/{name}").read()
    parts = re.split(r"(?m)^(?=// @)", text)
    open(f"{out}/kernels/{name}.preamble", "w").write(parts[0])
    for part in parts[1:]:
        head = part.split("\n", 1)[0][3:].replace("::@", ".").replace("@", "")
        head = re.sub(r"[^A-Za-z0-9_.]+", "_", head)
        open(f"{out}/kernels/{name}.{head}", "w").write(part)
PY
echo "$(ls "$out/kernels" | wc -l) files in $out/kernels"
