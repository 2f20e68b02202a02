"""Query-aware injection at scale: `select_for_injection(query=...)` over 10^5 live items.

The store holds synthetic memories whose words follow a Zipf law over a 5,000-word vocabulary (so a few words
are in most memories, like real text), 10% of them in Chinese. Each query kind is timed on the same engine:
a rare word, common words, a long user message and a Chinese question. The reference in the same run is the
strength order's selection over the same items (`injection_order: strength`, no index). Checks the issue's
floor — every query's selection under 50 ms at 10^5 items — and exits 1 if one misses it.

    python benchmarks/relevance_select.py                  # 10^5 items (about a minute to write them)
    python benchmarks/relevance_select.py --size 20000     # quicker; the floor is checked only at 10^5

Seeded content, a SimulatedClock and a counter for ids: the work is identical across runs, only the timings
vary. Each timing is the best of SELECT_REPEATS calls, each after a `gc.collect()`; selections are previews
(a dry run: the same planning, nothing renewed), so every repeat sees the same store.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import random
import sys
import time
from collections.abc import Callable

from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock

SELECT_REPEATS = 5
FLOOR_MS = 50.0
FLOOR_SIZE = 100_000
VOCABULARY = 5_000
CHINESE_SHARE = 0.1
SYLLABLES = ("ka", "lo", "mi", "ren", "sto", "va", "qui", "del", "ar", "nu", "pe", "tor", "bri", "sen", "ul")
HANZI = "茶会议部署预发布北京上海周五数据库缓存预算回答法语票据客户版本测试环境迁移"
DAY = 86_400.0


def vocabulary(seed: int) -> list[str]:
    rng = random.Random(seed)
    words: dict[str, None] = {}
    while len(words) < VOCABULARY:
        words["".join(rng.choices(SYLLABLES, k=rng.randint(2, 4)))] = None
    return list(words)


def contents(size: int, seed: int, words: list[str]) -> list[str]:
    """`size` distinct memories: 8-20 Zipf-distributed words each, CHINESE_SHARE of them in Chinese."""
    rng = random.Random(seed)
    weights = [1.0 / rank for rank in range(1, len(words) + 1)]
    texts = []
    for n in range(size):
        if rng.random() < CHINESE_SHARE:
            texts.append(f"第{n}条：" + "".join(rng.choices(HANZI, k=rng.randint(8, 20))) + "。")
        else:
            texts.append(f"Note {n}: " + " ".join(rng.choices(words, weights, k=rng.randint(8, 20))) + ".")
    return texts


def queries(words: list[str]) -> dict[str, str]:
    return {
        "rare word": f"What about {words[-1]}?",
        "common words": f"Tell me about {words[0]} {words[1]} and {words[2]}.",
        "long message": "Hi! " + " ".join(words[i * 97 % len(words)] for i in range(40)) + " — recall?",
        "Chinese": "预发布环境的数据库在哪里？",
    }


def _ms(action: Callable[[], object]) -> float:
    gc.collect()
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1e3


def build(order: str, texts: list[str]) -> tuple[Amnesia, float]:
    """An engine holding `texts` written over 30 simulated days (strengths differ), and the write time."""
    clock = SimulatedClock(0.0)
    counter = itertools.count()
    config = Config(max_store_bytes=len(texts) * 4_096, injection_order=order, default_ttl=365 * DAY)
    engine = Amnesia(
        store=InMemoryStore(secret=b"relevance-benchmark-audit-key!!!"),
        config=config,
        clock=clock,
        id_factory=lambda: f"m-{next(counter):012x}",
    )
    step = 30 * DAY / max(1, len(texts))

    def write_all() -> None:
        for text in texts:
            engine.remember(text)
            clock.advance(step)

    return engine, _ms(write_all)


def best_ms(action: Callable[[], object]) -> float:
    return min(_ms(action) for _ in range(SELECT_REPEATS))


def reference(texts: list[str], budget: int) -> tuple[float, float]:
    """The strength order over the same items: (selection ms, write ms); the engine is dropped after."""
    engine, write_ms = build("strength", texts)
    return best_ms(lambda: engine.preview(budget)), write_ms


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=FLOOR_SIZE, help="live items")
    parser.add_argument("--budget", type=int, default=2_000, help="token budget of the block")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    if args.size < 1:
        parser.error(f"--size: expected a positive integer, got {args.size}")
    words = vocabulary(args.seed)
    texts = contents(args.size, args.seed, words)
    strength_ms, reference_write = reference(texts, args.budget)
    engine, relevance_write = build("relevance", texts)
    index = engine._index.relevance
    assert index is not None
    postings = sum(len(holders) for holders in index.postings.values())
    print(
        f"{args.size:,} live items, budget {args.budget} tokens; index: {len(index.postings):,} terms, "
        f"{postings:,} postings"
    )
    print(
        f"writing them: strength order {reference_write / 1e3:.1f} s, relevance order "
        f"{relevance_write / 1e3:.1f} s (index maintained on write)"
    )
    print()
    print("| query | selection ms | × strength order | items injected |")
    print("|---|---:|---:|---:|")
    print(f"| (strength order, reference) | {strength_ms:.1f} | 1.00 | |")
    failures = []
    for label, query in queries(words).items():
        elapsed = best_ms(lambda q=query: engine.preview(args.budget, query=q))
        plan = engine.preview(args.budget, query=query)
        assert plan.order == "relevance", label
        print(f"| {label} | {elapsed:.1f} | {elapsed / strength_ms:.2f} | {len(plan.items)} |")
        if args.size >= FLOOR_SIZE and elapsed >= FLOOR_MS:
            failures.append(f"{label}: {elapsed:.1f} ms over {args.size:,} items (floor {FLOOR_MS:.0f} ms)")
    for failure in failures:
        print(f"FLOOR MISSED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
