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

Part 1, per task set in --sets (e.g. the folders of `amnesia-bench generate --group mixed --n 150 --seed 5`):
one run per budget with `amnesia` (strength order) and every candidate, scripted model, seed 0, and per
candidate the probes whose injected block asserts a stale value that the strength order's block does not
("brought back", as `relevance_harmful.py` counts them). Part 2, unless --no-locomo: LoCoMo imported under
the ttl policies of `locomo_relevance.py`, every candidate and `retrieval` at each --locomo-budgets, evidence
retention pooled over all questions (with no ttl the candidates run with `auto_expire: false`, as there).
Prints both tables in markdown and, when both parts ran, each candidate's eligibility under docs/engine.md's
pre-stated rule.

    python benchmarks/relevance_frontier.py --sets /tmp/g/mixed-5 /tmp/g/harmful-5 --out /tmp/frontier
    python benchmarks/relevance_frontier.py --sets tasks/harmful --no-locomo --out /tmp/frontier-shipped

Exits 0 (a measurement, not a gate: `relevance_harmful.py` and `locomo_relevance.py` are the gates).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml
from locomo_relevance import FLOOR_BUDGET, FLOOR_SHARE, POLICIES, run_cells
from relevance_harmful import BUDGETS, probe_outcomes

from amnesia_bench.api import run

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


def arm_config(folder: Path, names: list[str]) -> Path:
    """An arm-config file defining each candidate (`arm_entries`)."""
    path = folder / "arms.yaml"
    path.write_text(yaml.safe_dump(arm_entries(names, {})), encoding="utf-8")
    return path


def run_without_report(
    tasks: Path, arms: list[str], budget: int, folder: Path, workers: int, config: Path
) -> None:
    """Run `arms` on `tasks` at `budget` tokens into `folder`, logs only."""
    run(tasks, arms, budget_tokens=budget, out=folder, workers=workers, arm_config=config, report=False)


def brought_back(sets: list[Path], budgets: list[int], names: list[str], out: Path, workers: int) -> dict:
    """{(candidate, set name): [brought back at each budget]}."""
    config = arm_config(out, names)
    counts: dict[tuple[str, str], list[int]] = {}
    for tasks in sets:
        for budget in budgets:
            folder = out / f"{tasks.name}-{budget}"
            arms = ["amnesia", *(f"rel-{name}" for name in names)]
            run_without_report(tasks, arms, budget, folder, workers, config)
            strength = probe_outcomes(folder, "amnesia")
            for name in names:
                relevance = probe_outcomes(folder, f"rel-{name}")
                back = sum(relevance[p][1] and not strength[p][1] for p in strength)
                counts.setdefault((name, tasks.name), []).append(back)
            print(f"done: {tasks.name} at {budget} tokens", file=sys.stderr, flush=True)
    return counts


def locomo(
    data: Path, policies: list[str], budgets: list[int], names: list[str], out: Path, workers: int
) -> dict:
    """{(policy, budget): retention table indexed by arm}: `retrieval` and every candidate (with no ttl
    the candidates run with `auto_expire: false`)."""

    def arms_of(policy: str) -> tuple[list[str], dict[str, dict[str, object]]]:
        extra: dict[str, object] = {"auto_expire": False} if policy == "none" else {}
        return ["retrieval", *(f"rel-{name}" for name in names)], arm_entries(names, extra)

    return run_cells(data, out, policies, budgets, arms_of, workers, prefix="locomo-")


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
