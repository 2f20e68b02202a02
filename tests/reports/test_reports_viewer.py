"""The run viewer (`amnesia-bench view`) in a real headless Chromium, opened from disk (file://), driven by
Selenium with Debian's chromium-driver: it loads with no console error, filters the task list, shows a task's
timeline with its probes (loading that task's data only when it is opened) and puts two arms side by side with
their differences marked. What the page shows is checked against the session logs."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select, WebDriverWait
from typer.testing import CliRunner

from amnesia_bench.cli import app
from reports.viewer.browser import chromium, missing_browser
from reports.viewer.build import ASSETS
from reports.viewer.transitions import stale_transitions

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
ARMS = ("no-memory", "full-memory", "amnesia")
WAIT_SECONDS = 30  # an upper bound for a loaded machine; every wait ends as soon as its condition holds


@pytest.fixture(scope="module")
def site(run_args, small_set_tasks, write_tasks, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("viewer")
    tasks = write_tasks(folder / "tasks", small_set_tasks)
    run = CliRunner().invoke(app, run_args(tasks, folder / "run"))
    assert run.exit_code == 0, run.output
    view = CliRunner().invoke(app, ["view", str(folder / "run"), "--out", str(folder / "site")])
    assert view.exit_code == 0, view.output
    assert view.output.strip() == f"viewer written to {folder / 'site' / 'index.html'}"
    return folder


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    """Debian's Chromium, or a skip naming what to install; with AMNESIA_REQUIRE_BROWSER=1 (CI) a failure."""
    reason = missing_browser()
    if reason is not None:
        if os.environ.get("AMNESIA_REQUIRE_BROWSER") == "1":
            pytest.fail(f"AMNESIA_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    with chromium() as driver:
        yield driver


def _logs(read_log, site: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(arm, task id) -> the pair's records, straight from the session logs."""
    logs = {}
    for path in sorted((site / "run" / "logs").rglob("*.jsonl")):
        records = read_log(path)
        logs[(records[0]["arm"], records[0]["task_id"])] = records
    return logs


def _open(browser: WebDriver, site: Path, fragment: str = "") -> None:
    browser.get((site / "site" / "index.html").as_uri() + (f"#{fragment}" if fragment else ""))
    browser.refresh()  # a new document even when only the fragment changed: a clean script state
    WebDriverWait(browser, WAIT_SECONDS).until(
        lambda d: d.find_elements(By.ID, "task-list") or d.find_elements(By.ID, "task-title")
    )


def _errors(browser: WebDriver) -> list[dict[str, Any]]:
    return [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]


def _listed(browser: WebDriver) -> list[str]:
    rows = browser.find_elements(By.CSS_SELECTOR, "#task-list tbody tr")
    return [row.get_attribute("data-task") for row in rows]


def _row(browser: WebDriver, table: str, arm: str) -> list[str]:
    """The cells of the `all` row of `arm` in the page's table `table`."""
    for row in browser.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr"):
        cells = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
        if cells[:2] == [arm, "all"]:
            return cells
    raise AssertionError(f"no row for {arm} in #{table}")


def _choose(browser: WebDriver, control: str, value: str) -> None:
    Select(browser.find_element(By.ID, control)).select_by_value(value)


def test_the_page_loads_from_disk_with_no_console_error_and_summarises_the_run(
    read_log, small_set_tasks, browser, site
) -> None:
    browser.get_log("browser")  # drop anything an earlier page left
    _open(browser, site)
    assert _errors(browser) == []
    assert sorted(_listed(browser)) == sorted(task["id"] for task in small_set_tasks)
    logs = _logs(read_log, site)
    for arm in ARMS:
        probes = [r for (a, _), records in logs.items() if a == arm for r in records if r["type"] == "probe"]
        correct = sum(r["classification"] == "correct" for r in probes)
        cells = _row(browser, "summary", arm)  # arm, group, tasks, probes, 3 exposure shares, success, ...
        assert cells[:4] == [arm, "all", str(len(small_set_tasks)), str(len(probes))]
        # the share, its 95% CI in brackets, then the counts
        assert cells[7].startswith(f"{100 * correct / len(probes):.1f}% [")
        assert cells[7].endswith(f"] ({correct}/{len(probes)})")
    legend = browser.find_element(By.ID, "answer-legend").text
    assert "c correct s stale p poisoned a abstained w wrong" in " ".join(legend.split())
    failures = browser.find_element(By.ID, "failures").text  # the failure codes, each a share of all probes
    assert "stale-memory premise-accepted cascade-missed deletion-leak" in " ".join(failures.split())
    for arm in ARMS:
        probes = [r for (a, _), records in logs.items() if a == arm for r in records if r["type"] == "probe"]
        stale = sum(r.get("failure") == "stale-memory" for r in probes)
        cells = _row(browser, "failures", arm)  # arm, group, probes, then one share per code
        assert cells[:3] == [arm, "all", str(len(probes))]
        assert cells[3].startswith(f"{100 * stale / len(probes):.1f}%")


@pytest.mark.parametrize(
    ("controls", "expected"),
    [
        ({"filter-group": "harmful"}, lambda task, arm_cls: task["group"] == "harmful"),
        ({"filter-lang": "zh"}, lambda task, arm_cls: task.get("lang") == "zh"),
        ({"filter-mechanism": "subagent-leak"}, lambda task, arm_cls: task["category"] == "subagent-leak"),
        (
            {"filter-column": "full-memory", "filter-classification": "stale"},
            lambda task, arm_cls: "stale" in arm_cls["full-memory"],
        ),
        (
            {"filter-column": "amnesia", "filter-classification": "correct", "filter-group": "harmful"},
            lambda task, arm_cls: task["group"] == "harmful" and "correct" in arm_cls["amnesia"],
        ),
        (
            {"filter-classification": "abstained"},
            lambda task, arm_cls: any("abstained" in c for c in arm_cls.values()),
        ),
    ],
)
def test_filters_narrow_the_list_to_the_tasks_the_logs_say(
    read_log, small_set_tasks, browser, site, controls, expected
) -> None:
    _open(browser, site)
    for control, value in controls.items():
        _choose(browser, control, value)
    classes = {
        key: [r["classification"] for r in records if r["type"] == "probe"]
        for key, records in _logs(read_log, site).items()
    }
    wanted = [
        task["id"]
        for task in small_set_tasks
        if expected(task, {arm: classes[(arm, task["id"])] for arm in ARMS})
    ]
    assert wanted, "a filter that matches nothing tests nothing"
    assert sorted(_listed(browser)) == sorted(wanted)
    assert browser.find_element(By.ID, "task-count").text.startswith(
        f"tasks 1–{len(wanted)} of {len(wanted)}"
    )


def test_searching_by_task_id(browser, site) -> None:
    _open(browser, site)
    browser.find_element(By.ID, "filter-search").send_keys("DRINK")
    assert sorted(_listed(browser)) == ["harmful/verification-drink", "mixed/zh-drink"]


def test_a_task_timeline_shows_every_probe_with_its_classification_and_loads_lazily(
    read_log, browser, site
) -> None:
    _open(browser, site)
    index_js = (site / "site" / "data" / "index.js").read_text(encoding="utf-8")
    assert "Which language should you answer in?" not in index_js  # turn texts live in the task files only
    assert browser.find_elements(By.CSS_SELECTOR, 'script[src*="data/tasks/"]') == []
    browser.find_element(By.LINK_TEXT, "helpful/answer-language").click()
    WebDriverWait(browser, WAIT_SECONDS).until(lambda d: d.find_elements(By.ID, "timeline"))
    assert len(browser.find_elements(By.CSS_SELECTOR, 'script[src*="data/tasks/"]')) == 1
    for arm in ARMS:
        _choose(browser, "arm-a", arm)
        WebDriverWait(browser, WAIT_SECONDS).until(
            lambda d, arm=arm: (
                Select(d.find_element(By.ID, "arm-a")).first_selected_option.text == arm
                and d.find_elements(By.ID, "timeline")
            )
        )
        records = _logs(read_log, site)[(arm, "helpful/answer-language")]
        probes = [r for r in records if r["type"] == "probe"]
        shown = browser.find_elements(By.CSS_SELECTOR, "#timeline .event.probe")
        assert [node.get_attribute("data-classification") for node in shown] == [
            p["classification"] for p in probes
        ]
        for node, probe in zip(shown, probes, strict=True):
            assert probe["answer"] in node.text
            marked = [mark.text for mark in node.find_elements(By.CSS_SELECTOR, "pre.answer mark.m-expect")]
            assert [m.lower() for m in marked] == [v.lower() for v in probe["matched"].get("expect", [])]
        turns = [r["user"] for r in records if r["type"] == "turn"]
        timeline = browser.find_element(By.ID, "timeline").text
        assert all(turn in timeline for turn in turns)
    assert _errors(browser) == []


def test_the_timeline_shows_memory_writes_injections_and_forgetting(read_log, browser, site) -> None:
    _open(browser, site, "task=harmful%2Fverification-drink&a=amnesia")
    timeline = WebDriverWait(browser, WAIT_SECONDS).until(lambda d: d.find_element(By.ID, "timeline"))
    records = _logs(read_log, site)[("amnesia", "harmful/verification-drink")]
    blocks = [node.text for node in timeline.find_elements(By.CSS_SELECTOR, ".event.injection pre.block")]
    assert blocks == [r["block"] for r in records if r["type"] == "injection"]  # verbatim
    assert len(timeline.find_elements(By.CSS_SELECTOR, ".event.write")) == sum(
        r["type"] == "memory_write" for r in records
    )
    forgets = [r for r in records if r["type"] == "memory_forget"]
    assert forgets and all(f"{r['item_id']} {r['reason']}" in timeline.text for r in forgets)
    stale = timeline.find_elements(By.CSS_SELECTOR, ".event.stale")
    assert [node.text.split()[2] for node in stale] == [
        e["item_id"] for e in stale_transitions(records[1:], records[0]["arm_config"])
    ]


def test_two_arms_side_by_side_mark_exactly_the_blocks_that_differ(read_log, browser, site) -> None:
    _open(browser, site, "task=harmful%2Fverification-drink&a=full-memory&b=amnesia")
    table = WebDriverWait(browser, WAIT_SECONDS).until(lambda d: d.find_element(By.ID, "side-by-side"))
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    differing = [row.get_attribute("data-key") for row in rows if "differs" in row.get_attribute("class")]
    logs = _logs(read_log, site)
    full, amnesia = (
        logs[("full-memory", "harmful/verification-drink")],
        logs[("amnesia", "harmful/verification-drink")],
    )
    probe_turn = next(f"s{r['session_index']}t{r['turn_index']}" for r in full if r["type"] == "probe")
    classes = [next(r["classification"] for r in log if r["type"] == "probe") for log in (full, amnesia)]
    assert classes == ["stale", "correct"]  # the task's point: only forgetting removes lapsang
    assert probe_turn in differing
    marker = next(row for row in rows if row.get_attribute("data-key") == probe_turn).find_element(
        By.CSS_SELECTOR, ".marker"
    )
    assert "classification" in marker.text and "answer" in marker.text
    assert (
        browser.find_element(By.ID, "diff-count").text
        == f"{len(differing)} of {len(rows)} blocks differ (marked ≠)"
    )
    # The same arm on both sides differs nowhere: the page offers it only once, so compare two identical logs.
    _open(browser, site, "task=helpful%2Fanswer-language&a=no-memory&b=amnesia")
    WebDriverWait(browser, WAIT_SECONDS).until(lambda d: d.find_element(By.ID, "side-by-side"))
    session_rows = browser.find_elements(By.CSS_SELECTOR, '#side-by-side tr[data-key="s0"]')
    assert session_rows and "differs" not in session_rows[0].get_attribute("class")
    assert _errors(browser) == []


def test_the_site_is_self_contained() -> None:
    assets = ROOT / "reports" / "viewer" / "assets"
    for name in ASSETS:
        text = (assets / name).read_text(encoding="utf-8")
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", text, re.IGNORECASE), name
        assert "@import" not in text and "fetch(" not in text and "XMLHttpRequest" not in text
    html = (assets / "index.html").read_text(encoding="utf-8")
    assert re.findall(r'(?:src|href)="([^"]+)"', html) == [
        "data:,",
        "viewer.css",
        "#",
        "viewer.js",
        "data/index.js",
    ]


def test_the_assets_ship_as_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["reports.viewer"]
    assert all(any(fnmatch(f"assets/{name}", p) for p in patterns) for name in ASSETS)


def test_a_broken_run_is_one_line_exit_2_and_writes_nothing(read_log, site, tmp_path) -> None:
    broken = tmp_path / "run"
    shutil.copytree(site / "run", broken)
    log = next((broken / "logs" / "amnesia").glob("*.jsonl"))
    log.write_text(log.read_text(encoding="utf-8").rsplit("\n", 2)[0] + "\n", encoding="utf-8")  # no task_end
    result = CliRunner().invoke(app, ["view", str(broken), "--out", str(tmp_path / "site")])
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"error: {log}:{len(read_log(log))}: unfinished pair: last record is not task_end"
    ]
    assert not (tmp_path / "site").exists() and [p.name for p in tmp_path.iterdir()] == ["run"]


def test_stale_transitions_follow_the_engine_decay() -> None:
    config = {"config": {"stale_strength": 0.3, "decay_k": 3.0, "auto_expire": True, "decay_mode": "forget"}}
    day = 86400.0
    records = [
        {
            "type": "memory_write",
            "sim_time": 0.0,
            "item_id": "m-1",
            "ttl": day,
            "curve": "ebbinghaus",
            "strength": 1.0,
        },
        {"type": "memory_touch", "sim_time": 3600.0, "item_id": "m-1", "strength": 1.0},
        {
            "type": "memory_write",
            "sim_time": 0.0,
            "item_id": "m-2",
            "ttl": day,
            "curve": "flat",
            "strength": 1.0,
        },
        {
            "type": "memory_write",
            "sim_time": 0.0,
            "item_id": "m-3",
            "ttl": day,
            "curve": "linear",
            "pinned": True,
        },
        {"type": "session_start", "sim_time": 3 * day},
    ]
    (event,) = stale_transitions(records, config)
    assert event["item_id"] == "m-1" and event["sim_time"] == pytest.approx(3600.0 + day * 1.2039728 / 3)
    assert stale_transitions(records, {"config": {**config["config"], "decay_mode": "rank"}}) == []
    assert stale_transitions(records, {"arm": "retrieval"}) == []


def test_view_of_two_runs_labels_columns_by_run(site, tmp_path) -> None:
    second = tmp_path / "second"
    shutil.copytree(site / "run", second)
    out = tmp_path / "site"
    result = CliRunner().invoke(app, ["view", str(site / "run"), str(second), "--out", str(out)])
    assert result.exit_code == 0, result.output
    index = (out / "data" / "index.js").read_text(encoding="utf-8")
    payload = json.loads(index.removeprefix("AmnesiaViewer.index(").removesuffix(");\n"))
    assert [c["label"] for c in payload["columns"]] == [
        f"{run}:{arm}" for run in ("run", "second") for arm in ARMS
    ]


TOOL_TASK = """\
id: helpful/tool-install
group: helpful
category: tool-workaround
description: An install fails twice, then works with a mirror; asked the next day.
sessions:
  - at: 0s
    turns:
      - user: "Install the dependencies."
        tool_events:
          - {name: shell, arguments: "pnpm install", status: error, output: "ETIMEDOUT"}
          - {name: shell, arguments: "pnpm install", status: error, output: "ETIMEDOUT"}
          - {name: shell, arguments: "pnpm i --registry=registry.npmmirror.com", status: ok, output: "Done"}
          - {name: shell, arguments: "tail -f build.log", status: open}
  - at: 1d
    turns:
      - user: "Which staging host do we use?"
        probe: {abstain: true}
"""


def test_the_timeline_shows_the_tasks_tool_events_and_the_models_tool_calls(
    run_args, browser, tmp_path
) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "t.yaml").write_text(TOOL_TASK, encoding="utf-8")
    args = run_args(tasks, tmp_path / "run", "--model", "scripted:tools", arms="claims")
    assert CliRunner().invoke(app, args).exit_code == 0
    assert (
        CliRunner().invoke(app, ["view", str(tmp_path / "run"), "--out", str(tmp_path / "site")]).exit_code
        == 0
    )
    _open(browser, tmp_path, "task=helpful%2Ftool-install&a=claims")
    timeline = WebDriverWait(browser, WAIT_SECONDS).until(lambda d: d.find_element(By.ID, "timeline"))
    events = [node.text for node in timeline.find_elements(By.CSS_SELECTOR, ".event.tool")]
    assert [e.split(" ", 1)[1] for e in events[:4]] == [
        "agent's tool call (error) shell pnpm install → ETIMEDOUT",
        "agent's tool call (error) shell pnpm install → ETIMEDOUT",
        "agent's tool call (ok) shell pnpm i --registry=registry.npmmirror.com → Done",
        "agent's tool call (open) shell tail -f build.log (never answered)",
    ]
    assert (
        len(events) == 5 and "tool call memory_search(" in events[4]
    )  # the model's own call, then its result
    assert _errors(browser) == []


