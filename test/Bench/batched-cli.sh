#!/usr/bin/env bash
# gnn-bench's batched options without a GPU: --dump-batches with
# --dump-only writes each batch once and never replaces a file; bad
# --layers, --readouts and a --dump-batches without --batched are refused
# with a message naming the option.
# Usage: batched-cli.sh GNN_BENCH WORKDIR
set -u
bench=$1
dir=$2
rm -rf "$dir"
mkdir -p "$dir"
failed=0
check() { # description, then the command's exit status test
  if ! eval "$2"; then
    echo "FAIL: $1"
    failed=1
  fi
}

"$bench" --batched mol20,prot5 --dump-batches "$dir/out" --dump-only \
  >"$dir/first.txt" 2>&1
check "the first dump succeeds" "[ $? -eq 0 ]"
check "mol20.npz written" "[ -s '$dir/out/mol20.npz' ]"
check "prot5.npz written" "[ -s '$dir/out/prot5.npz' ]"
check "the dump says what it wrote" \
  "grep -q 'dumped   mol20 (20 graphs' '$dir/first.txt'"
cp "$dir/out/mol20.npz" "$dir/before.npz"

"$bench" --batched mol20 --seed 2 --dump-batches "$dir/out" --dump-only \
  >"$dir/second.txt" 2>&1
check "a second dump fails" "[ $? -eq 2 ]"
check "the error names the file" \
  "grep -q 'mol20.npz: exists; not replaced' '$dir/second.txt'"
check "the file is unchanged" "cmp -s '$dir/out/mol20.npz' '$dir/before.npz'"

"$bench" --batched mol20 --layers gcn,sage >"$dir/layers.txt" 2>&1
check "--layers sage fails" "[ $? -eq 2 ]"
check "--layers names the layer" \
  "grep -q \"\\-\\-layers: unknown layer 'sage'\" '$dir/layers.txt'"

"$bench" --batched mol20 --readouts sum,min >"$dir/readouts.txt" 2>&1
check "--readouts min fails" "[ $? -eq 2 ]"
check "--readouts names the reduction" \
  "grep -q \"\\-\\-readouts: unknown reduction 'min'\" '$dir/readouts.txt'"

"$bench" --dump-batches "$dir/x" --dump-only >"$dir/alone.txt" 2>&1
check "--dump-batches without --batched fails" "[ $? -eq 2 ]"
check "the error says it needs --batched" \
  "grep -q 'dump-batches needs --batched' '$dir/alone.txt'"

"$bench" --help >"$dir/help.txt" 2>&1
for option in --layers --readouts --dump-batches; do
  check "--help lists $option" "grep -q -- '$option' '$dir/help.txt'"
done
exit $failed
