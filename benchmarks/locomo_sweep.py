"""The LoCoMo budget sweep: evidence retention and memory-block tokens per question at budgets from 500 to
8,000 tokens, for full memory, Amnesia under task-free ttls, retrieval and claims (issue 14).

    python benchmarks/locomo_sweep.py --data ../shared/data/locomo10 --out docs/results-locomo

Imports LoCoMo with no written ttls (`--ttl-policy none`: every write takes the arm's own default, so the
Amnesia arms run on ttls the dataset never saw), runs every arm at every budget with the scripted model (the
metric is model-free), and writes `sweep.csv` (one row per arm × budget × mechanism, with 95% CIs clustered by
conversation), `sweep.md` (the tables) and `figures/evidence_vs_budget.png|svg`, updated after each budget
(rows of other arm × budget cells already in OUT/sweep.csv are kept, so budgets and arms may be swept by
separate processes: `--budgets 500,1000` and `--budgets 8000,4000`, `--arms claims`). Each budget's run
folder is deleted once read (logs run to ~40 MB per arm and budget); pass --keep to keep them.
"""

from __future__ import annotations

import argparse
import fcntl
import shutil
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from amnesia.tokens import count_tokens  # noqa: E402
from amnesia_bench.api import load_run, run  # noqa: E402
from reports.evidence import evidence_table  # noqa: E402
from tasks.importers.common import parse_ttl_policy  # noqa: E402
from tasks.importers.locomo import import_locomo, load_samples  # noqa: E402

BUDGETS = (500, 1000, 2000, 4000, 8000)
# Run-local arms: Amnesia with task-free ttl policies (the arm's `ttl_policy: fixed:<d>` gives every write the
# same ttl, whatever the task wrote; the imported writes carry none anyway), on the default ebbinghaus curve.
ARM_CONFIG = """\
amnesia-fixed-30d:
  base: amnesia
  options: {ttl_policy: fixed:30d}
amnesia-fixed-90d:
  base: amnesia
  options: {ttl_policy: fixed:90d}
amnesia-fixed-365d:
  base: amnesia
  options: {ttl_policy: fixed:365d}
"""
ARMS = ("full-memory", "amnesia-fixed-30d", "amnesia-fixed-90d", "amnesia-fixed-365d", "retrieval", "claims")


def dataset_tokens(data: Path) -> pd.DataFrame:
    """Per conversation: tokens of the raw dialog (every turn's text) and of its observations, by this
    project's token counter — the size the anchors' "full context" corresponds to."""
    rows = []
    for sample_id, sample in load_samples(data)[0]:
        dialog = [
            turn.get("text", "")
            for key, turns in sample.items()
            if key.startswith("session_") and key.split("_")[-1].isdigit() and isinstance(turns, list)
            for turn in turns
        ]
        observations = [
            line[0]
            for key, speakers in sample.items()
            if key.endswith("_observation") and isinstance(speakers, dict)
            for lines in speakers.values()
            for line in lines
        ]
        rows.append(
            {
                "conversation": sample_id,
                "questions": len(sample.get("qa", [])),
                "dialog_tokens": sum(count_tokens(text) for text in dialog),
                "observation_tokens": sum(count_tokens(text) for text in observations),
            }
        )
    return pd.DataFrame(rows).sort_values("conversation")


def sweep(
    data: Path,
    work: Path,
    budgets: tuple[int, ...],
    keep: bool,
    out: Path,
    workers: int,
    arms: tuple[str, ...],
) -> None:
    """Run every arm at each budget in turn; after each, merge its rows into OUT/sweep.csv and re-render."""
    tasks = work / "tasks"
    import_locomo(data, tasks, parse_ttl_policy("none"))
    config = work / "arms.yaml"
    config.write_text(ARM_CONFIG, encoding="utf-8")
    sizes = dataset_tokens(data)
    for budget in budgets:
        folder = work / f"run-{budget}"
        run(tasks, arms, out=folder, budget_tokens=budget, arm_config=config, workers=workers, report=False)
        publish(evidence_table(load_run(folder)), out, sizes)
        if not keep:
            shutil.rmtree(folder)
        print(f"budget {budget}: done", flush=True)