def _run_and_view(run_args, read_log, tasks: Path, arm: str, tmp_path: Path) -> list[dict[str, Any]]:
    """Run one arm on `tasks` (one task) into tmp_path/run, build the viewer into tmp_path/site; the pair's
    records as the session log has them."""
    assert CliRunner().invoke(app, run_args(tasks, tmp_path / "run", arms=arm)).exit_code == 0
    view = CliRunner().invoke(app, ["view", str(tmp_path / "run"), "--out", str(tmp_path / "site")])
    assert view.exit_code == 0, view.output
    return read_log(next((tmp_path / "run" / "logs" / arm).glob("*.jsonl")))


def test_the_timeline_shows_a_context_compaction_with_what_it_dropped(
    run_args, write_tasks, compaction_tasks, read_log, browser, tmp_path
) -> None:
    records = _run_and_view(
        run_args, read_log, write_tasks(tmp_path / "tasks", compaction_tasks[:1]), "no-memory", tmp_path
    )
    compactions = [r for r in records if r["type"] == "compaction"]
    _open(browser, tmp_path, "task=helpful%2Fgate-code-cut&a=no-memory")
    timeline = WebDriverWait(browser, WAIT_SECONDS).until(lambda d: d.find_element(By.ID, "timeline"))
    shown = timeline.find_elements(By.CSS_SELECTOR, ".kind-compaction")
    assert len(shown) == len(compactions) == 2
    for node, record in zip(shown, compactions, strict=True):
        title = f"s{record['session_index']} · context compacted before turn {record['turn_index']}"
        assert node.find_element(By.CSS_SELECTOR, ".block-title").text == title
        assert node.find_element(By.CSS_SELECTOR, "pre.compaction-summary").text == record["summary"]
        head = node.find_element(By.CSS_SELECTOR, ".event.compaction summary").text
        turns = ", ".join(map(str, record["dropped_turns"]))
        assert f"dropped turns {turns} ({record['dropped_messages']} messages" in head
        assert f"history {record['tokens_before']} → {record['tokens_after']} tokens" in head
    assert _errors(browser) == []


