"""The relevance ranking rules side by side (issue 18): stale values brought back on generated task sets, and
LoCoMo evidence retention, for every candidate rule of `injection_order: relevance`.

Candidates (engine options `relevance_rule`, `relevance_weight`, `relevance_gate`; amnesia.relevance):
`score` — w · relevance + (1 − w) · strength, for several w; `gate` — relevance ≥ tau first, the strength
order inside each tier; `fusion` — reciprocal rank fusion of the relevance and strength ranks (k = 60); and
with `relevance_duplicates: demote` (`-demote`: of the lines that match the same query terms, only the
strength order's first keeps its relevance). Candidates that change the store's history instead: `-used`
(`renew_on_inject: used`: only what the answer drew on is renewed), `-renew-strength` (`relevance_renewal:
strength`: what the strength order would inject is renewed), `-subject` (`supersede_same_subject`: an
unkeyed "<subject> is <value>" write retires the older statements of that subject) and `-text`
(`expiry_from_text`: a memory whose text states its end, "until Friday", expires then).

The runs go through `amnesia-bench sweep` (amnesia_bench.sweep): the script writes each part's sweep file and
the candidates' arm config into --out and runs them there (OUT/<part>.yaml, OUT/<part>/points/pNNN), then
reads the point folders. Part 1, per task set in --sets (e.g. the folders of `amnesia-bench generate --group
mixed --n 150 --seed 5`): a grid over the sets and budgets with `amnesia` (strength order) and every
candidate, scripted model, seed 0, and per candidate the probes whose injected block asserts a stale value
that the strength order's block does not ("brought back", as `relevance_harmful.py` counts them). Part 2,
unless --no-locomo: LoCoMo imported under the ttl policies of docs/results-locomo/relevance-*.yaml, every
candidate and `retrieval` at each --locomo-budgets, evidence retention pooled over all questions (with no
ttl the candidates run with `auto_expire: false`, as there). Prints both tables in markdown and, when both
parts ran, each candidate's eligibility under docs/engine.md's pre-stated rule.

    python benchmarks/relevance_frontier.py --sets /tmp/g/mixed-5 /tmp/g/harmful-5 --out /tmp/frontier
    python benchmarks/relevance_frontier.py --sets tasks/harmful --no-locomo --out /tmp/frontier-shipped

Exits 0 (a measurement, not a gate: `relevance_harmful.py` is the gate).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import yaml
from relevance_harmful import BUDGETS, probe_outcomes, sweep_points

from reports.evidence import evidence_table
from reports.logread import load_runs
from tasks.importers.common import parse_ttl_policy
from tasks.importers.locomo import import_locomo

# LoCoMo's written-ttl policies, as in docs/results-locomo/relevance-*.yaml (none: no ttl, so the candidates
# run with `auto_expire: false`)
POLICIES = {"none": "none", "30 days": "fixed:30d", "by kind": "by-kind:fact=90d,episode=14d"}
# The eligibility floor (docs/engine.md): at FLOOR_BUDGET tokens with no ttl, a candidate keeps at least
# FLOOR_SHARE of `retrieval`'s evidence retention.
FLOOR_SHARE = 0.95
FLOOR_BUDGET = 2000

DEMOTE = {"relevance_duplicates": "demote"}
RENEW_BY_STRENGTH = {"relevance_renewal": "strength"}
SAME_SUBJECT = {"supersede_same_subject": True}
TEXT_EXPIRY = {"expiry_from_text": True}
CANDIDATES: dict[str, dict[str, object]] = {
    "score-0.8": {"relevance_rule": "score", "relevance_weight": 0.8},
    "score-0.5": {"relevance_rule": "score", "relevance_weight": 0.5},
    "score-0.2": {"relevance_rule": "score", "relevance_weight": 0.2},
    "score-0.05": {"relevance_rule": "score", "relevance_weight": 0.05},
    "gate-0.25": {"relevance_rule": "gate", "relevance_gate": 0.25},
    "gate-0.5": {"relevance_rule": "gate", "relevance_gate": 0.5},
    "gate-0.75": {"relevance_rule": "gate", "relevance_gate": 0.75},
    "fusion": {"relevance_rule": "fusion"},
    "score-0.8-demote": {"relevance_rule": "score", "relevance_weight": 0.8, **DEMOTE},
    "score-0.2-demote": {"relevance_rule": "score", "relevance_weight": 0.2, **DEMOTE},
    "score-0.05-demote": {"relevance_rule": "score", "relevance_weight": 0.05, **DEMOTE},
    "gate-0.5-demote": {"relevance_rule": "gate", "relevance_gate": 0.5, **DEMOTE},
    "fusion-demote": {"relevance_rule": "fusion", **DEMOTE},
    # Routes that change the store's history rather than one selection's order (after the rules above gave
    # no eligible candidate): what is renewed, and supersession of unkeyed restatements.
    "score-0.8-used": {"relevance_rule": "score", "relevance_weight": 0.8, "renew_on_inject": "used"},
    "score-0.8-renew-strength": {"relevance_rule": "score", "relevance_weight": 0.8, **RENEW_BY_STRENGTH},
    "score-0.8-subject": {"relevance_rule": "score", "relevance_weight": 0.8, **SAME_SUBJECT},
    "score-0.05-subject": {"relevance_rule": "score", "relevance_weight": 0.05, **SAME_SUBJECT},
    "score-0.8-subject-renew-strength": {
        "relevance_rule": "score",
        "relevance_weight": 0.8,
        **SAME_SUBJECT,
        **RENEW_BY_STRENGTH,
    },
    # A memory whose text states its end ("until Friday") expires then (after supersession left only lapsed
    # constraints brought back).
    "score-0.8-text": {"relevance_rule": "score", "relevance_weight": 0.8, **TEXT_EXPIRY},
    "score-0.8-subject-text": {
        "relevance_rule": "score",
        "relevance_weight": 0.8,
        **SAME_SUBJECT,
        **TEXT_EXPIRY,
    },
}


def arm_entries(names: list[str], extra: dict[str, object]) -> dict[str, dict[str, object]]:
    """Each candidate as `rel-<name>` on the `amnesia-relevance` preset, with `extra` options."""
    return {
        f"rel-{name}": {"base": "amnesia-relevance", "options": {**CANDIDATES[name], **extra}}
        for name in names
    }


def arm_config(path: Path, names: list[str], extra: dict[str, object]) -> str:
    """An arm-config file defining each candidate (`arm_entries`); its path as a string, for a sweep file."""
    path.write_text(yaml.safe_dump(arm_entries(names, extra)), encoding="utf-8")
    return str(path)


def brought_back(sets: list[Path], budgets: list[int], names: list[str], out: Path, workers: int) -> dict:
    """{(candidate, set name): [brought back at each budget]}."""
    spec = {
        "arms": ["amnesia", *(f"rel-{name}" for name in names)],
        "arm_config": arm_config(out / "arms.yaml", names, {}),
        "grid": {"tasks": [str(tasks) for tasks in sets], "budget": budgets},
    }
    folders = sweep_points(out, "sets", spec, workers) if sets else {}
    counts: dict[tuple[str, str], list[int]] = {}
    for tasks in sets:
        for budget in budgets:
            folder = folders[(str(tasks), budget)]
            strength = probe_outcomes(folder, "amnesia")
            for name in names:
                relevance = probe_outcomes(folder, f"rel-{name}")
                back = sum(relevance[p][1] and not strength[p][1] for p in strength)
                counts.setdefault((name, tasks.name), []).append(back)
    return counts


def retention(run_dir: Path) -> pd.DataFrame:
    """Evidence retention (injected share, CI) per arm over all questions of one run."""
    table = evidence_table(load_runs([run_dir]))
    return table[table["mechanism"] == "all"].set_index("arm")


def locomo(
    data: Path, policies: list[str], budgets: list[int], names: list[str], out: Path, workers: int
) -> dict:
    """{(policy, budget): retention table indexed by arm}: `retrieval` and every candidate (with no ttl
    the candidates run with `auto_expire: false`): one sweep with no ttl, one over the ttl'd task sets."""
    arms = ["retrieval", *(f"rel-{name}" for name in names)]
    tasks = {policy: out / f"locomo-tasks-{policy.replace(' ', '-')}" for policy in policies}
    for policy, folder in tasks.items():
        import_locomo(data, folder, parse_ttl_policy(POLICIES[policy]))
    folders: dict[tuple[str, int], Path] = {}
    if "none" in policies:
        config = arm_config(out / "arms-none.yaml", names, {"auto_expire": False})
        spec = {"tasks": str(tasks["none"]), "arms": arms, "arm_config": config, "grid": {"budget": budgets}}
        folders |= sweep_points(out, "locomo-none", spec, workers)
    ttl = [str(tasks[policy]) for policy in policies if policy != "none"]
    if ttl:
        config = arm_config(out / "arms.yaml", names, {})
        spec = {"arms": arms, "arm_config": config, "grid": {"tasks": ttl, "budget": budgets}}
        folders |= sweep_points(out, "locomo-ttl", spec, workers)
    return {
        (policy, budget): retention(folders[(str(tasks[policy]), budget)])
        for policy in policies
        for budget in budgets
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=Path, nargs="*", default=[], help="task folders")
    parser.add_argument("--budgets", default=BUDGETS, help="comma-separated token budgets for --sets")
    parser.add_argument("--candidates", default=",".join(CANDIDATES), help="comma-separated candidate names")
    parser.add_argument("--data", type=Path, default=Path("../shared/data/locomo10"), help="LoCoMo folder")
    parser.add_argument("--locomo-budgets", default="500,2000,8000")
    parser.add_argument("--locomo-policies", default=",".join(POLICIES), help="of: " + ", ".join(POLICIES))
    parser.add_argument("--no-locomo", action="store_true", help="the task sets only")
    parser.add_argument("--out", type=Path, required=True, help="run folders go here (must be new or empty)")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    names = args.candidates.split(",")
    if unknown := [name for name in names if name not in CANDIDATES]:
        parser.error(f"--candidates: unknown {unknown[0]!r} (known: {', '.join(CANDIDATES)})")
    try:
        budgets = [int(part) for part in args.budgets.split(",")]
        locomo_budgets = [int(part) for part in args.locomo_budgets.split(",")]
    except ValueError:
        parser.error("--budgets / --locomo-budgets: expected comma-separated integers")
    if args.out.exists() and any(args.out.iterdir()):
        parser.error(f"--out: {args.out} is not empty (remove it or choose another folder)")
    args.out.mkdir(parents=True, exist_ok=True)
    counts = brought_back(args.sets, budgets, names, args.out, args.workers)
    policies = args.locomo_policies.split(",")
    if unknown := [policy for policy in policies if policy not in POLICIES]:
        parser.error(f"--locomo-policies: unknown {unknown[0]!r}")
    retained = (
        {} if args.no_locomo else locomo(args.data, policies, locomo_budgets, names, args.out, args.workers)
    )

    print(f"Stale values brought back (probes; budgets {args.budgets}; scripted model, seed 0):")
    print()
    print("| candidate | " + " | ".join(f"`{s.name}`" for s in args.sets) + " | all sets | per budget |")
    print("|---|" + "---:|" * len(args.sets) + "---:|---|")
    for name in names:
        per_set = [sum(counts[(name, s.name)]) for s in args.sets]
        per_budget = [sum(counts[(name, s.name)][i] for s in args.sets) for i in range(len(budgets))]
        cells = " | ".join(str(n) for n in per_set)
        print(f"| `{name}` | {cells} | {sum(per_set)} | {' / '.join(map(str, per_budget))} |")
    if not retained:
        return 0
    print()
    print("LoCoMo evidence retention (share of the evidence memories injected at the question):")
    print()
    cells_of = list(retained)
    header = " | ".join(f"{policy} {budget:,}" for policy, budget in cells_of)
    print(f"| arm | {header} | mean | none {FLOOR_BUDGET:,} / `retrieval` |")
    print("|---|" + "---:|" * (len(cells_of) + 2))
    floor = retained.get(("none", FLOOR_BUDGET))
    for arm in ["retrieval", *(f"rel-{name}" for name in names)]:
        shares = [float(retained[cell].loc[arm, "injected"]) for cell in cells_of]
        ratio = (
            "" if floor is None else f"{floor.loc[arm, 'injected'] / floor.loc['retrieval', 'injected']:.2f}"
        )
        mean = sum(shares) / len(shares)
        print(f"| `{arm}` | " + " | ".join(f"{x:.1%}" for x in shares) + f" | {mean:.1%} | {ratio} |")
    if floor is not None and args.sets:  # eligibility needs both parts
        print()
        for name in names:
            back = sum(sum(counts[(name, s.name)]) for s in args.sets)
            share = floor.loc[f"rel-{name}", "injected"] / floor.loc["retrieval", "injected"]
            eligible = back == 0 and share >= FLOOR_SHARE
            verdict = "eligible" if eligible else "not eligible"
            print(f"{name}: brought back {back}, LoCoMo floor ratio {share:.2f}: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
