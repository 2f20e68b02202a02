"""The credential filter measured like a detector, side by side with detect-secrets on the same texts.

    python benchmarks/secret_filter.py
    python benchmarks/secret_filter.py --samples 20000 --show-misses

The corpus is tests/data/secret_corpus.jsonl: synthetic values in the formats public rule sets describe
(gitleaks, detect-secrets, GitHub secret scanning), and benign look-alikes (prose about passwords and keys,
hashes, UUIDs, floats, timestamps, order ids, Chinese text...). Printed for each detector: recall (secrets
refused), false refusals (look-alikes refused), the formats missed and the look-alikes refused, and the share
of seeded random floats (`str(random())`) and 19-digit nanosecond timestamps refused.

detect-secrets (`pip install detect-secrets`) runs with its default plugins and filters, two ways: as it
scans a file (each text written to its own `memory.txt`; its entropy plugins then look only at quoted
strings), and as its ad-hoc string scan (`scan_line`, every word checked for entropy). It has no rule for
card numbers, one-time codes or PINs: those count as misses, as they would for a user. Without the package,
only the engine's filter is measured.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from amnesia.safety import find_secret_rule

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "secret_corpus.jsonl"
SEED = 20261205

Detector = Callable[[str], bool]


@dataclass(frozen=True)
class Score:
    """One detector's results on the corpus and on the seeded numbers."""

    name: str
    missed: list[str]  # formats of the secrets not refused
    refused: list[str]  # formats of the look-alikes refused
    secrets: int
    benign: int
    floats_refused: float  # share of the random floats refused
    timestamps_refused: float  # share of the 19-digit timestamps refused

    @property
    def recall(self) -> float:
        return 1 - len(self.missed) / self.secrets

    @property
    def false_refusals(self) -> float:
        return len(self.refused) / self.benign


def load_corpus(path: Path = CORPUS) -> list[dict[str, str]]:
    """The labelled cases, one JSON object a line: text, label (secret | benign), format, note."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def score(name: str, detect: Detector, cases: list[dict[str, str]], samples: int) -> Score:
    rng = random.Random(SEED)
    floats = [str(rng.random()) for _ in range(samples)]
    timestamps = [str(rng.randrange(10**18, 10**19)) for _ in range(samples)]
    return Score(
        name=name,
        missed=[case["format"] for case in cases if case["label"] == "secret" and not detect(case["text"])],
        refused=[case["format"] for case in cases if case["label"] == "benign" and detect(case["text"])],
        secrets=sum(case["label"] == "secret" for case in cases),
        benign=sum(case["label"] == "benign" for case in cases),
        floats_refused=sum(map(detect, floats)) / samples,
        timestamps_refused=sum(map(detect, timestamps)) / samples,
    )


def detect_secrets_detectors(folder: Path) -> list[tuple[str, Detector]]:
    """detect-secrets' file scan and ad-hoc string scan, or nothing when it is not installed."""
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        return []
    memory_file = folder / "memory.txt"

    def file_scan(text: str) -> bool:
        memory_file.write_text(text, encoding="utf-8")
        with default_settings():
            found = SecretsCollection()
            found.scan_file(str(memory_file))
        return bool(list(found))

    def adhoc_scan(text: str) -> bool:
        with default_settings():
            return any(True for line in text.splitlines() for _ in scan_line(line))

    return [("detect-secrets (file scan)", file_scan), ("detect-secrets (scan_line)", adhoc_scan)]


def table(scores: list[Score]) -> str:
    lines = [
        "| detector | recall | false refusals | random floats refused | 19-digit timestamps refused |",
        "|---|---:|---:|---:|---:|",
    ]
    for result in scores:
        lines.append(
            f"| {result.name} | {result.recall:.1%} ({result.secrets - len(result.missed)}/{result.secrets}) "
            f"| {result.false_refusals:.1%} ({len(result.refused)}/{result.benign}) "
            f"| {result.floats_refused:.2%} | {result.timestamps_refused:.2%} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5000, help="random floats and timestamps each")
    parser.add_argument("--show-misses", action="store_true", help="list every detector's misses")
    args = parser.parse_args(argv)
    cases = load_corpus()
    formats = {case["label"]: set() for case in cases}
    for case in cases:
        formats[case["label"]].add(case["format"])
    print(
        f"corpus: {len(cases)} texts, {len(formats['secret'])} secret formats, "
        f"{len(formats['benign'])} look-alike kinds ({CORPUS.relative_to(ROOT)})"
    )
    with tempfile.TemporaryDirectory() as folder:
        detectors = [("amnesia", lambda text: find_secret_rule(text) is not None)]
        detectors += detect_secrets_detectors(Path(folder))
        scores = [score(name, detect, cases, args.samples) for name, detect in detectors]
    if len(scores) == 1:
        print("detect-secrets is not installed (pip install detect-secrets): measuring the engine only")
    print(table(scores))
    for result in scores:
        if result is scores[0] or args.show_misses:
            print(f"{result.name}: missed {', '.join(result.missed) or 'none'}")
            print(f"{result.name}: refused {', '.join(result.refused) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