def test_the_timeline_shows_an_arms_fold_where_it_happened(
    run_args, write_tasks, compaction_tasks, read_log, browser, tmp_path
) -> None:
    """Seed 003's fold as the session log has it (`fold` start, then end with the checkpoint line): in the
    host's compaction block it follows, after the compaction's own summary."""
    tasks = write_tasks(tmp_path / "tasks", compaction_tasks[:1])
    records = _run_and_view(run_args, read_log, tasks, "clue-folding", tmp_path)
    folds = [r for r in records if r["type"] == "fold"]
    assert [r["phase"] for r in folds] == ["start", "end"] * (len(folds) // 2) and folds
    _open(browser, tmp_path, "task=helpful%2Fgate-code-cut&a=clue-folding")
    timeline = WebDriverWait(browser, WAIT_SECONDS).until(lambda d: d.find_element(By.ID, "timeline"))
    shown = timeline.find_elements(By.CSS_SELECTOR, ".event.fold")
    assert len(shown) == len(folds)
    for node, record in zip(shown, folds, strict=True):
        block = node.find_element(By.XPATH, "ancestor::*[contains(@class, 'kind-compaction')]")
        title = f"s{record['session_index']} · context compacted before turn {record['turn_index']}"
        assert block.find_element(By.CSS_SELECTOR, ".block-title").text == title
        assert record["fold_id"] in node.text
        if record["phase"] == "start":
            assert node.text.split(maxsplit=1)[1].startswith("memory fold starts")
            assert "after the host's compaction" in node.text
        else:
            assert node.find_element(By.CSS_SELECTOR, "pre.fold-summary").text == record["summary"]
    assert _errors(browser) == []


RECALL_TASK = """\
id: helpful/recall-message
group: helpful
category: c
description: a write, then a question in the same session
sessions:
  - at: 0s
    turns:
      - user: "Noted."
        remember: {content: "The verification drink is oolong."}
      - user: "Which verification drink?"
        probe: {expect: [oolong]}
"""


def test_an_injection_shows_the_extra_message_it_placed_before_the_turn(run_args, browser, tmp_path) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "t.yaml").write_text(RECALL_TASK, encoding="utf-8")
    assert (
        CliRunner().invoke(app, run_args(tmp_path / "tasks", tmp_path / "run", arms="retrieval")).exit_code
        == 0
    )
    view = CliRunner().invoke(app, ["view", str(tmp_path / "run"), "--out", str(tmp_path / "site")])
    assert view.exit_code == 0, view.output
    _open(browser, tmp_path, "task=helpful%2Frecall-message&a=retrieval")
    timeline = WebDriverWait(browser, WAIT_SECONDS).until(lambda d: d.find_element(By.ID, "timeline"))
    injections = timeline.find_elements(By.CSS_SELECTOR, ".event.injection")
    assert [node.find_element(By.CSS_SELECTOR, "pre.block").text for node in injections] == [
        "(nothing injected)",
        "(no block)",
    ]
    [extra] = injections[1].find_elements(By.CSS_SELECTOR, "pre.block")[1:]
    assert extra.text.startswith("<recalled-memory>") and "oolong" in extra.text
    assert "user message before the turn" in injections[1].text
    assert _errors(browser) == []


