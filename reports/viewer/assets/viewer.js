/* Amnesia run viewer: a static page over the data files written by `amnesia-bench view`.
 *
 * data/index.js calls AmnesiaViewer.index(index): runs, summary counts, one row per task.
 * data/tasks/<file>.js calls AmnesiaViewer.task(task): every column's records for one task, loaded on demand
 * by adding a <script> element (a browser will not let a file:// page fetch local files by XHR or fetch).
 * Every text from the logs is inserted as text (textContent), never as HTML.
 */
(function () {
  "use strict";

  var CLASSES = ["correct", "stale", "poisoned", "abstained", "wrong"];
  var CODE_NAMES = { c: "correct", s: "stale", p: "poisoned", a: "abstained", w: "wrong" };
  var GROUP_ORDER = ["helpful", "harmful", "mixed", "all"];
  var PAGE_SIZE = 100;
  var MEMORY_TYPES = ["memory_write", "memory_touch", "memory_forget", "memory_refused", "memory_stale"];
  // Why an arm folded (a `fold` record's trigger).
  var FOLD_CAUSES = { threshold: "the arm's own threshold", host: "after the host's compaction",
    "session-end": "at the session's end" };

  var index = null;
  var filters = { column: "", group: "", mechanism: "", classification: "", lang: "", search: "", page: 0 };
  var loadedTasks = {};
  var waiting = {};

  // ---- small DOM helpers ------------------------------------------------------------------------------

  function el(tag, attributes) {
    var node = document.createElement(tag);
    var names = Object.keys(attributes || {});
    for (var i = 0; i < names.length; i++) {
      var name = names[i];
      var value = attributes[name];
      if (value === null || value === undefined || value === false) continue;
      if (name === "text") node.textContent = String(value);
      else if (name === "className") node.className = value;
      else if (name.slice(0, 2) === "on") node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (var j = 2; j < arguments.length; j++) append(node, arguments[j]);
    return node;
  }

  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) {
      for (var i = 0; i < child.length; i++) append(node, child[i]);
    } else if (typeof child === "string" || typeof child === "number") {
      node.appendChild(document.createTextNode(String(child)));
    } else {
      node.appendChild(child);
    }
  }

  function show(content) {
    var app = document.getElementById("app");
    app.textContent = "";
    append(app, content);
  }

  // ---- formatting ---------------------------------------------------------------------------------------

  function duration(seconds) {
    if (seconds === null || seconds === undefined) return "none";
    var sign = seconds < 0 ? "-" : "";
    var rest = Math.round(Math.abs(seconds));
    if (rest === 0) return "0s";
    var units = [["d", 86400], ["h", 3600], ["m", 60], ["s", 1]];
    var out = "";
    for (var i = 0; i < units.length; i++) {
      var count = Math.floor(rest / units[i][1]);
      rest -= count * units[i][1];
      if (count) out += count + units[i][0];
    }
    return sign + out;
  }

  function percent(part, whole) {
    if (!whole) return "–";
    return (100 * part / whole).toFixed(1) + "% (" + part + "/" + whole + ")";
  }

  /* A share with its 95% CI (interval: [lo, hi] as fractions, null ends when it has none). */
  function share(part, whole, interval) {
    if (!whole) return "–";
    var bounds = interval && interval[0] !== null && interval[1] !== null ?
      " [" + (100 * interval[0]).toFixed(1) + ", " + (100 * interval[1]).toFixed(1) + "]" : "";
    return (100 * part / whole).toFixed(1) + "%" + bounds + " (" + part + "/" + whole + ")";
  }

  function plural(count, noun) {
    return count + " " + noun + (count === 1 ? "" : "s");
  }

  function strength(value) {
    return value === null || value === undefined ? "–" : Number(value).toFixed(2);
  }

  function badge(classification) {
    return el("span", { className: "badge c-" + classification, title: classification, text: classification });
  }

  function codeBadges(codes) {
    if (codes === null || codes === undefined) return el("span", { className: "absent", text: "not run" });
    if (!codes) return el("span", { className: "absent", text: "no probe" });
    var out = [];
    for (var i = 0; i < codes.length; i++) {
      var name = CODE_NAMES[codes[i]] || "wrong";
      out.push(el("span", { className: "dot c-" + name, title: name, text: codes[i] }));
    }
    return el("span", { className: "dots" }, out);
  }

  /* What the letters of the task list stand for. */
  function answerLegend() {
    return el("p", { className: "legend", id: "answer-legend" }, "Answers, one letter per probe in task order: ",
      Object.keys(CODE_NAMES).map(function (code) {
        var name = CODE_NAMES[code];
        return [el("span", { className: "dot c-" + name, title: name, text: code }), " " + name + " "];
      }), "· “no probe”: the task asks none; “not run”: the arm has no log of it.");
  }

  /* `text` with every occurrence of the given values wrapped in <mark class=...> (case-insensitive; the longest
     value wins where two overlap). groups: [{className, values}] */
  function highlighted(text, groups) {
    var needles = [];
    groups.forEach(function (group) {
      (group.values || []).forEach(function (value) {
        if (value) needles.push({ value: String(value).toLowerCase(), className: group.className });
      });
    });
    needles.sort(function (a, b) { return b.value.length - a.value.length; });
    var lower = String(text).toLowerCase();
    var fragment = document.createDocumentFragment();
    var position = 0;
    while (position < lower.length) {
      var best = null;
      for (var i = 0; i < needles.length; i++) {
        var at = lower.indexOf(needles[i].value, position);
        if (at >= 0 && (best === null || at < best.at)) best = { at: at, needle: needles[i] };
      }
      if (best === null) break;
      fragment.appendChild(document.createTextNode(text.slice(position, best.at)));
      var end = best.at + best.needle.value.length;
      fragment.appendChild(el("mark", { className: best.needle.className, text: text.slice(best.at, end) }));
      position = end;
    }
    fragment.appendChild(document.createTextNode(text.slice(position)));
    return fragment;
  }

  // ---- the index: summary and task list -------------------------------------------------------------------

  function mechanismsOf(row) {
    return row[4] && row[4].length ? row[4] : [row[2]];
  }

  function distinct(values) {
    var seen = {};
    var out = [];
    values.forEach(function (value) {
      if (!Object.prototype.hasOwnProperty.call(seen, value)) {
        seen[value] = true;
        out.push(value);
      }
    });
    return out.sort();
  }

  function matches(row, position) {
    if (filters.group && row[1] !== filters.group) return false;
    if (filters.lang && row[3] !== filters.lang) return false;
    if (filters.mechanism && mechanismsOf(row).indexOf(filters.mechanism) < 0) return false;
    if (filters.search && row[0].toLowerCase().indexOf(filters.search.toLowerCase()) < 0) return false;
    var labels = filters.column ? [filters.column] : index.columns.map(function (c) { return c.label; });
    var wanted = filters.classification ? filters.classification.charAt(0) : null;
    return labels.some(function (label) {
      var codes = index.cells[label][position];
      if (codes === null || codes === undefined) return false;
      return wanted === null || codes.indexOf(wanted) >= 0;
    });
  }

  function select(name, label, options) {
    var control = el("select", {
      id: "filter-" + name,
      name: name,
      onchange: function (event) {
        filters[name] = event.target.value;
        filters.page = 0;
        renderList();
      },
    });
    control.appendChild(el("option", { value: "", text: "any" }));
    options.forEach(function (option) {
      var value = typeof option === "string" ? option : option.value;
      var text = typeof option === "string" ? option : option.text;
      control.appendChild(el("option", { value: value, text: text, selected: value === filters[name] }));
    });
    return el("label", { className: "filter" }, el("span", { text: label }), control);
  }

  function runSection() {
    return index.runs.map(function (run) {
      var m = run.manifest;
      var model = m.model || {};
      var facts = [
        ["model", [model.adapter, model.model, model.strategy, model.base_url].filter(Boolean).join(" · ")],
        ["seed", m.seed],
        ["budget", m.budget_tokens + " tokens"],
        ["tasks", (run.tasks.count === undefined ? "?" : run.tasks.count) + " from " + (run.tasks.root || "?")],
        ["arms", Object.keys(m.arms || {}).join(", ")],
        ["package", (m.package_version || "?") + (m.git_commit ? " @ " + String(m.git_commit).slice(0, 10) : "")],
      ];
      if (m.limit !== null && m.limit !== undefined) facts.push(["limit", String(m.limit)]);
      if (m.groups_left_out_by_limit && m.groups_left_out_by_limit.length) {
        facts.push(["left out by --limit", m.groups_left_out_by_limit.join(", ")]);
      }
      return el("div", { className: "run" }, el("h3", { text: run.path }),
        el("dl", null, facts.map(function (fact) {
          return [el("dt", { text: fact[0] }), el("dd", { text: String(fact[1]) })];
        })));
    });
  }

  function summaryTable() {
    var order = index.columns.map(function (c) { return c.label; });
    var rows = index.summary.slice().sort(function (a, b) {
      return order.indexOf(a.column) - order.indexOf(b.column) ||
        GROUP_ORDER.indexOf(a.group) - GROUP_ORDER.indexOf(b.group);
    });
    var head = ["arm", "group", "tasks", "probes", "expected in prompt", "stale in prompt", "poison in prompt",
      "success", "stale-error", "poison-error", "abstained", "wrong", "context tokens/task", "model calls",
      "tool calls"];
    return el("table", { className: "summary", id: "summary" },
      el("thead", null, el("tr", null, head.map(function (h) { return el("th", { text: h }); }))),
      el("tbody", null, rows.map(function (r) {
        var ci = r.ci || {};
        return el("tr", { className: r.group === "all" ? "total" : null },
          el("td", { text: r.column }), el("td", { text: r.group }), el("td", { text: r.tasks }),
          el("td", { text: r.probes }),
          el("td", { className: "exposure", text: share(r.expected_exposed, r.expect_probes, ci.expected_exposed) }),
          el("td", { className: "exposure", text: share(r.stale_exposed, r.stale_exposure_probes, ci.stale_exposed) }),
          el("td", { className: "exposure", text: share(r.poison_exposed, r.poison_exposure_probes, ci.poison_exposed) }),
          el("td", { text: share(r.correct, r.probes, ci.success) }),
          el("td", { text: share(r.stale_errors, r.stale_probes, ci.stale_error) }),
          el("td", { text: share(r.poison_errors, r.poison_probes, ci.poison_error) }),
          el("td", { text: share(r.abstained, r.probes, ci.abstained) }),
          el("td", { text: share(r.wrong, r.probes, ci.wrong) }),
          el("td", { text: r.tasks ? Math.round(r.context_tokens / r.tasks) : "–" }),
          el("td", { text: r.model_calls }), el("td", { text: r.tool_calls }));
      })));
  }

  // The failure codes of docs/reports.md (index.failure_codes, in the reports' order), each a share of all probes.
  function failureTable() {
    var codes = index.failure_codes || [];
    var order = index.columns.map(function (c) { return c.label; });
    var rows = index.summary.slice().sort(function (a, b) {
      return order.indexOf(a.column) - order.indexOf(b.column) ||
        GROUP_ORDER.indexOf(a.group) - GROUP_ORDER.indexOf(b.group);
    });
    var head = ["arm", "group", "probes"].concat(codes);
    return el("table", { className: "summary", id: "failures" },
      el("caption", { text: "Failure codes: what went wrong on each probe that is not correct (share of all probes, 95% CI)" }),
      el("thead", null, el("tr", null, head.map(function (h) { return el("th", { text: h }); }))),
      el("tbody", null, rows.map(function (r) {
        var ci = r.ci || {};
        return el("tr", { className: r.group === "all" ? "total" : null },
          el("td", { text: r.column }), el("td", { text: r.group }), el("td", { text: r.probes }),
          codes.map(function (code) {
            var key = "failure:" + code;
            return el("td", { text: share(r[key] || 0, r.probes, ci[key]) });
          }));
      })));
  }

  function renderList() {
    var rows = index.tasks;
    var chosen = [];
    for (var i = 0; i < rows.length; i++) if (matches(rows[i], i)) chosen.push(i);
    var pages = Math.max(1, Math.ceil(chosen.length / PAGE_SIZE));
    filters.page = Math.min(filters.page, pages - 1);
    var first = filters.page * PAGE_SIZE;
    var shown = chosen.slice(first, first + PAGE_SIZE);
    var labels = index.columns.map(function (c) { return c.label; });

    var controls = el("div", { className: "filters" },
      select("column", "Arm", labels),
      select("group", "Group", distinct(rows.map(function (r) { return r[1]; }))),
      select("mechanism", "Category / mechanism", distinct([].concat.apply([], rows.map(mechanismsOf)))),
      select("classification", "Classification", CLASSES),
      select("lang", "Language", distinct(rows.map(function (r) { return r[3]; }))),
      el("label", { className: "filter" }, el("span", { text: "Task id contains" }),
        el("input", {
          id: "filter-search", type: "search", value: filters.search,
          oninput: function (event) {
            filters.search = event.target.value;
            filters.page = 0;
            renderTable();
          },
        })));

    function pager() {
      return el("div", { className: "pager" },
        el("button", { id: "previous-page", disabled: filters.page === 0, text: "← previous",
          onclick: function () { filters.page -= 1; renderList(); } }),
        el("span", { id: "task-count", text: chosen.length ? "tasks " + (first + 1) + "–" + (first + shown.length) +
          " of " + chosen.length + " shown (" + rows.length + " in all)" : "no task matches (" + rows.length + " in all)" }),
        el("button", { id: "next-page", disabled: filters.page >= pages - 1, text: "next →",
          onclick: function () { filters.page += 1; renderList(); } }));
    }

    var table = el("table", { className: "tasks", id: "task-list" },
      el("thead", null, el("tr", null, ["task", "group", "category / mechanism", "lang"].concat(labels)
        .map(function (h) { return el("th", { text: h }); }))),
      el("tbody", null, shown.map(function (position) {
        var row = rows[position];
        return el("tr", { "data-task": row[0] },
          el("td", null, el("a", { href: "#task=" + encodeURIComponent(row[0]), text: row[0] })),
          el("td", { text: row[1] }), el("td", { text: mechanismsOf(row).join(", ") }), el("td", { text: row[3] }),
          labels.map(function (label) { return el("td", null, codeBadges(index.cells[label][position])); }));
      })));

    show([
      el("details", { className: "overview", open: true }, el("summary", { text: "Runs and summary" }),
        runSection(), summaryTable(), failureTable(),
        el("p", { className: "note", text: "Shares of probes with their 95% CI in brackets (bootstrap over tasks, " +
          "as `amnesia-bench report` gives them). Exposure first (model-free): \"stale in prompt\" = probes whose " +
          "prompt held a stale value / probes that list stale values (likewise expected, poison). Then the " +
          "answers: stale-error = stale answers / probes that list stale values. A scripted model's answers " +
          "restate exposure: it only picks among the probe's values found in its prompt." })),
      el("h2", { text: "Tasks" }), controls, answerLegend(), pager(), table, pager(),
    ]);

    function renderTable() {
      renderList();
      var search = document.getElementById("filter-search");
      search.focus();
      search.setSelectionRange(search.value.length, search.value.length);
    }
  }

  // ---- one task: blocks of the timeline ------------------------------------------------------------------

  /* Split a column's records into blocks that line up across arms: a gap before each session (sweeps and
     stale transitions while the clock moved), the session start, each turn, and the task end. */
  function blocksOf(records) {
    var blocks = [];
    var byKey = {};
    var current = null;
    var sessions = 0;
    function open(key, kind, title, record) {
      current = { key: key, kind: kind, title: title, record: record, events: [] };
      blocks.push(current);
      byKey[key] = current;
    }
    records.forEach(function (r) {
      if (r.type === "session_start") {
        sessions = r.session_index + 1;
        open("s" + r.session_index, "session", null, r);
        return;
      }
      if (r.type === "turn") {
        open("s" + r.session_index + "t" + r.turn_index, "turn", null, r);
        return;
      }
      if (r.type === "compaction") {  // its own block: what the arms log in their compaction hooks follows it
        open("s" + r.session_index + "c" + r.turn_index, "compaction", null, r);
        current.events.push(r);
        return;
      }
      if (r.type === "task_end") {
        open("end", "end", null, r);
        return;
      }
      if (current === null) open("gap" + sessions, "gap", null, null);
      current.events.push(r);
      if (r.type === "session_end") current = null;
    });
    return { list: blocks, byKey: byKey };
  }

  // The extra user messages an injection placed before the turn (seed 002's recall message).
  function extraMessages(r) {
    return (r.messages || []).map(function (m) { return String(m.content || ""); });
  }

  function signature(block) {
    var parts = { memory: [], "injected block": [], answer: [], classification: [], "tool calls": [] };
    if (!block) return parts;
    block.events.forEach(function (r) {
      if (MEMORY_TYPES.indexOf(r.type) >= 0) {
        parts.memory.push([r.type, r.item_id, r.reason || "", r.content || ""].join("|"));
      } else if (r.type === "fold") parts.memory.push([r.type, r.phase, r.fold_id, r.summary, r.skipped || ""].join("|"));
      else if (r.type === "injection") parts["injected block"].push(r.block, extraMessages(r).join("\n"));
      else if (r.type === "model_call") parts.answer.push(r.response);
      else if (r.type === "probe") parts.classification.push(r.classification);
      else if (r.type === "tool_call") parts["tool calls"].push(r.name + r.arguments);
    });
    return parts;
  }

  function differences(a, b) {
    var left = signature(a);
    var right = signature(b);
    return Object.keys(left).filter(function (name) {
      return JSON.stringify(left[name]) !== JSON.stringify(right[name]);
    });
  }

  function blockTitle(block) {
    var r = block.record;
    if (block.kind === "session") {
      return "Session " + r.session_id + " (" + r.agent + " agent) at " + duration(r.at);
    }
    if (block.kind === "turn") return "s" + r.session_index + " · turn " + r.turn_index;
    if (block.kind === "compaction") return "s" + r.session_index + " · context compacted before turn " + r.turn_index;
    if (block.kind === "end") return "Task end: " + plural(r.probes, "probe") + ", " + plural(r.model_calls, "model call");
    return "While the clock moved";
  }

  function probeOf(block) {
    for (var i = 0; i < block.events.length; i++) if (block.events[i].type === "probe") return block.events[i];
    return null;
  }

  function candidateMarks(probe, matchedOnly) {
    if (!probe) return [];
    var matched = probe.matched || {};
    return [
      { className: "m-expect", values: matchedOnly ? matched.expect : probe.expect },
      { className: "m-stale", values: matchedOnly ? matched.stale : probe.stale },
      { className: "m-poison", values: matchedOnly ? matched.poison : probe.poison },
    ];
  }

  // The probe's values its prompt held (model-free; null: unknown).
  function exposureLine(exposed) {
    if (!exposed) return null;
    var found = ["expect", "stale", "poison"].filter(function (kind) { return (exposed[kind] || []).length; });
    return el("div", { className: "exposure" }, el("span", { className: "label", text: "in the prompt:" }),
      found.length ? found.map(function (kind) { return valueList(kind, exposed[kind], []); })
        : el("span", { className: "values", text: "none of its values" }));
  }

  function valueList(name, values, matched) {
    return el("span", { className: "values" }, el("span", { className: "label", text: name + ":" }),
      (values || []).map(function (value) {
        var hit = (matched || []).indexOf(value) >= 0;
        return el("span", { className: "value m-" + name + (hit ? " hit" : ""), title: hit ? "found in the answer" : null,
          text: value + (hit ? " ✓" : "") });
      }));
  }

  function message(strings, m) {
    var content = typeof m.content === "number" ? strings[m.content] : String(m.content || "");
    return el("div", { className: "message role-" + m.role },
      el("div", { className: "role", text: m.role + (m.tool_call_id ? " (" + m.tool_call_id + ")" : "") }),
      el("pre", { text: content }),
      m.tool_calls ? el("pre", { className: "requested", text: "tool calls: " + JSON.stringify(m.tool_calls) }) : null);
  }

  /* One line of the timeline: time, kind, then the parts, separated by spaces (so copied text reads well). */
  function line(className, r, kind, parts) {
    var children = [el("span", { className: "time", text: duration(r.sim_time) }), " ",
      el("span", { className: "kind", text: kind })];
    parts.forEach(function (part) { if (part !== null && part !== undefined) children.push(" ", part); });
    return el("div", { className: "event " + className }, children);
  }

  /* A request an external arm sent over the wire (its memory server or store worker) and the answer, collapsed:
     the summary names the connection, the method and the tool or resource; opening it shows the arguments. */
  function wireCall(r) {
    return el("details", { className: "event wire" + (r.error ? " wire-error" : "") },
      el("summary", null, el("span", { className: "time", text: duration(r.sim_time) }), " ",
        el("span", { className: "kind", text: r.error ? "arm call (error)" : "arm call" }), " ",
        el("code", { text: r.server + " · " + r.method + " " + r.name })),
      el("pre", { className: "wire-arguments", text: "arguments: " + JSON.stringify(r.arguments || {}) }),
      el("pre", { className: "wire-result", text: "→ " + (r.result || "") }));
  }

  function eventNode(r, block, strings) {
    switch (r.type) {
      case "memory_write":
        return line("write", r, "write", [el("code", { text: r.item_id }),
          el("span", { className: "facts", text: [r.kind, r.pinned ? "pinned" : "ttl " + duration(r.ttl), r.curve,
            r.strength !== null && r.strength !== undefined ? "strength " + strength(r.strength) : null,
            r.key ? "key " + r.key : null, r.scope, r.source && r.source !== "user" ? "source " + r.source : null]
            .filter(Boolean).join(" · ") }),
          el("q", { text: r.content })]);
      case "memory_touch":
        return line("touch", r, "touch", [el("code", { text: r.item_id }),
          "strength → " + strength(r.strength) + " (" + r.reason + ")"]);
      case "memory_stale":
        return line("stale", r, "stale", [el("code", { text: r.item_id }),
          "strength fell below " + r.threshold + ": hidden from the prompt"]);
      case "memory_forget":
        return line("forget", r, "forgotten", [el("code", { text: r.item_id }),
          r.reason + (r.content_hash ? " · sha256 " + r.content_hash.slice(0, 12) : "")]);
      case "memory_refused":
        return line("refused", r, "refused", [r.reason + (r.rule ? " (" + r.rule + ")" : "")]);
      case "injection":
        return el("details", { className: "event injection", open: true },
          el("summary", null, el("span", { className: "kind", text: "injected block" }),
            r.tokens + (r.budget_tokens !== null && r.budget_tokens !== undefined ? "/" + r.budget_tokens : "") +
            " tokens · " + plural(r.items.length, "item")),
          el("pre", { className: "block" }, r.block ? highlighted(r.block, candidateMarks(probeOf(block), false))
            : el("span", { className: "absent", text: extraMessages(r).length ? "(no block)" : "(nothing injected)" })),
          extraMessages(r).map(function (text) {
            return el("div", null, el("span", { className: "kind", text: "+ user message before the turn" }),
              el("pre", { className: "block" }, highlighted(text, candidateMarks(probeOf(block), false))));
          }));
      case "model_call":
        return el("details", { className: "event call" },
          el("summary", null, el("span", { className: "kind", text: "model call" + (r.purpose ? " · " + r.purpose : "") }),
            "prompt " + r.prompt_tokens + " + completion " + r.completion_tokens + " tokens" +
            (r.cached ? " · cached" : "") + (r.tool_calls && r.tool_calls.length ? " · asks for " + r.tool_calls.length + " tool call(s)" : "") +
            " · answer: ", el("span", { className: "answer-preview", text: r.response.slice(0, 120) })),
          el("div", { className: "messages" }, r.messages.map(function (m) { return message(strings, m); })),
          el("div", { className: "message role-answer" }, el("div", { className: "role", text: "answer" }),
            el("pre", { text: r.response })));
      case "tool_call":
        return line("tool", r, "tool call", [el("code", { text: r.name + "(" + r.arguments + ")" }), "→",
          el("code", { text: r.result })]);
      case "tool_event":
        return line("tool", r, "agent's tool call (" + r.status + ")",
          [el("code", { text: (r.name + " " + (r.arguments || "")).trim() }),
            r.status === "open" ? "(never answered)" : "→", r.status === "open" ? null : el("code", { text: r.output || "" })]);
      case "probe":
        var matched = r.matched || {};
        return el("div", { className: "event probe probe-" + r.classification, "data-classification": r.classification },
          el("div", null, el("span", { className: "kind", text: "probe" }), badge(r.classification),
            r.mechanism ? el("span", { className: "mechanism", text: r.mechanism }) : null,
            r.failure ? el("span", { className: "failure", title: "failure code (docs/reports.md)", text: "failure: " + r.failure }) : null,
            r.judge ? el("span", { className: "judge" + (r.judge !== r.classification && r.judge !== "unparsed" ? " judge-disagrees" : ""),
              title: "model judge " + (r.judge_model || "") + " (docs/scoring.md): " + (r.judge_response || ""),
              text: "judge: " + r.judge + (r.judge !== r.classification && r.judge !== "unparsed" ? " (disagrees)" : "") }) : null,
            r.fact_changed_at !== null && r.fact_changed_at !== undefined
              ? el("span", { className: "facts", text: "fact last written at " + duration(r.fact_changed_at) }) : null),
          el("div", null, r.expect.length ? valueList("expect", r.expect, matched.expect) : null,
            r.stale.length ? valueList("stale", r.stale, matched.stale) : null,
            r.poison.length ? valueList("poison", r.poison, matched.poison) : null,
            r.abstain ? el("span", { className: "values", text: "abstaining is correct" }) : null),
          exposureLine(r.exposed),
          el("pre", { className: "answer" }, highlighted(r.answer, candidateMarks(r, true))));
      case "arm_call":
        return wireCall(r);
      case "compaction":
        return el("details", { className: "event compaction", open: true },
          el("summary", null, el("span", { className: "kind", text: "context compaction" }),
            (r.trigger === "tokens" ? "automatic (the history passed the task's threshold)" : "the task's event") +
            " · dropped turn" + (r.dropped_turns.length === 1 ? " " : "s ") + r.dropped_turns.join(", ") +
            " (" + plural(r.dropped_messages, "message") + ", " + r.dropped_tokens + " tokens) · kept the last " +
            plural(r.keep_turns, "turn") + " · history " + r.tokens_before + " → " + r.tokens_after + " tokens"),
          el("pre", { className: "compaction-summary", text: r.summary }));
      case "fold":  // an arm's fold of its own view (seed 003's compaction/start … end), where it happened
        return r.phase === "start"
          ? line("fold", r, "memory fold starts", [el("code", { text: r.fold_id }),
            (FOLD_CAUSES[r.trigger] || r.trigger) + " · turn" + (r.turns.length === 1 ? " " : "s ") +
            r.turns.join(", ") + " (" + r.tokens + " tokens)"])
          : line("fold", r, r.skipped ? "memory fold ends, nothing folded" : "memory fold ends",
            [el("code", { text: r.fold_id }),
              r.skipped ? r.skipped : el("pre", { className: "fold-summary", text: r.summary })]);
      case "session_end":
        return line("quiet", r, "session " + r.session_id + " ends", []);
      default:
        return line("quiet", r, r.type, []);
    }
  }

  function blockNode(block, strings) {
    if (!block) return el("div", { className: "block-body absent", text: "nothing happened here in this arm" });
    var r = block.record;
    return el("div", { className: "block-body kind-" + block.kind },
      el("div", { className: "block-title", text: blockTitle(block) }),
      block.kind === "turn" ? el("div", { className: "user" }, el("span", { className: "role", text: "user" }),
        el("span", { text: r.user })) : null,
      block.events.map(function (event) { return eventNode(event, block, strings); }));
  }

  function columnInfo(label, column) {
    return el("details", { className: "config" }, el("summary", { text: label + ": configuration" }),
      el("pre", { text: JSON.stringify({ arm_config: column.arm_config, seed: column.seed,
        budget_tokens: column.budget_tokens, model: column.model }, null, 2) }));
  }

  function renderTask(task, a, b) {
    var labels = Object.keys(task.columns);
    if (labels.indexOf(a) < 0) a = labels[0];
    if (b && (labels.indexOf(b) < 0 || b === a)) b = "";
    var spec = task.task;
    function go(newA, newB) {
      location.hash = "task=" + encodeURIComponent(task.id) + "&a=" + encodeURIComponent(newA) +
        (newB ? "&b=" + encodeURIComponent(newB) : "");
    }
    function chooser(id, value, allowNone, onChange) {
      var control = el("select", { id: id, onchange: function (event) { onChange(event.target.value); } });
      if (allowNone) control.appendChild(el("option", { value: "", text: "— none —" }));
      labels.forEach(function (label) {
        control.appendChild(el("option", { value: label, text: label, selected: label === value }));
      });
      return control;
    }
    var header = [
      el("p", null, el("a", { href: "#", id: "back", text: "← all tasks" })),
      el("h2", { id: "task-title", text: task.id }),
      el("p", { className: "meta", text: [spec.group, spec.category, spec.lang].join(" · ") }),
      el("p", { className: "description", text: spec.description }),
      el("div", { className: "filters" },
        el("label", { className: "filter" }, el("span", { text: "Arm" }),
          chooser("arm-a", a, false, function (value) { go(value, b); })),
        el("label", { className: "filter" }, el("span", { text: "Side by side with" }),
          chooser("arm-b", b, true, function (value) { go(a, value); }))),
      el("p", { className: "legend" }, "Highlights: ", el("mark", { className: "m-expect", text: "expected" }), " ",
        el("mark", { className: "m-stale", text: "stale" }), " ", el("mark", { className: "m-poison", text: "poisoned" }),
        " values; in an answer only the values the scorer found are marked."),
    ];
    var left = blocksOf(task.columns[a].records);
    if (!b) {
      show([header, columnInfo(a, task.columns[a]),
        el("div", { className: "timeline", id: "timeline" }, left.list.map(function (block) {
          return el("section", { className: "block", "data-key": block.key }, blockNode(block, task.strings));
        }))]);
      return;
    }
    var right = blocksOf(task.columns[b].records);
    // Both columns' blocks in timeline order: a block only one side has goes after its predecessor there.
    var keys = left.list.map(function (block) { return block.key; });
    right.list.forEach(function (block, position) {
      if (keys.indexOf(block.key) >= 0) return;
      var after = position === 0 ? -1 : keys.indexOf(right.list[position - 1].key);
      keys.splice(after + 1, 0, block.key);
    });
    var differing = 0;
    var rows = keys.map(function (key) {
      var changed = differences(left.byKey[key], right.byKey[key]);
      if (changed.length) differing += 1;
      return el("tr", { className: changed.length ? "differs" : null, "data-key": key },
        el("td", { className: "marker", title: changed.length ? "differs: " + changed.join(", ") : "same",
          text: changed.length ? "≠ " + changed.join(", ") : "" }),
        el("td", null, blockNode(left.byKey[key], task.strings)),
        el("td", null, blockNode(right.byKey[key], task.strings)));
    });
    show([header, columnInfo(a, task.columns[a]), columnInfo(b, task.columns[b]),
      el("p", { id: "diff-count", text: differing + " of " + keys.length + " blocks differ (marked ≠)" }),
      el("table", { className: "side-by-side", id: "side-by-side" },
        el("thead", null, el("tr", null, el("th", { text: "" }), el("th", { text: a }), el("th", { text: b }))),
        el("tbody", null, rows))]);
  }

  // ---- loading task files and routing -----------------------------------------------------------------------

  function fileOf(taskId) {
    for (var i = 0; i < index.tasks.length; i++) if (index.tasks[i][0] === taskId) return index.tasks[i][5];
    return null;
  }

  function withTask(taskId, use) {
    if (loadedTasks[taskId]) { use(loadedTasks[taskId]); return; }
    var file = fileOf(taskId);
    if (file === null) { show(el("p", { className: "error", text: "No task " + taskId + " in this run." })); return; }
    if (waiting[taskId]) { waiting[taskId].push(use); return; }
    waiting[taskId] = [use];
    show(el("p", { className: "note", text: "Loading " + taskId + "…" }));
    var script = el("script", { src: "data/tasks/" + encodeURIComponent(file) + ".js" });
    script.onerror = function () {
      delete waiting[taskId];
      show(el("p", { className: "error", text: "Could not load data/tasks/" + file + ".js (is the site folder complete?)" }));
    };
    document.body.appendChild(script);
  }

  function route() {
    if (!index) return;
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    var taskId = params.get("task");
    if (!taskId) { renderList(); return; }
    withTask(taskId, function (task) { renderTask(task, params.get("a") || "", params.get("b") || ""); });
  }

  window.AmnesiaViewer = {
    /* Called by data/index.js. */
    index: function (data) {
      index = data;
      var line = document.getElementById("run-line");
      line.textContent = data.runs.map(function (r) { return r.path; }).join(", ") + " · " +
        data.tasks.length + " tasks · " + data.columns.length + " arm column(s)";
      route();
    },
    /* Called by data/tasks/<file>.js. */
    task: function (data) {
      loadedTasks[data.id] = data;
      var uses = waiting[data.id] || [];
      delete waiting[data.id];
      uses.forEach(function (use) { use(data); });
    },
  };
  window.addEventListener("hashchange", route);
})();
