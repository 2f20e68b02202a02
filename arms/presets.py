"""Named configurations of the `amnesia` arm that mirror the forgetting semantics of known systems (no
new code paths: each preset is the engine with a few Config switches, so a difference in a run is the
policy alone).

- `amnesia-hard-ttl` — Redis `EXPIRE` / cachetools `TTLCache`: a flat curve (full strength until the
  deadline) and no renewal on read (`renew_on_inject: none`): an item disappears exactly one ttl after
  it was written.
- `amnesia-sliding-ttl` — LangGraph store with `refresh_on_read`: a flat curve, and every injection is
  a read that restarts the ttl (`renew_on_inject: full`).
- `amnesia-rank-decay` — mem0 platform's decay, which re-ranks and does not hide: an Ebbinghaus curve
  with `decay_mode: rank`, so a decayed item is ranked lower but still injected, and nothing is forgotten
  by time alone (past its ttl it keeps decaying instead of being deleted).
- `amnesia-keep-all-oracle-key` — keep everything (no decay, no expiry) plus supersession by the task's
  `key` (`use_keys: true`): what an LLM-judged update ("does this replace that?") achieves at best."""

from __future__ import annotations

from arms.registry import register_variant

PRESETS: dict[str, dict[str, object]] = {
    "amnesia-hard-ttl": {"default_curve": "flat", "renew_on_inject": "none"},
    "amnesia-sliding-ttl": {"default_curve": "flat", "renew_on_inject": "full"},
    "amnesia-rank-decay": {"default_curve": "ebbinghaus", "decay_mode": "rank"},
    "amnesia-keep-all-oracle-key": {"auto_expire": False, "use_keys": True},
}

for _name, _options in PRESETS.items():
    register_variant(_name, "amnesia", _options)