def test_a_missing_browser_is_named_with_the_packages_that_bring_it(monkeypatch, tmp_path) -> None:
    from reports.viewer import browser as module

    monkeypatch.setattr(module, "CHROMEDRIVER", str(tmp_path / "chromedriver"))
    monkeypatch.setattr(module, "CHROMIUM", str(tmp_path))  # present
    expected = f"{tmp_path / 'chromedriver'} not found: apt-get install chromium chromium-driver"
    assert missing_browser() == expected
    monkeypatch.setattr(module, "CHROMEDRIVER", str(tmp_path))
    assert missing_browser() is None


WIRE_ARM = """\
from arms import MemoryContext, OwnStoreArm
from tasks.logschema import ArmCall


class WireArm(OwnStoreArm):
    name = "wire"

    def memory_context(self, user_text, history):
        first = self.now() == 0
        self.context().log(ArmCall(server="fake-server", method="tools/call", name="read_graph",
                                   arguments={"query": user_text}, error=not first,
                                   result="server gone" if not first else "[]"))
        return MemoryContext(block="", tokens=0, items=[])
"""


def test_the_timeline_shows_each_request_an_external_arm_sent_collapsed(run_args, browser, tmp_path) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "t.yaml").write_text(TOOL_TASK, encoding="utf-8")
    (tmp_path / "wire_arm.py").write_text(WIRE_ARM, encoding="utf-8")
    args = run_args(tasks, tmp_path / "run", arms=f"{tmp_path / 'wire_arm.py'}:WireArm")
    assert CliRunner().invoke(app, args).exit_code == 0
    view = CliRunner().invoke(app, ["view", str(tmp_path / "run"), "--out", str(tmp_path / "site")])
    assert view.exit_code == 0, view.output
    _open(browser, tmp_path, "task=helpful%2Ftool-install&a=wire")
    timeline = WebDriverWait(browser, WAIT_SECONDS).until(lambda d: d.find_element(By.ID, "timeline"))
    calls = timeline.find_elements(By.CSS_SELECTOR, "details.event.wire")
    assert [call.text for call in calls] == [  # collapsed: the summary line only
        "0s arm call fake-server · tools/call read_graph",
        "1d arm call (error) fake-server · tools/call read_graph",
    ]
    assert [call.get_attribute("open") for call in calls] == [None, None]
    assert "wire-error" in calls[1].get_attribute("class") and "wire-error" not in calls[0].get_attribute(
        "class"
    )
    calls[1].find_element(By.TAG_NAME, "summary").click()  # opened: what was sent and what came back
    assert calls[1].text.splitlines()[1:] == [
        'arguments: {"query":"Which staging host do we use?"}',
        "→ server gone",
    ]
    assert _errors(browser) == []
