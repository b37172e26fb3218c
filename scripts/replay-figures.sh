#!/usr/bin/env bash
# Regenerates the figures of docs/replay.md: the shipped rules' replay on every shared
# trace, the rules variants, keep_recent and the identifier-keeping summarizer.
# Usage: scripts/replay-figures.sh [TRACES_DIR]   (default ../shared/traces)
# Prints the TOTAL rows of each run; the full report of the shipped run goes to
# target/replay-figures/shipped.md and its chart to docs/replay.svg.
set -euo pipefail
cd "$(dirname "$0")/.."
traces="${1:-../shared/traces}"
out=target/replay-figures
mkdir -p "$out"
cargo build --release -q -p favur-context-cli
bin=target/release/favur-context
rules=rules/coding-agent-shell.toml
files=("$traces"/*/*.json)
common=(--policy default --window 200000)

# set_class FILE RULE-NAME CLASS: rewrite the class of one named rule in a copy.
set_class() {
  awk -v rule="$2" -v class="$3" '
    /^name = / { current = $0; sub(/^name = "/, "", current); sub(/"$/, "", current) }
    /^class = / && current == rule { $0 = "class = \"" class "\"" }
    { print }' "$1" > "$1.tmp" && mv "$1.tmp" "$1"
}

variant() { # NAME then RULE=CLASS pairs
  local name="$1"; shift
  local file="$out/$name.toml"
  cp "$rules" "$file"
  for pair in "$@"; do set_class "$file" "${pair%%=*}" "${pair#*=}"; done
  echo "== variant: $name"
  "$bin" replay "${files[@]}" --rules "$file" "${common[@]}" | grep -E '^\| \*\*TOTAL\*\* \| (policy|trim-oldest) '
}

echo "== shipped"
"$bin" replay "${files[@]}" --rules "$rules" "${common[@]}" --svg docs/replay.svg > "$out/shipped.md"
grep -E '^\| \*\*TOTAL\*\*' "$out/shipped.md"

variant views-fuzzy "file views=fuzzy"
variant listings-strict "listings and searches=strict"
variant tests-fuzzy "test and script runs=fuzzy"
variant assistant-strict "assistant turns=strict"
variant tests-forgettable "test and script runs=forgettable"

for class in strict fuzzy; do
  file="$out/everything-$class.toml"
  printf '[[rule]]\nname = "everything"\nclass = "%s"\n' "$class" > "$file"
  echo "== variant: everything $class"
  "$bin" replay "${files[@]}" --rules "$file" "${common[@]}" | grep -E '^\| \*\*TOTAL\*\* \| (policy|trim-oldest) '
done

for k in 0 1 2 4 8 16; do
  echo "== keep_recent $k"
  "$bin" replay "${files[@]}" --rules "$rules" "${common[@]}" --keep-recent "$k" | grep -E '^\| \*\*TOTAL\*\* \| (policy|trim-oldest) '
done

echo "== without the summarizer's identifier list"
"$bin" replay "${files[@]}" --rules "$rules" "${common[@]}" --no-summary-identifiers | grep -E '^\| \*\*TOTAL\*\* \| policy '
