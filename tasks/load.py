"""Load and validate YAML task sets (format: tasks/README.md) into `tasks.spec.Task`.

Validation reports ALL problems, each as `file:line: field: problem`, with line numbers from the YAML node
marks. Files are read defensively: a size cap, strict UTF-8, a nesting-depth cap checked on the event stream
before composing (libyaml's composer recurses in C), and a cap on the alias-expanded size of the document
(a "billion laughs" file is refused before anything walks it).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from amnesia.durations import parse_duration
from amnesia.tokens import has_cjk
from tasks.errors import TaskSetError
from tasks.scoring import find_mentions
from tasks.spec import (
    DEFAULT_KEEP_TURNS,
    MECHANISMS,
    NEVER,
    AutoCompactionSpec,
    CompactionSpec,
    ForgetSpec,
    ProbeSpec,
    RememberSpec,
    Session,
    Task,
    ToolEventSpec,
    Turn,
)

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 64  # task files nest about 8 deep; anything far deeper is hostile or broken
MAX_EXPANDED_NODES = 500_000  # per file, counting every alias expansion
TASK_SUFFIXES = (".yaml", ".yml")

GROUPS = ("helpful", "harmful", "mixed")
AGENTS = ("main", "sub", "team")
SOURCES = ("user", "tool", "auto")
KINDS = ("fact", "preference", "episode", "task-context")
SCOPES = ("workspace", "session")
LANGS = ("en", "zh")
TOOL_STATUSES = ("ok", "error", "open")
MAX_START = datetime(2999, 12, 31, 23, 59, 59, tzinfo=timezone.utc).timestamp()  # a task's latest `start`

_TASK_FIELDS = {
    "id",
    "group",
    "category",
    "description",
    "lang",
    "origin",
    "sessions",
    "start",
    "auto_compaction",
}
_SESSION_FIELDS = {"at", "agent", "turns", "team", "ends_team"}
_TURN_FIELDS = {"user", "remember", "forget", "probe", "tool_events", "compaction"}
_COMPACTION_FIELDS = {"keep_turns"}
_AUTO_COMPACTION_FIELDS = {"at_tokens", "keep_turns"}
_TOOL_EVENT_FIELDS = {"name", "arguments", "status", "output"}
_REMEMBER_FIELDS = {"content", "ttl", "kind", "pin", "tags", "scope", "key", "source", "refs"}
_FORGET_FIELDS = {"tags", "query", "key"}
_PROBE_FIELDS = {"expect", "stale", "poison", "abstain", "mechanism", "not_asserting", "evidence", "answer"}
# Task ids become log file names (with "/" -> "__"), so keep them to a safe alphabet.
_ID_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./")

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR_TAG = "tag:yaml.org,2002:str"


# Characters that would break an error line apart or hide part of it: control characters and the Unicode
# line/paragraph separators (str.splitlines splits on all of them).
_LINE_BREAKING = frozenset({"Cc", "Zl", "Zp"})


def escape_line_breaks(text: str) -> str:
    """`text` with every control character and line separator escaped as in a Python literal (`\\n`,
    `\\x00`, `\\u2028`), so a message built from user input always prints as exactly one line."""
    return "".join(
        char.encode("unicode_escape").decode("ascii")
        if unicodedata.category(char) in _LINE_BREAKING
        else char
        for char in text
    )


@dataclass(frozen=True)
class TaskError:
    """One problem of a task set; prints as ONE line `file:line: field: problem` whatever the names and
    values in it contain (a YAML key may hold a newline)."""

    file: str  # the file (or folder) as the user named it
    line: int  # 1-based; 0 = the file or folder as a whole
    field: str  # dotted path of the field, e.g. sessions[1].turns[0].probe.expect
    problem: str  # what is wrong, naming the value

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return escape_line_breaks(f"{where}: {self.field}: {self.problem}")


class _Refused(Exception):
    """A whole file is unreadable (too big, bad encoding, hostile YAML): one error, nothing else checked."""

    def __init__(self, line: int, field: str, problem: str) -> None:
        super().__init__(problem)
        self.line, self.field, self.problem = line, field, problem


def task_files(path: str | Path) -> list[Path]:
    """The task files under `path` (itself if a file), recursive, sorted by relative path."""
    root = Path(path)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such file or folder")
    found = [p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in TASK_SUFFIXES]
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def task_set_hash(path: str | Path) -> tuple[str, dict[str, str]]:
    """(content hash of the whole set, {relative path: sha256 of the file bytes})."""
    root = Path(path)
    base = root.parent if root.is_file() else root
    files = {
        p.relative_to(base).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in task_files(root)
    }
    combined = hashlib.sha256()
    for relpath, digest in sorted(files.items()):
        combined.update(f"{relpath}\0{digest}\n".encode())
    return combined.hexdigest(), files


def validate_path(path: str | Path) -> list[TaskError]:
    """Every problem in the file or folder at `path` (empty list = valid)."""
    return read_task_set(path)[1]


def load_tasks(path: str | Path, map_files: Callable[..., Iterable[FileTasks]] = map) -> list[Task]:
    """The tasks in the file or folder at `path`; raises TaskSetError listing every problem. `map_files`:
    see `read_task_set`."""
    tasks, errors = read_task_set(path, map_files)
    if errors:
        raise TaskSetError(errors)
    return tasks


def read_task_set(
    path: str | Path, map_files: Callable[..., Iterable[FileTasks]] = map
) -> tuple[list[Task], list[TaskError]]:
    """(the valid tasks, every problem) in one pass; callers that need both avoid reading twice.
    `map_files(read_task_file, labels, sources)` reads the files, results in file order: the built-in `map`,
    or a process pool's, so that a large set is read by several processes (the run's workers)."""
    root = Path(path)
    if not root.exists():
        return [], [TaskError(str(root), 0, "path", "no such file or folder")]
    files = task_files(root)
    if not files:
        return [], [TaskError(str(root), 0, "path", "no *.yaml or *.yml task files found")]
    tasks: list[Task] = []
    errors: list[TaskError] = []
    first_seen: dict[str, Task] = {}
    base = root.parent if root.is_file() else root
    # Errors name the file as the user gave it; tasks carry the path relative to the set (as in the
    # manifest's file hashes), so logs do not depend on where the checkout lives.
    labels = [str(file) for file in files]
    sources = [file.relative_to(base).as_posix() for file in files]
    for label, read in zip(labels, map_files(read_task_file, labels, sources), strict=True):
        file_errors: list[TaskError] = []
        done = 0  # the file's errors are merged in the order the reader met them, duplicate ids included
        for task, errors_before in zip(read.tasks, read.errors_before, strict=True):
            file_errors += read.errors[done:errors_before]
            done = errors_before
            earlier = first_seen.setdefault(task.id, task)
            if earlier is not task:
                where = f"{earlier.source_file}:{earlier.source_line}"
                problem = f"duplicate id {task.id!r} (first defined at {where})"
                file_errors.append(TaskError(label, task.source_line, "id", problem))
            else:
                tasks.append(task)
        file_errors += read.errors[done:]
        errors.extend(sorted(file_errors, key=lambda error: error.line))
    return tasks, errors


@dataclass(frozen=True)
class FileTasks:
    """What `read_task_file` found in one file (picklable: it may come from another process)."""

    tasks: list[Task]  # the valid tasks, in file order
    errors_before: list[int]  # for each task, how many of `errors` the reader had met when it read it
    errors: list[TaskError]  # the file's problems, in the order the reader met them


def read_task_file(label: str, source: str) -> FileTasks:
    """The tasks and problems of the file `label` (its path as the user named it); `source` is its path
    relative to the task set, which its tasks carry. Ids are checked against other files by the caller."""
    reader = _FileReader(label, source=source)
    tasks, errors_before = [], []
    for task in reader.read(Path(label)):
        tasks.append(task)
        errors_before.append(len(reader.errors))
    return FileTasks(tasks, errors_before, reader.errors)


def _read_text(file: Path) -> str:
    size = file.stat().st_size
    if size > MAX_FILE_BYTES:
        raise _Refused(0, "file", f"{size} bytes exceeds the {MAX_FILE_BYTES}-byte limit for a task file")
    data = file.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise _Refused(line, "file", f"invalid UTF-8 at byte {exc.start}") from None


_OPENING = frozenset({yaml.SequenceStartEvent, yaml.MappingStartEvent})  # CollectionStartEvent's two kinds
_CLOSING = frozenset({yaml.SequenceEndEvent, yaml.MappingEndEvent})


# What `_nesting_bounded` cannot reason about: line breaks other than "\n" (YAML breaks lines at all of
# them), aliases and anchors (the composer checks them as it meets them) and document markers (the event
# pass reads every document, `yaml.compose` stops after the first): a text with any of them takes the event
# pass, so its errors are the ones it always had.
_UNBOUNDED = re.compile(r"[\r\x85\u2028\u2029*&!]|^(?:---|\.\.\.)", re.MULTILINE)


def _nesting_bounded(text: str) -> bool:
    """Whether `text` provably nests at most MAX_DEPTH collections deep, read off its characters without
    parsing (the event pass of `_check_depth` was a quarter of loading a task set).

    Why the bound holds: a block collection nested in another starts at a greater column, except a
    sequence written at its parent mapping's own column, whose entries are again further right; so a path of
    k block collections ends at a column of at least k / 2 - 1. Without anchors and tags a block collection
    starts at most where its line's leading run of spaces, tabs and indicators (`-`, `?`, `:`) ends, so
    block nesting is at most 2 * (longest leading run + 1). Flow collections (`[`, `{`) nest only inside
    the innermost block node, each at one bracket of its own: at most one level per bracket in the text."""
    if _UNBOUNDED.search(text):
        return False
    longest = (MAX_DEPTH - text.count("[") - text.count("{")) // 2  # a leading run this long may go deeper
    return longest > 0 and re.search(f"^[ \t?:-]{{{longest},}}", text, re.MULTILINE) is None


def _check_depth(text: str) -> bool:
    """Refuse deep nesting before composing; returns whether the document uses aliases at all."""
    depth = 0
    aliases = False
    too_deep = f"nesting deeper than {MAX_DEPTH} levels"
    try:
        for event in yaml.parse(text, Loader=_Loader):
            kind = type(event)  # the exact event classes: one dict lookup instead of three isinstance calls
            if kind in _OPENING:
                depth += 1
                if depth > MAX_DEPTH:
                    raise _Refused(event.start_mark.line + 1, "yaml", too_deep)
            elif kind in _CLOSING:
                depth -= 1
            elif kind is yaml.AliasEvent:
                aliases = True
    except yaml.MarkedYAMLError as exc:
        # PyYAML >= 6.0.4 has a nesting limit of its own that may fire first: one message for both.
        if "nesting depth" not in str(exc.problem):
            raise
        mark = exc.problem_mark or exc.context_mark
        raise _Refused(mark.line + 1 if mark else 0, "yaml", too_deep) from None
    return aliases


def _check_expansion(root: yaml.Node) -> None:
    """Refuse documents whose alias-expanded size is huge or infinite (linear time: sizes are memoised)."""
    sizes: dict[int, int] = {}
    in_progress: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in in_progress:
            raise _Refused(node.start_mark.line + 1, "yaml", "recursive alias")
        in_progress.add(key)
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        total = 1 + sum(size(child) for child in children)
        in_progress.discard(key)
        if total > MAX_EXPANDED_NODES:
            raise _Refused(
                node.start_mark.line + 1,
                "yaml",
                f"document expands to more than {MAX_EXPANDED_NODES} nodes (alias bomb?)",
            )
        sizes[key] = total
        return total

    size(root)


class _FileReader:
    """Turns one file's YAML node tree into Tasks, collecting every error with its line."""

    def __init__(self, label: str, source: str) -> None:
        self.file = label
        self.source = source
        self.errors: list[TaskError] = []
        self._imported = False  # whether the task being read came from an imported dataset (has `origin`)
        self._constructor = yaml.constructor.SafeConstructor()

    def error(self, line: int, field: str, problem: str) -> None:
        self.errors.append(TaskError(self.file, line, field, problem))

    def _fail(self, node: yaml.Node, field: str, problem: str) -> None:
        self.error(node.start_mark.line + 1, field, problem)

    def read(self, file: Path) -> Iterator[Task]:
        try:
            text = _read_text(file)
            has_aliases = not _nesting_bounded(text) and _check_depth(text)
            root = yaml.compose(text, Loader=_Loader)
            if root is not None and has_aliases:
                _check_expansion(root)
        except _Refused as refused:
            self.error(refused.line, refused.field, refused.problem)
            return
        except RecursionError:
            self.error(0, "yaml", "aliases nest too deeply")
            return
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = mark.line + 1 if mark else 0
            self.error(line, "yaml", " ".join(f"{exc.context or ''} {exc.problem or ''}".split()))
            return
        except yaml.YAMLError as exc:
            self.error(0, "yaml", " ".join(str(exc).split()))
            return
        if root is None:
            self.error(1, "file", "empty file: expected a task mapping or a list of tasks")
            return
        if isinstance(root, yaml.SequenceNode):
            items = [(item, f"[{index}]") for index, item in enumerate(root.value)]
            if not items:
                self._fail(root, "file", "empty list: expected at least one task")
        else:
            items = [(root, "")]
        for node, prefix in items:
            task = self._task(node, prefix)
            if task is not None:
                yield task

    # ---- scalars -------------------------------------------------------------------------------------------

    def _value(self, node: yaml.Node, field: str) -> tuple[bool, Any]:
        if not isinstance(node, yaml.ScalarNode):
            kind = "a list" if isinstance(node, yaml.SequenceNode) else "a mapping"
            self._fail(node, field, f"expected a single value, got {kind}")
            return False, None
        if node.tag == _STR_TAG:  # most values: SafeConstructor would return the scalar's text as it is
            return True, node.value
        try:
            return True, self._constructor.construct_object(node)
        except yaml.YAMLError as exc:
            self._fail(node, field, " ".join(str(getattr(exc, "problem", exc)).split()))
            return False, None

    def _string(self, node: yaml.Node, field: str) -> str | None:
        ok, value = self._value(node, field)
        if not ok:
            return None
        if not isinstance(value, str):
            self._fail(node, field, f"expected a string, got {type(value).__name__} {value!r} (quote it)")
            return None
        if not value.strip():
            self._fail(node, field, "must not be empty")
            return None
        return value

    def _choice(self, node: yaml.Node, field: str, choices: tuple[str, ...]) -> str | None:
        value = self._string(node, field)
        if value is not None and value not in choices:
            self._fail(node, field, f"expected one of {'|'.join(choices)}, got {value!r}")
            return None
        return value

    def _bool(self, node: yaml.Node, field: str) -> bool | None:
        ok, value = self._value(node, field)
        if ok and not isinstance(value, bool):
            self._fail(node, field, f"expected true or false, got {value!r}")
            return None
        return value if ok else None

    def _duration(self, node: yaml.Node, field: str) -> float | None:
        ok, value = self._value(node, field)
        if not ok:
            return None
        try:
            return parse_duration(value, field=field)
        except ValueError as exc:
            self._fail(node, field, str(exc).removeprefix(f"{field}: "))
            return None

    def _ttl(self, node: yaml.Node, field: str) -> float | None:
        """A remember ttl: a duration, or `never` (NEVER: no ttl, not forgotten by time)."""
        if isinstance(node, yaml.ScalarNode) and node.value == "never":
            return NEVER
        return self._duration(node, field)

    def _strings(self, node: yaml.Node, field: str) -> tuple[str, ...] | None:
        if not isinstance(node, yaml.SequenceNode):
            self._fail(node, field, "expected a list of strings, e.g. [a, b]")
            return None
        values = [self._string(item, f"{field}[{index}]") for index, item in enumerate(node.value)]
        if any(value is None for value in values):
            return None
        return tuple(value for value in values if value is not None)

    # ---- structure -----------------------------------------------------------------------------------------

    def _mapping(
        self, node: yaml.Node, field: str, allowed: set[str], required: tuple[str, ...] = ()
    ) -> dict[str, yaml.Node] | None:
        where = field or "task"
        if not isinstance(node, yaml.MappingNode):
            self._fail(node, where, "expected a mapping (key: value)")
            return None
        fields: dict[str, yaml.Node] = {}
        for key_node, value_node in node.value:
            ok, key = self._value(key_node, where)
            if not ok:
                continue
            name = f"{field}.{key}" if field else str(key)
            if not isinstance(key, str) or key not in allowed:
                self._fail(key_node, name, f"unknown field (allowed: {', '.join(sorted(allowed))})")
            elif key in fields:
                self._fail(key_node, name, "duplicate field")
            else:
                fields[key] = value_node
        for key in required:
            if key not in fields:
                self._fail(node, f"{field}.{key}" if field else key, "missing required field")
        return fields

    def _one_or_many(self, node: yaml.Node, field: str) -> list[tuple[yaml.Node, str]]:
        if isinstance(node, yaml.SequenceNode):
            return [(item, f"{field}[{index}]") for index, item in enumerate(node.value)]
        return [(node, field)]

    def _task(self, node: yaml.Node, prefix: str) -> Task | None:
        before = len(self.errors)
        fields = self._mapping(
            node, prefix, _TASK_FIELDS, ("id", "group", "category", "description", "sessions")
        )
        if fields is None:
            return None
        dot = f"{prefix}." if prefix else ""
        task_id = self._task_id(fields["id"], f"{dot}id") if "id" in fields else None
        group = self._choice(fields["group"], f"{dot}group", GROUPS) if "group" in fields else None
        category = self._string(fields["category"], f"{dot}category") if "category" in fields else None
        description = (
            self._string(fields["description"], f"{dot}description") if "description" in fields else None
        )
        lang = self._choice(fields["lang"], f"{dot}lang", LANGS) if "lang" in fields else None
        start = self._start(fields["start"], f"{dot}start") if "start" in fields else 0.0
        origin = self._origin(fields["origin"], f"{dot}origin") if "origin" in fields else {}
        auto_compaction = (
            self._auto_compaction(fields["auto_compaction"], f"{dot}auto_compaction")
            if "auto_compaction" in fields
            else None
        )
        self._imported = bool(origin)  # probe mechanisms: MECHANISMS, or the imported dataset's labels
        sessions = self._sessions(fields["sessions"], f"{dot}sessions") if "sessions" in fields else ()
        if len(self.errors) > before or task_id is None or group is None or start is None:
            return None
        texts = [description or ""] + [turn.user for session in sessions for turn in session.turns]
        task = Task(
            id=task_id,
            group=group,  # type: ignore[arg-type]  # checked against GROUPS
            category=category or "",
            description=description or "",
            sessions=sessions,
            lang=lang or ("zh" if any(has_cjk(text) for text in texts) else "en"),
            start=start,
            auto_compaction=auto_compaction,
            origin=origin or {},
            source_file=self.source,
            source_line=node.start_mark.line + 1,
        )
        if not task.probes:
            self._fail(node, f"{dot}sessions", "task has no probe: nothing would be measured")
            return None
        return task

    def _start(self, node: yaml.Node, field: str) -> float | None:
        """A task's stated start (`2024-03-04`, `2024-03-04T09:00:00Z`; no zone = UTC) as Unix seconds."""
        ok, value = self._value(node, field)
        if not ok:
            return None
        when = value
        if isinstance(value, str):
            try:
                text = value.strip()  # Python 3.10's parser takes no "Z" for UTC
                when = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
            except ValueError:
                when = None
        if isinstance(when, date) and not isinstance(when, datetime):
            when = datetime(when.year, when.month, when.day)
        if not isinstance(when, datetime):
            example = "2024-03-04 or 2024-03-04T09:00:00Z"
            self._fail(node, field, f"expected a date or date-time like {example}, got {value!r}")
            return None
        seconds = (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp()
        if not 0.0 <= seconds <= MAX_START:
            self._fail(node, field, f"expected a start between 1970-01-01 and 2999-12-31, got {value!s}")
            return None
        return seconds

    def _origin(self, node: yaml.Node, field: str) -> dict[str, str] | None:
        """A flat mapping of strings (dataset, item, ttl policy...): where an imported task came from."""
        if not isinstance(node, yaml.MappingNode):
            self._fail(node, field, "expected a mapping of names to strings")
            return None
        origin: dict[str, str] = {}
        for key_node, value_node in node.value:
            key = self._string(key_node, field)
            value = self._string(value_node, f"{field}.{key}")
            if key is not None and value is not None:
                origin[key] = value
        return origin

    def _task_id(self, node: yaml.Node, field: str) -> str | None:
        value = self._string(node, field)
        if value is None:
            return None
        if set(value) - _ID_CHARS or ".." in value or value.startswith("/"):
            self._fail(node, field, f"{value!r} may use only letters, digits, '-', '_', '.', '/' (no '..')")
            return None
        return value

    def _sessions(self, node: yaml.Node, field: str) -> tuple[Session, ...]:
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            self._fail(node, field, "expected a non-empty list of sessions")
            return ()
        sessions: list[Session] = []
        previous_at = 0.0
        for index, item in enumerate(node.value):
            where = f"{field}[{index}]"
            fields = self._mapping(item, where, _SESSION_FIELDS, ("at", "turns"))
            if fields is None:
                continue
            at = self._duration(fields["at"], f"{where}.at") if "at" in fields else None
            if at is not None and at < previous_at:
                self._fail(fields["at"], f"{where}.at", "offset is earlier than the previous session's")
            previous_at = max(previous_at, at or 0.0)
            agent = self._choice(fields["agent"], f"{where}.agent", AGENTS) if "agent" in fields else "main"
            turns = self._turns(fields["turns"], f"{where}.turns") if "turns" in fields else ()
            team, ends_team = self._team(fields, where, agent)
            if at is not None and agent is not None:
                session = Session(at=at, agent=agent, turns=turns, team=team, ends_team=ends_team)  # type: ignore[arg-type]
                sessions.append(session)
        return tuple(sessions)

    def _team(self, fields: dict[str, yaml.Node], where: str, agent: str | None) -> tuple[str | None, bool]:
        """A session's `team` (required exactly on a team agent's session) and `ends_team` (only there)."""
        if agent != "team":
            for name in ("team", "ends_team"):
                if name in fields and agent is not None:  # a bad agent has its own error
                    self._fail(
                        fields[name],
                        f"{where}.{name}",
                        f"only on a session with agent: team (agent is {agent})",
                    )
            return None, False
        if "team" not in fields:
            self._fail(fields["agent"], f"{where}.team", "required with agent: team (the team's name)")
            return None, False
        team = self._string(fields["team"], f"{where}.team")
        ends_team = self._bool(fields["ends_team"], f"{where}.ends_team") if "ends_team" in fields else False
        return team, bool(ends_team)

    def _turns(self, node: yaml.Node, field: str) -> tuple[Turn, ...]:
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            self._fail(node, field, "expected a non-empty list of turns")
            return ()
        turns: list[Turn] = []
        for index, item in enumerate(node.value):
            where = f"{field}[{index}]"
            fields = self._mapping(item, where, _TURN_FIELDS, ("user",))
            if fields is None:
                continue
            user = self._string(fields["user"], f"{where}.user") if "user" in fields else None
            remember = self._specs(fields.get("remember"), f"{where}.remember", self._remember)
            forget = self._specs(fields.get("forget"), f"{where}.forget", self._forget)
            probe = self._probe(fields["probe"], f"{where}.probe") if "probe" in fields else None
            events = self._specs(fields.get("tool_events"), f"{where}.tool_events", self._tool_event)
            compaction = (
                self._compaction(fields["compaction"], f"{where}.compaction", earlier_turns=index)
                if "compaction" in fields
                else None
            )
            if probe is not None and user is not None and probe.mechanism == "false-premise":
                self._check_premise(fields["probe"], f"{where}.probe", probe, user)
            if user is not None:
                turns.append(
                    Turn(
                        user=user,
                        remember=remember,
                        forget=forget,
                        probe=probe,
                        tool_events=events,
                        compaction=compaction,
                    )
                )
        return tuple(turns)

    def _compaction(self, node: yaml.Node, field: str, earlier_turns: int) -> CompactionSpec | None:
        """A turn's `compaction` event: `true` (keep the default number of recent turns), `false` (none) or
        `{keep_turns: N}`. The session must hold more earlier turns than it keeps, or nothing is cut."""
        if isinstance(node, yaml.ScalarNode):
            ok, value = self._value(node, field)
            if ok and not isinstance(value, bool):
                self._fail(node, field, f"expected true, false or {{keep_turns: N}}, got {value!r}")
            if not (ok and value is True):
                return None
            keep: int | None = DEFAULT_KEEP_TURNS
        else:
            fields = self._mapping(node, field, _COMPACTION_FIELDS)
            if fields is None:
                return None
            keep = (
                self._count(fields["keep_turns"], f"{field}.keep_turns", 0)
                if "keep_turns" in fields
                else DEFAULT_KEEP_TURNS
            )
        if keep is None:
            return None
        if earlier_turns <= keep:
            problem = f"nothing to compact: {earlier_turns} earlier turn(s) in the session, keep_turns {keep}"
            self._fail(node, field, problem)
            return None
        return CompactionSpec(keep_turns=keep)

    def _auto_compaction(self, node: yaml.Node, field: str) -> AutoCompactionSpec | None:
        """The task's `auto_compaction: {at_tokens: N, keep_turns: K}`."""
        fields = self._mapping(node, field, _AUTO_COMPACTION_FIELDS, ("at_tokens",))
        if fields is None:
            return None
        at_tokens = (
            self._count(fields["at_tokens"], f"{field}.at_tokens", 1) if "at_tokens" in fields else None
        )
        keep = (
            self._count(fields["keep_turns"], f"{field}.keep_turns", 0)
            if "keep_turns" in fields
            else DEFAULT_KEEP_TURNS
        )
        if at_tokens is None or keep is None:
            return None
        return AutoCompactionSpec(at_tokens=at_tokens, keep_turns=keep)

    def _count(self, node: yaml.Node, field: str, minimum: int) -> int | None:
        """A whole number of at least `minimum`."""
        ok, value = self._value(node, field)
        if not ok:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self._fail(node, field, f"expected a whole number >= {minimum}, got {value!r}")
            return None
        return value

    def _check_premise(self, node: yaml.Node, field: str, probe: ProbeSpec, question: str) -> None:
        """A false-premise probe's question presupposes a stale value: it must name one (the scorer reads
        the stale values the question names as the premise)."""
        if not find_mentions(question, probe.stale):
            self._fail(node, f"{field}.stale", "a false-premise question must name one of its stale values")

    def _specs(self, node: yaml.Node | None, field: str, build: Any) -> tuple[Any, ...]:
        if node is None:
            return ()
        built = [build(item, where) for item, where in self._one_or_many(node, field)]
        return tuple(spec for spec in built if spec is not None)

    def _remember(self, node: yaml.Node, field: str) -> RememberSpec | None:
        fields = self._mapping(node, field, _REMEMBER_FIELDS, ("content",))
        if fields is None:
            return None
        before = len(self.errors)
        content = self._string(fields["content"], f"{field}.content") if "content" in fields else None
        ttl = self._ttl(fields["ttl"], f"{field}.ttl") if "ttl" in fields else None
        kind = self._choice(fields["kind"], f"{field}.kind", KINDS) if "kind" in fields else "fact"
        pin = self._bool(fields["pin"], f"{field}.pin") if "pin" in fields else False
        tags = self._strings(fields["tags"], f"{field}.tags") if "tags" in fields else ()
        scope = self._choice(fields["scope"], f"{field}.scope", SCOPES) if "scope" in fields else None
        key = self._string(fields["key"], f"{field}.key") if "key" in fields else None
        source = self._choice(fields["source"], f"{field}.source", SOURCES) if "source" in fields else "user"
        refs = self._strings(fields["refs"], f"{field}.refs") if "refs" in fields else ()
        if pin and "ttl" in fields:  # seed §6.3: a pin means "keep until told", so a ttl contradicts it
            self._fail(fields["ttl"], f"{field}.ttl", "a pinned memory takes no ttl (drop ttl or pin)")
        if len(self.errors) > before or content is None:
            return None
        return RememberSpec(
            content=content,
            ttl=ttl,
            kind=kind or "fact",
            pin=bool(pin),
            tags=tags or (),
            scope=scope,
            key=key,
            source=source or "user",  # type: ignore[arg-type]  # checked against SOURCES
            refs=refs or (),
        )

    def _tool_event(self, node: yaml.Node, field: str) -> ToolEventSpec | None:
        fields = self._mapping(node, field, _TOOL_EVENT_FIELDS, ("name", "status"))
        if fields is None:
            return None
        before = len(self.errors)
        name = self._string(fields["name"], f"{field}.name") if "name" in fields else None
        arguments = self._text(fields["arguments"], f"{field}.arguments") if "arguments" in fields else ""
        status = (
            self._choice(fields["status"], f"{field}.status", TOOL_STATUSES) if "status" in fields else None
        )
        output = self._text(fields["output"], f"{field}.output") if "output" in fields else ""
        if status == "open" and output:
            self._fail(fields["output"], f"{field}.output", "an open call never got a result: drop output")
        if status in ("ok", "error") and "output" not in fields:
            self._fail(node, f"{field}.output", f"a finished call ({status}) needs its output")
        if len(self.errors) > before or name is None or status is None:
            return None
        return ToolEventSpec(name=name, arguments=arguments or "", status=status, output=output or "")  # type: ignore[arg-type]

    def _text(self, node: yaml.Node, field: str) -> str | None:
        """A string that may be empty (tool arguments and output)."""
        ok, value = self._value(node, field)
        if ok and not isinstance(value, str):
            self._fail(node, field, f"expected a string, got {type(value).__name__} {value!r} (quote it)")
            return None
        return value if ok else None

    def _forget(self, node: yaml.Node, field: str) -> ForgetSpec | None:
        fields = self._mapping(node, field, _FORGET_FIELDS)
        if fields is None:
            return None
        if not fields:
            self._fail(node, field, "a forget selector needs tags, query or key")
            return None
        before = len(self.errors)
        tags = self._strings(fields["tags"], f"{field}.tags") if "tags" in fields else ()
        query = self._string(fields["query"], f"{field}.query") if "query" in fields else None
        key = self._string(fields["key"], f"{field}.key") if "key" in fields else None
        if len(self.errors) > before:
            return None
        return ForgetSpec(tags=tags or (), query=query, key=key)

    def _probe(self, node: yaml.Node, field: str) -> ProbeSpec | None:
        fields = self._mapping(node, field, _PROBE_FIELDS)
        if fields is None:
            return None
        before = len(self.errors)
        lists = {
            name: self._strings(fields[name], f"{field}.{name}") if name in fields else ()
            for name in ("expect", "stale", "poison")
        }
        abstain = self._bool(fields["abstain"], f"{field}.abstain") if "abstain" in fields else False
        if "mechanism" not in fields:
            mechanism = ""
        elif self._imported:  # an imported set keeps its dataset's own labels (LoCoMo's "temporal")
            mechanism = self._string(fields["mechanism"], f"{field}.mechanism")
        else:
            mechanism = self._choice(fields["mechanism"], f"{field}.mechanism", tuple(MECHANISMS))
        not_asserting = (
            self._strings(fields["not_asserting"], f"{field}.not_asserting")
            if "not_asserting" in fields
            else ()
        )
        evidence = self._strings(fields["evidence"], f"{field}.evidence") if "evidence" in fields else ()
        answer = self._string(fields["answer"], f"{field}.answer") if "answer" in fields else None
        if len(self.errors) > before:
            return None
        expect, stale, poison = (lists[name] or () for name in ("expect", "stale", "poison"))
        if not expect and not abstain:
            self._fail(node, field, "a probe needs expect values or abstain: true")
            return None
        if expect and abstain:
            self._fail(node, field, "abstain: true contradicts a non-empty expect")
            return None
        seen: dict[str, str] = {}
        for name, values in (("expect", expect), ("stale", stale), ("poison", poison)):
            for value in values:
                other = seen.setdefault(value.casefold(), name)
                if other != name:
                    self._fail(node, f"{field}.{name}", f"{value!r} is also listed in {other}")
                    return None
        return ProbeSpec(
            expect=expect,
            stale=stale,
            poison=poison,
            abstain=bool(abstain),
            mechanism=mechanism or "",
            not_asserting=not_asserting or (),
            evidence=evidence or (),
            answer=answer,
        )
