"""`Config`: every tunable of seed 000 §6.8 (Python names, seconds, not ms) plus the switches that close the
seed's gaps. Load from a YAML or TOML file and/or `AMNESIA_*` environment variables; every error is one line
naming the file, line (YAML), field and value."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Literal, get_args

import yaml

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, published as tomli
    import tomli as tomllib

from amnesia.checks import shown
from amnesia.durations import parse_duration
from amnesia.errors import InvalidInput
from amnesia.item import CURVES

RenewOnInject = Literal["full", "used", "none"]
RENEW_MODES: tuple[str, ...] = get_args(RenewOnInject)
DecayMode = Literal["forget", "rank"]
DECAY_MODES: tuple[str, ...] = get_args(DecayMode)
InjectionOrder = Literal["strength", "relevance"]
INJECTION_ORDERS: tuple[str, ...] = get_args(InjectionOrder)
RelevanceRule = Literal["score", "gate", "fusion"]
RELEVANCE_RULES: tuple[str, ...] = get_args(RelevanceRule)
RelevanceDuplicates = Literal["keep", "demote"]
RELEVANCE_DUPLICATES: tuple[str, ...] = get_args(RelevanceDuplicates)
RelevanceRenewal = Literal["injected", "strength"]
RELEVANCE_RENEWALS: tuple[str, ...] = get_args(RelevanceRenewal)
BlockLines = Literal["full", "compact", "seed"]
BLOCK_LINES: tuple[str, ...] = get_args(BlockLines)
ENV_PREFIX = "AMNESIA_"
DEFAULT_DB_PATH = "~/.amnesia/memory.db"
MAX_CONFIG_BYTES = 1024 * 1024

_DURATION_FIELDS = {"default_ttl", "audit_retention", "sweep_interval", "untrusted_max_ttl", "lock_timeout"}
_BOOL_WORDS = {
    "1": True,
    "true": True,
    "yes": True,
    "on": True,
    "0": False,
    "false": False,
    "no": False,
    "off": False,
}


@dataclass(frozen=True)
class Config:
    default_ttl: float = 30 * 86_400.0  # seconds; used when remember() gets no ttl (0: no expiry by default)
    default_curve: str = "ebbinghaus"  # flat | linear | ebbinghaus
    decay_k: float = 3.0  # ebbinghaus tau = ttl / k
    stale_strength: float = 0.3  # below: never injected, still recallable
    forgotten_strength: float = 0.05  # below: forgotten (content deleted, audited)
    touch_multiplier: float = 1.5  # touch: s = min(1, s * multiplier + increment)
    touch_increment: float = 0.1
    max_injected_tokens: int = 2000  # hard budget of the injected block
    max_store_bytes: int = 256 * 1024  # content bytes per workspace; over it the weakest unpinned are evicted
    max_item_bytes: int = 2048
    auto_expire: bool = True  # False: no decay, no expiry — forget only when told
    decay_mode: str = "forget"  # forget (stale hidden, decayed/idle deleted) | rank (decay only re-ranks)
    audit_retention: float = 90 * 86_400.0  # audit entries older than this are pruned
    restorable: bool = (
        False  # True: the audit keeps a copy of forgotten content so restore() can plug it back
    )
    promote_after_accesses: int = 0  # 0 = off; on the N-th access the ttl is multiplied by promote_ttl_factor
    promote_ttl_factor: float = 4.0
    prompt_section_enabled: bool = True  # False: select_for_injection returns an empty block
    sweep_interval: float = (
        0.0  # for hosts that run a background sweep; 0 = off (the engine itself never does)
    )
    renew_on_inject: str = (
        "full"  # full (an injection is an access) | used (only what the answer drew on) | none
    )
    injection_order: str = "strength"  # strength (seed §6.4) | relevance (BM25 to the query + strength)
    relevance_rule: str = "score"  # relevance order: score | gate | fusion (amnesia.relevance)
    relevance_weight: float = 0.8  # rule "score": w * relevance + (1 - w) * strength
    relevance_gate: float = 0.5  # rule "gate": relevance >= this first, the strength order inside each tier
    relevance_duplicates: str = (
        "keep"  # keep | demote: of lines matching the same query terms only the strength order's first counts
    )
    relevance_renewal: str = (
        "injected"  # injected | strength: renew (renew_on_inject full) what the strength order would inject
    )
    supersede_same_subject: bool = False  # an unkeyed "<subject> is <value>" write retires the same subject's
    expiry_from_text: bool = (
        False  # a write whose text states its end ("until Friday") expires then (deadlines)
    )
    calendar_utc_offset: float = 0.0  # hours east of UTC of the calendar that expiry_from_text reads dates in
    # full ("- [id] kind · written 2d ago · text") | compact ("- text": more fits) | seed (seed §6.4:
    # "- [id] kind · 27d left · text", the budget use as the block's last line)
    block_lines: str = "full"
    untrusted_max_ttl: float = 86_400.0  # cap on the ttl of source="auto" memories
    lock_timeout: float = 10.0  # SQLite: how long to wait for another process's lock before StoreBusy
    db_path: str = DEFAULT_DB_PATH  # SQLite store location (env AMNESIA_DB also works)

    def __post_init__(self) -> None:
        # Accept what files, env vars and callers naturally give ("7d", "true", "2000") and check it.
        for spec in fields(self):
            object.__setattr__(self, spec.name, _coerce(spec.name, getattr(self, spec.name), spec.default))
        self.validate()

    def validate(self) -> None:
        _require(
            self.default_ttl >= 0, "default_ttl", self.default_ttl, "must be >= 0 (0: no expiry by default)"
        )
        _require(
            self.default_curve in CURVES, "default_curve", self.default_curve, f"expected {'|'.join(CURVES)}"
        )
        _require(self.decay_k > 0, "decay_k", self.decay_k, "must be > 0")
        _require(
            0 < self.forgotten_strength < 1, "forgotten_strength", self.forgotten_strength, "must be in (0,1)"
        )
        _require(
            self.forgotten_strength < self.stale_strength < 1,
            "stale_strength",
            self.stale_strength,
            "must be in (forgotten_strength, 1)",
        )
        _require(self.touch_multiplier >= 1, "touch_multiplier", self.touch_multiplier, "must be >= 1")
        _require(0 <= self.touch_increment <= 1, "touch_increment", self.touch_increment, "must be in [0,1]")
        _require(
            self.max_injected_tokens >= 0, "max_injected_tokens", self.max_injected_tokens, "must be >= 0"
        )
        _require(self.max_item_bytes > 0, "max_item_bytes", self.max_item_bytes, "must be > 0")
        _require(
            self.max_store_bytes >= self.max_item_bytes,
            "max_store_bytes",
            self.max_store_bytes,
            "must be >= max_item_bytes",
        )
        _require(self.decay_mode in DECAY_MODES, "decay_mode", self.decay_mode, "expected forget|rank")
        _require(self.audit_retention > 0, "audit_retention", self.audit_retention, "must be > 0")
        _require(
            self.promote_after_accesses >= 0, "promote_after_accesses", self.promote_after_accesses, ">= 0"
        )
        _require(self.promote_ttl_factor >= 1, "promote_ttl_factor", self.promote_ttl_factor, "must be >= 1")
        _require(self.sweep_interval >= 0, "sweep_interval", self.sweep_interval, "must be >= 0")
        _require(
            self.renew_on_inject in RENEW_MODES, "renew_on_inject", self.renew_on_inject, "full|used|none"
        )
        _require(
            self.injection_order in INJECTION_ORDERS,
            "injection_order",
            self.injection_order,
            "expected strength|relevance",
        )
        _require(
            self.relevance_rule in RELEVANCE_RULES,
            "relevance_rule",
            self.relevance_rule,
            "expected score|gate|fusion",
        )
        _require(
            0 <= self.relevance_weight <= 1, "relevance_weight", self.relevance_weight, "must be in [0,1]"
        )
        _require(0 < self.relevance_gate <= 1, "relevance_gate", self.relevance_gate, "must be in (0,1]")
        _require(
            self.relevance_duplicates in RELEVANCE_DUPLICATES,
            "relevance_duplicates",
            self.relevance_duplicates,
            "expected keep|demote",
        )
        _require(
            self.relevance_renewal in RELEVANCE_RENEWALS,
            "relevance_renewal",
            self.relevance_renewal,
            "expected injected|strength",
        )
        _require(
            self.block_lines in BLOCK_LINES, "block_lines", self.block_lines, "expected full|compact|seed"
        )
        _require(
            -12 <= self.calendar_utc_offset <= 14,
            "calendar_utc_offset",
            self.calendar_utc_offset,
            "must be in [-12, 14] hours",
        )
        _require(self.untrusted_max_ttl > 0, "untrusted_max_ttl", self.untrusted_max_ttl, "must be > 0")
        _require(self.lock_timeout > 0, "lock_timeout", self.lock_timeout, "must be > 0")
        _require(bool(self.db_path), "db_path", self.db_path, "must not be empty")

    @classmethod
    def from_mapping(
        cls, data: Mapping[str, Any], *, base: Config | None = None, origin: str = "config"
    ) -> Config:
        """Build from plain values (strings allowed, e.g. env or CLI); `origin` prefixes error messages."""
        known = {f.name for f in fields(cls)}
        for name in data:
            if name not in known:
                raise InvalidInput(f"{origin}: {shown(name)}: unknown config key")
        try:
            return replace(base or cls(), **data)
        except InvalidInput as error:
            raise InvalidInput(f"{origin}: {error}") from None

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, base: Config | None = None) -> Config:
        """YAML (.yaml/.yml) or TOML (.toml). A TOML file may nest the keys under [amnesia]."""
        file = Path(path)
        try:
            size = file.stat().st_size
            if size > MAX_CONFIG_BYTES:  # a config is a few lines; a huge file is a mistake or an attack
                raise InvalidInput(
                    f"{shown(file)}: config file is {size} bytes, over the {MAX_CONFIG_BYTES}-byte limit"
                )
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise InvalidInput(
                f"{shown(file)}: cannot read config file ({error.__class__.__name__})"
            ) from None
        if file.suffix.lower() == ".toml":
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as error:
                raise InvalidInput(f"{shown(file)}: invalid TOML: {error}") from None
            data = data.get("amnesia", data)
            return cls.from_mapping(_as_mapping(data, shown(file)), base=base, origin=shown(file))
        return cls._from_yaml(text, file, base)

    @classmethod
    def _from_yaml(cls, text: str, file: Path, base: Config | None) -> Config:
        try:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f"{shown(file)}:{mark.line + 1}" if mark else shown(file)
            problem = str(getattr(error, "problem", None) or error).splitlines()[0]
            raise InvalidInput(f"{where}: invalid YAML: {problem}") from None
        return cls._from_yaml_node(node, file, base)

    @classmethod
    def _from_yaml_node(cls, node: yaml.Node | None, file: Path, base: Config | None) -> Config:
        if node is None:
            return base or cls()
        if not isinstance(node, yaml.MappingNode):
            raise InvalidInput(f"{shown(file)}:{node.start_mark.line + 1}: expected a mapping of config keys")
        for key_node, value_node in node.value:  # a shared file keeps its keys under `amnesia:`
            if key_node.value == "amnesia" and isinstance(value_node, yaml.MappingNode):
                return cls._from_yaml_node(value_node, file, base)
        config = base or cls()
        for key_node, value_node in node.value:
            origin = f"{shown(file)}:{key_node.start_mark.line + 1}"
            if not isinstance(key_node, yaml.ScalarNode):
                raise InvalidInput(f"{origin}: config keys must be plain names")
            try:
                value = yaml.safe_load(yaml.serialize(value_node))
            except yaml.YAMLError:
                raise InvalidInput(f"{origin}: {shown(key_node.value)}: unreadable YAML value") from None
            config = cls.from_mapping({key_node.value: value}, base=config, origin=origin)
        return config

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, base: Config | None = None) -> Config:
        """`AMNESIA_DEFAULT_TTL=7d`, `AMNESIA_RESTORABLE=true`, ...; `AMNESIA_DB` sets db_path. Other
        AMNESIA_* names that are not config keys (e.g. AMNESIA_CONFIG) are ignored."""
        env = os.environ if environ is None else environ
        known = {f.name for f in fields(cls)}
        data: dict[str, Any] = {}
        for name, value in env.items():
            if not name.startswith(ENV_PREFIX):
                continue
            key = name[len(ENV_PREFIX) :].lower()
            if key == "db":
                key = "db_path"
            if key in known:
                data[key] = value
        config = base or cls()
        for key, value in data.items():
            config = cls.from_mapping({key: value}, base=config, origin=f"env {ENV_PREFIX}{key.upper()}")
        return config

    @classmethod
    def load(
        cls, path: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
    ) -> Config:
        """Defaults, then the file (`path` or env AMNESIA_CONFIG), then environment variables."""
        env = os.environ if environ is None else environ
        file = path or env.get(f"{ENV_PREFIX}CONFIG")
        config = cls.from_file(file) if file else cls()
        return cls.from_env(env, base=config)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _require(ok: bool, name: str, value: Any, problem: str) -> None:
    if not ok:
        raise InvalidInput(f"{name}: {problem}, got {value!r}")


def _as_mapping(data: Any, origin: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise InvalidInput(f"{origin}: expected a mapping of config keys")
    return data


def _coerce(name: str, raw: Any, current: Any) -> Any:
    """`raw` converted to the type of the field's default `current`, or a one-line InvalidInput."""

    def bad(expected: str) -> InvalidInput:
        return InvalidInput(f"{name}: expected {expected}, got {raw!r}")

    if name in _DURATION_FIELDS:
        try:
            return parse_duration(raw, field=name)
        except ValueError as error:
            raise InvalidInput(str(error)) from None
    if isinstance(current, bool):
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in _BOOL_WORDS:
            return _BOOL_WORDS[raw.strip().lower()]
        raise bad("true or false")
    if isinstance(current, int):
        if isinstance(raw, bool):
            raise bad("an integer")
        try:
            number = int(raw) if not isinstance(raw, float) or raw.is_integer() else None
        except (TypeError, ValueError, OverflowError):
            number = None
        if number is None:
            raise bad("an integer")
        return number
    if isinstance(current, float):
        if isinstance(raw, bool):
            raise bad("a number")
        try:
            number = float(raw)
        except (TypeError, ValueError):
            raise bad("a number") from None
        if not math.isfinite(number):
            raise bad("a finite number")
        return number
    if not isinstance(raw, str):
        raise bad("a string")
    return raw
