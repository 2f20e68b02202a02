#!/usr/bin/env bash
# Re-runs every scripted-model result the README quotes from a report and copies their tables into README.md
# and arms/README.md (issue 32): the shipped-set panel (every `--arms all` arm x 3 scripted models ->
# docs/results/), the ttl policies (-> docs/results-ttl/POLICY/) and the 900 generated tasks
# (-> docs/results-generated/). The README's prose that quotes these reports is not rewritten here: read the
# new tables and update it. LoCoMo (docs/results-locomo/README.md, about an hour) is not part of this.
# Run from anywhere; RUNS (default: a temporary folder) keeps the session logs.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-$(mktemp -d)}"
bench() { python -m amnesia_bench.cli "$@" --no-progress; }

# The shipped-set panel: every arm that runs with any model, under each scripted model.
bench run --arms all --out "$runs/panel/uniform" --no-report --workers 2
bench run --arms all --model scripted:newest --out "$runs/panel/newest" --no-report --workers 2
bench run --arms all --model scripted:temporal --out "$runs/panel/temporal" --no-report --workers 2
rm -rf docs/results
python -m amnesia_bench.cli report "$runs/panel" --reference amnesia --out docs/results

# TTLs as people set them: the same four arms under each policy, `scripted` model.
rm -rf docs/results-ttl
for policy in task fixed:1d fixed:7d fixed:30d noisy:1; do
    name="${policy/:/-}"
    bench run --arms no-memory,full-memory,amnesia,amnesia-hard-ttl \
        --set "amnesia.ttl_policy=$policy" --set "amnesia-hard-ttl.ttl_policy=$policy" \
        --out "$runs/ttl/$name" --no-report --workers 2
    python -m amnesia_bench.cli report "$runs/ttl/$name" --out "docs/results-ttl/$name"
done

# Generated tasks: ttls drawn as people set them, two scripted models.
rm -rf "$runs/gen900"
python -m amnesia_bench.cli generate --group all --n 300 --seed 1 --out "$runs/gen900/tasks"
for model in uniform newest; do
    bench run --tasks "$runs/gen900/tasks" --arms no-memory,full-memory,amnesia,amnesia-hard-ttl --workers 2 \
        --model "scripted/$model" --out "$runs/gen900/runs/$model" --no-report
done
rm -rf docs/results-generated
python -m amnesia_bench.cli report "$runs/gen900/runs" --out docs/results-generated

python scripts/readme_tables.py
echo "session logs in $runs"