def publish(rows: pd.DataFrame, out: Path, sizes: pd.DataFrame) -> None:
    """Merge `rows` into OUT/sweep.csv (replacing rows of the same budgets), then rewrite sweep.md and the
    figure. Locked, so sweeps of other budgets may run at the same time into the same folder."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / ".sweep.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = out / "sweep.csv"
        if path.exists():
            earlier = pd.read_csv(path, keep_default_na=False)
            fresh = earlier.set_index(["arm", "budget_tokens"]).index.isin(
                rows.set_index(["arm", "budget_tokens"]).index
            )
            earlier = earlier[~fresh]
            rows = pd.concat([earlier, rows], ignore_index=True)
        rows = rows.sort_values(["arm", "budget_tokens", "mechanism"]).reset_index(drop=True)
        rows.to_csv(path, index=False, float_format="%.4f")
        (out / "sweep.md").write_text(markdown(rows, sizes), encoding="utf-8")
        figure(rows, out / "figures")


def _pct(row: pd.Series, name: str) -> str:
    # A column added since some rows were written reads back as text, empty in those rows (not re-run since).
    value, lo, hi = (
        pd.to_numeric(row.get(key, ""), errors="coerce") for key in (name, f"{name}_lo", f"{name}_hi")
    )
    if pd.isna(value):
        return "–"
    return f"{value * 100:.1f}% [{lo * 100:.1f}, {hi * 100:.1f}]"


def per_id_markdown(pooled: pd.DataFrame) -> list[str]:
    """The per-dialog-id table: the share of the questions' evidence ids injected, stored, forgotten, or
    carried by no memory, and the block's line overhead (tokens that are not the memories' own text)."""
    lines = [
        "| arm | budget | evidence ids injected | stored, not injected | forgotten | in no memory "
        "| line overhead of the block |",
        "|---|---|---|---|---|---|---|",
    ]
    for _, row in pooled.sort_values(["arm", "budget_tokens"]).iterrows():
        lines.append(
            f"| `{row['arm']}` | {row['budget_tokens']:,} | {_pct(row, 'id_injected')} "
            f"| {_pct(row, 'id_stored')} | {_pct(row, 'id_forgotten')} | {_pct(row, 'id_no_memory')} "
            f"| {_pct(row, 'header_tokens')} |"
        )
    return lines


def markdown(table: pd.DataFrame, sizes: pd.DataFrame) -> str:
    lines = [
        "| arm | budget | evidence injected | stored, not injected | forgotten | block tokens/question |",
        "|---|---|---|---|---|---|",
    ]
    pooled = table[table["mechanism"] == "all"]
    for _, row in pooled.sort_values(["arm", "budget_tokens"]).iterrows():
        tokens = f"{row['block_tokens']:,.0f} [{row['block_tokens_lo']:,.0f}, {row['block_tokens_hi']:,.0f}]"
        lines.append(
            f"| `{row['arm']}` | {row['budget_tokens']:,} | {_pct(row, 'injected')} | {_pct(row, 'stored')} "
            f"| {_pct(row, 'forgotten')} | {tokens} |"
        )
    lines += ["", "Per evidence (dialog) id, all question categories pooled:", "", *per_id_markdown(pooled)]
    lines += ["", "Evidence injected by question category (all budgets):", ""]
    mechanisms = sorted(m for m in table["mechanism"].unique() if m != "all")
    lines += ["| arm | budget | " + " | ".join(mechanisms) + " |", "|---|---|" + "---|" * len(mechanisms)]
    for (arm, budget), part in table.groupby(["arm", "budget_tokens"]):
        by = part.set_index("mechanism")
        cells = [f"{by.loc[m, 'injected'] * 100:.1f}%" if m in by.index else "–" for m in mechanisms]
        lines.append(f"| `{arm}` | {budget:,} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Dataset size by this project's token counter (`amnesia.tokens.count_tokens`):",
        "",
        "| conversation | questions | dialog tokens | observation tokens |",
        "|---|---|---|---|",
    ]
    for _, row in sizes.iterrows():
        lines.append(
            f"| {row['conversation']} | {row['questions']} | {row['dialog_tokens']:,} "
            f"| {row['observation_tokens']:,} |"
        )
    return "\n".join(lines) + "\n"


def figure(table: pd.DataFrame, folder: Path) -> None:
    pooled = table[table["mechanism"] == "all"].sort_values("budget_tokens")
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for arm, part in pooled.groupby("arm", sort=True):
        x = part["budget_tokens"].to_numpy()
        y = part["injected"].to_numpy() * 100
        err = [y - part["injected_lo"].to_numpy() * 100, part["injected_hi"].to_numpy() * 100 - y]
        left.errorbar(x, y, yerr=err, marker="o", capsize=3, label=arm)
        right.plot(x, part["block_tokens"].to_numpy(), marker="o", label=arm)
    for axis in (left, right):
        axis.set_xscale("log")
        axis.set_xticks(list(BUDGETS), [f"{b:,}" for b in BUDGETS])
        axis.set_xlabel("memory budget (tokens)")
        axis.grid(alpha=0.3)
    left.set_ylabel("evidence memories injected at the question (%)")
    left.set_title("Evidence retention on LoCoMo (95% CI, clustered by conversation)", fontsize=9)
    right.set_ylabel("memory block tokens per question")
    right.set_title("What it costs: block size per question", fontsize=9)
    left.legend(fontsize=7)
    fig.tight_layout()
    folder.mkdir(parents=True, exist_ok=True)
    fig.savefig(folder / "evidence_vs_budget.png", dpi=120, metadata={"Software": None})
    fig.savefig(folder / "evidence_vs_budget.svg", metadata={"Date": None})
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "locomo10")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "results-locomo")
    parser.add_argument("--budgets", default=",".join(str(b) for b in BUDGETS))
    parser.add_argument("--keep", action="store_true", help="keep the run folders (in a temp folder)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes per run")
    parser.add_argument("--arms", default=",".join(ARMS), help="a subset of the sweep's arms")
    args = parser.parse_args()
    budgets = tuple(int(b) for b in args.budgets.split(","))
    work = Path(tempfile.mkdtemp(prefix="locomo-sweep-"))
    try:
        sweep(args.data, work, budgets, args.keep, args.out, args.workers, tuple(args.arms.split(",")))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print((args.out / "sweep.md").read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
