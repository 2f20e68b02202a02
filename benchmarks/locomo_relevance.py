"""Evidence retention on LoCoMo: `amnesia` in the relevance order against `retrieval` and `full-memory` (and
`amnesia` in the strength order), at 500 / 2,000 / 8,000 tokens, under three written-ttl policies.

For each ttl policy the 10 LoCoMo conversations are imported (`amnesia-bench import locomo`: the session
observations are the memories, each question is a probe with its evidence ids) and every arm runs at every
budget in one run per (policy, budget), scripted model, seed 0. Evidence retention (model-free,
`reports/evidence.py`) is the share of the memories holding a question's evidence that are injected at that
question, pooled over every question of the 10 conversations, with a 95% CI clustered by conversation.

Policies: `none` — no memory carries a ttl, so in the amnesia arms nothing decays or expires (they run with
`auto_expire: false`; the strength order is then exactly `full-memory`, so it is not run twice);
`30 days` — every memory written with a 30-day ttl; `by kind` — `by-kind:fact=90d,episode=14d` (every LoCoMo
observation is a fact: 90 days). `retrieval` and `full-memory` run unchanged under every policy.

Checks the issue's floor — at 2,000 tokens with no ttl, `amnesia-relevance` keeps at least 95% of
`retrieval`'s evidence retention — and exits 1 if it is missed.

    python benchmarks/locomo_relevance.py                          # LoCoMo at ../shared/data/locomo10
    python benchmarks/locomo_relevance.py --data PATH --out runs/locomo-relevance --workers 2
    python benchmarks/locomo_relevance.py --limit 2 --budgets 2000 # quicker: two conversations

The run folders (logs, manifests) stay in --out; the data set is read where it is, never copied here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import yaml

from amnesia_bench.api import run
from reports.evidence import evidence_table
from reports.logread import load_runs
from tasks.importers.common import parse_ttl_policy
from tasks.importers.locomo import import_locomo

POLICIES = {"none": "none", "30 days": "fixed:30d", "by kind": "by-kind:fact=90d,episode=14d"}
ARMS = ("amnesia-relevance", "retrieval", "full-memory", "amnesia")
FLOOR_SHARE = 0.95  # relevance / retrieval at FLOOR_BUDGET tokens, policy none
FLOOR_BUDGET = 2000


def arms_for(policy: str) -> tuple[list[str], dict[str, dict[str, object]]]:
    """The arms of one policy and their arm-config entries (no ttl: the amnesia arms never expire)."""
    if policy != "none":
        return list(ARMS), {}
    config = {"amnesia-relevance": {"base": "amnesia-relevance", "options": {"auto_expire": False}}}
    return [arm for arm in ARMS if arm != "amnesia"], config


def retention(run_dir: Path) -> pd.DataFrame:
    """Evidence retention (injected share, CI) per arm over all questions of one run."""
    table = evidence_table(load_runs([run_dir]))
    return table[table["mechanism"] == "all"].set_index("arm")


def run_cells(
    data: Path,
    out: Path,
    policies: list[str],
    budgets: list[int],
    arms_of: Callable[[str], tuple[list[str], dict[str, dict[str, object]]]],
    workers: int,
    *,
    limit: int | None = None,
    prefix: str = "",
) -> dict[tuple[str, int], pd.DataFrame]:
    """LoCoMo imported under each ttl policy (into OUT/<prefix>tasks-<policy>), then one run per budget
    (OUT/<prefix><policy>-<budget>) of the arms `arms_of(policy)` gives with their arm-config entries
    (OUT/<prefix>arms-<policy>.yaml, when there are any); returns the retention table of each (policy,
    budget). Shared by this script and `relevance_frontier.py`."""
    results: dict[tuple[str, int], pd.DataFrame] = {}
    for policy in policies:
        slug = policy.replace(" ", "-")
        tasks = out / f"{prefix}tasks-{slug}"
        import_locomo(data, tasks, parse_ttl_policy(POLICIES[policy]), limit=limit)
        arms, config = arms_of(policy)
        config_file = None
        if config:
            config_file = out / f"{prefix}arms-{slug}.yaml"
            config_file.write_text(yaml.safe_dump(config), encoding="utf-8")
        for budget in budgets:
            folder = out / f"{prefix}{slug}-{budget}"
            run(
                tasks,
                arms,
                budget_tokens=budget,
                out=folder,
                workers=workers,
                arm_config=config_file,
                report=False,
            )
            results[(policy, budget)] = retention(folder)
            print(f"done: LoCoMo, ttl {policy}, {budget} tokens", file=sys.stderr, flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/locomo10"), help="LoCoMo folder")
    parser.add_argument("--out", type=Path, default=Path("runs/locomo-relevance"), help="run folders go here")
    parser.add_argument("--budgets", default="500,2000,8000", help="comma-separated token budgets")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--limit", type=int, default=None, help="only the first N conversations")
    args = parser.parse_args(argv)
    try:
        budgets = [int(part) for part in args.budgets.split(",")]
    except ValueError:
        parser.error(f"--budgets: expected comma-separated integers, got {args.budgets!r}")
    if args.out.exists() and any(args.out.iterdir()):
        parser.error(f"--out: {args.out} is not empty (remove it or choose another folder)")
    results = run_cells(
        args.data, args.out, list(POLICIES), budgets, arms_for, args.workers, limit=args.limit
    )
    print("Evidence retention on LoCoMo (share of the evidence memories injected at the question, 95% CI):")
    print()
    print("| ttl policy | budget | " + " | ".join(f"`{arm}`" for arm in ARMS) + " |")
    print("|---|---:|" + "---:|" * len(ARMS))
    for (policy, budget), table in results.items():
        cells = []
        for arm in ARMS:
            if arm not in table.index:
                cells.append("= `full-memory`")
                continue
            row = table.loc[arm]
            cells.append(f"{row['injected']:.1%} [{row['injected_lo']:.1%}, {row['injected_hi']:.1%}]")
        print(f"| {policy} | {budget:,} | " + " | ".join(cells) + " |")
    if ("none", FLOOR_BUDGET) not in results:
        return 0
    floor = results[("none", FLOOR_BUDGET)]["injected"]
    ratio = floor["amnesia-relevance"] / floor["retrieval"]
    print()
    print(
        f"floor: at {FLOOR_BUDGET:,} tokens with no ttl, relevance / retrieval = {ratio:.2f} "
        f"(needed: >= {FLOOR_SHARE})"
    )
    return 0 if ratio >= FLOOR_SHARE else 1


if __name__ == "__main__":
    sys.exit(main())
