#!/usr/bin/env bash
# The end-to-end check on the real LoCoMo data (issue 14), called by .ci/run: import ../shared/data/locomo10
# (resolved from the repository's parent folder, where CI lays a copy of shared/), validate the imported set,
# run three arms on three conversations with the scripted model, build the report, and check that it shows
# evidence retention per arm and category with CIs (per memory and per dialog id). Exits non-zero on any failure. The data is never copied
# into the repository: everything is written to a temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."
data="$(cd .. && pwd)/shared/data/locomo10"
if [ ! -f "$data/SOURCE.md" ]; then
    echo "ci_locomo: no LoCoMo data at $data" >&2
    exit 1
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

amnesia-bench import locomo "$data" --out "$out/locomo" --limit 3
amnesia-bench validate "$out/locomo"
amnesia-bench run --tasks "$out/locomo" --arms no-memory,full-memory,amnesia --out "$out/run" --no-progress
report="$out/run/report/report.md"
python - "$report" <<'PY'
import re
import sys

text = open(sys.argv[1], encoding="utf-8").read()
section = text.split("## Evidence retention", 1)[1].split("\n## ", 1)[0]
rows = [line for line in section.splitlines() if line.startswith("| `")]
ci = re.compile(r"\d+\.\d% \[\d+\.\d, \d+\.\d\]")
seen = {(row.split("|")[1].strip(), row.split("|")[5].strip()) for row in rows if ci.search(row)}
arms = {"`no-memory`", "`full-memory`", "`amnesia`"}
categories = {"multi-hop", "temporal", "open-domain", "single-hop", "adversarial", "all"}
missing = {(arm, category) for arm in arms for category in categories} - seen
if missing:
    sys.exit(f"ci_locomo: the report lacks evidence retention with CIs for {sorted(missing)}")
full = next(r for r in rows if r.startswith("| `full-memory`") and "| all |" in r)
none = next(r for r in rows if r.startswith("| `no-memory`") and "| all |" in r)
if "| 0.0% [0.0, 0.0] |" not in none or full.split("|")[8].strip().startswith("0.0%"):
    sys.exit("ci_locomo: implausible evidence retention (no-memory must inject nothing, full-memory some)")
per_id = text.split("### Evidence retention per dialog id", 1)[1].split("\n## ", 1)[0]
id_rows = {row.split("|")[1].strip() for row in per_id.splitlines() if "| all |" in row and ci.search(row)}
if id_rows != arms:
    sys.exit(f"ci_locomo: the report lacks evidence retention per dialog id for {sorted(arms - id_rows)}")
print(f"ci_locomo: OK, evidence retention for {len(arms)} arms x {len(categories)} categories with CIs")
print("\n".join(line for line in per_id.splitlines() if "| all |" in line))
print("\n".join(line for line in section.splitlines() if "| all |" in line))
PY
