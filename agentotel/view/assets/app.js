// agentotel's run viewer: the runs list, one run (step tree + timeline, messages, findings,
// environment) and two runs side by side. No framework, no network beyond the local view's own API:
// a report file carries its data inline and never fetches anything.
(function () {
  "use strict";
  var CONFIG = JSON.parse(document.getElementById("agentotel-data").textContent || "{}");
  var REPORT = CONFIG.mode === "report";
  var main = document.getElementById("main");
  var live = document.getElementById("live");
  var ROW = 28; // px per step row: the list draws only the rows in view
  var LONG = 600; // characters of a text shown before "show more"
  var MESSAGES = {};

  // -- small helpers ---------------------------------------------------------------------------
  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.slice(0, 2) === "on") node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    });
    for (var i = 2; i < arguments.length; i++) add(node, arguments[i]);
    return node;
  }
  function add(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { add(node, c); }); return; }
    node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
  function say(text) { live.textContent = text; }
  function cost(v) {
    if (v === null || v === undefined) return "–";
    if (v === 0) return "$0";
    var a = Math.abs(v), sign = v < 0 ? "−" : "";
    if (a >= 1) return sign + "$" + a.toFixed(2);
    return sign + "$" + a.toFixed(Math.min(12, 2 - Math.floor(Math.log10(a))));
  }
  function ms(v) {
    if (v === null || v === undefined) return "–";
    if (v < 1) return v.toFixed(2) + " ms";
    if (v < 1000) return Math.round(v) + " ms";
    if (v < 60000) return (v / 1000).toFixed(2) + " s";
    return Math.floor(v / 60000) + " min " + Math.round((v % 60000) / 1000) + " s";
  }
  function int(v) { return v === null || v === undefined ? "–" : Number(v).toLocaleString("en-US"); }
  function when(iso) {
    if (!iso) return "–";
    var d = new Date(iso);
    return isNaN(d) ? String(iso) : d.toISOString().replace("T", " ").slice(0, 19) + " UTC";
  }
  function badge(status) { return el("span", { "class": "badge " + (status || ""), text: status || "?" }); }
  function query(str) {
    var out = {};
    (str || "").split("&").forEach(function (kv) {
      if (!kv) return;
      var i = kv.indexOf("=");
      out[decodeURIComponent(i < 0 ? kv : kv.slice(0, i))] = i < 0 ? "" : decodeURIComponent(kv.slice(i + 1).replace(/\+/g, " "));
    });
    return out;
  }
  function qs(obj) {
    return Object.keys(obj).filter(function (k) { return obj[k] !== "" && obj[k] !== null && obj[k] !== undefined; })
      .map(function (k) { return encodeURIComponent(k) + "=" + encodeURIComponent(obj[k]); }).join("&");
  }
  function api(path) {
    var headers = CONFIG.token ? { Authorization: "Bearer " + CONFIG.token } : {};
    return fetch(path, { headers: headers }).then(function (r) {
      return r.json().then(function (body) {
        if (!r.ok) throw new Error(body && body.error ? body.error : r.status + " " + r.statusText);
        return body;
      });
    });
  }
  function show(title, nodes) {
    document.title = title + " · agentotel";
    main.replaceChildren();
    add(main, nodes);
  }
  function fail(err) {
    show("Error", [el("h1", { text: "Something went wrong" }), el("div", { "class": "error-box", role: "alert", text: String(err && err.message || err) }),
      el("p", {}, el("a", { href: "#/", text: "Back to the runs" }))]);
  }
  function expand(value) {
    if (Array.isArray(value)) return value.map(function (m) { return isRef(m) ? MESSAGES[m.$m] : m; });
    return value;
  }
  // A reference is {"$m": key} and nothing else, naming a message of the table: a recorded result that only
  // looks like one ([{"$m": "x", ...}], "__proto__") is shown as recorded, not as undefined or another value.
  function isRef(m) {
    return m !== null && typeof m === "object" && !Array.isArray(m) && Object.keys(m).length === 1 &&
      typeof m.$m === "string" && Object.prototype.hasOwnProperty.call(MESSAGES, m.$m);
  }
  function isMessages(v) { return Array.isArray(v) && v.length > 0 && v.every(function (m) { return m && typeof m === "object" && "role" in m; }); }
  function errorText(s) {
    var text = s.error || "failed";
    return s.error_type && text.indexOf(s.error_type) !== 0 ? s.error_type + ": " + text : text;
  }
  function shortId(id) { return id ? String(id).slice(0, 12) : ""; }

  // -- JSON and text -----------------------------------------------------------------------------
  function longText(text, cls) {
    text = String(text);
    var node = el("div", { "class": cls || "text" });
    if (text.length <= LONG) { node.textContent = text; return node; }
    var open = false;
    var body = el("span", { text: text.slice(0, LONG) + "…" });
    var more = el("button", { "class": "more", type: "button", "aria-expanded": "false", text: " show all " + int(text.length) + " characters" });
    more.addEventListener("click", function () {
      open = !open;
      body.textContent = open ? text : text.slice(0, LONG) + "…";
      more.textContent = open ? " show less" : " show all " + int(text.length) + " characters";
      more.setAttribute("aria-expanded", String(open));
    });
    add(node, [body, more]);
    return node;
  }
  function jsonTree(value, label, depth) {
    depth = depth || 0;
    var key = label === undefined ? null : el("span", { "class": "k", text: label + ": " });
    if (value === null || typeof value !== "object") {
      var cls = typeof value === "string" ? "s" : typeof value === "number" ? "n" : typeof value === "boolean" ? "b" : "z";
      var shown = typeof value === "string" ? longText(JSON.stringify(value), "text " + cls) : el("span", { "class": cls, text: String(value) });
      if (typeof value === "string") shown.style.display = "inline";
      return el("div", { "class": "leaf" }, key, shown);
    }
    var entries = Array.isArray(value) ? value.map(function (v, i) { return [String(i), v]; }) : Object.keys(value).map(function (k) { return [k, value[k]]; });
    var summary = el("summary", {}, key, el("span", { "class": "z", text: Array.isArray(value) ? "[" + entries.length + "]" : "{" + entries.length + "}" }));
    var box = el("details", depth < 2 ? { open: true } : {}, summary);
    var filled = false;
    function fill() {
      if (filled) return; filled = true;
      entries.forEach(function (e) { box.appendChild(jsonTree(e[1], e[0], depth + 1)); });
    }
    if (depth < 2) fill(); else box.addEventListener("toggle", fill);
    return box;
  }
  function json(value) { return el("div", { "class": "json" }, jsonTree(value)); }

  function partNode(part) {
    if (typeof part === "string") return longText(part);
    if (!part || typeof part !== "object") return json(part);
    var t = part.type;
    if (t === "text" || t === "reasoning" || t === "thinking") return el("div", {}, t !== "text" ? el("span", { "class": "muted", text: t + ": " }) : null, longText(part.content !== undefined ? part.content : part.text));
    if (t === "tool_call") return el("div", { "class": "part-call" }, el("div", {}, el("b", { text: "calls " + (part.name || "?") }), part.id ? el("span", { "class": "muted mono", text: "  " + part.id }) : null), json(part.arguments));
    if (t === "tool_call_response") return el("div", { "class": "part-call" }, el("div", {}, el("b", { text: "result" }), part.id ? el("span", { "class": "muted mono", text: "  " + part.id }) : null), typeof part.response === "string" ? maybeJson(part.response) : json(part.response));
    return json(part);
  }
  function maybeJson(text) {
    if (/^\s*[\[{]/.test(text)) { try { return json(JSON.parse(text)); } catch (e) { /* not JSON: shown as text */ } }
    return longText(text);
  }
  function messageNode(m) {
    var parts = m.parts || (m.content !== undefined ? [typeof m.content === "string" ? { type: "text", content: m.content } : m.content] : []);
    return el("div", { "class": "msg " + (m.role || "") }, el("div", { "class": "role", text: m.role + (m.name ? " · " + m.name : "") + (m.finish_reason ? " · " + m.finish_reason : "") }), parts.map(partNode));
  }
  function payload(value) {
    value = expand(value);
    if (value === null || value === undefined) return el("p", { "class": "muted", text: "not recorded" });
    if (isMessages(value)) return el("div", {}, value.map(messageNode));
    if (typeof value === "string") return maybeJson(value);
    return json(value);
  }

  // -- runs list -----------------------------------------------------------------------------------
  var runsState = { choices: null };
  function runsPage(params) {
    if (REPORT) return home();
    var p = Object.assign({ sort: "start_time", dir: "desc", offset: "0" }, params);
    var choices = runsState.choices ? Promise.resolve(runsState.choices) : api("api/choices").then(function (c) { runsState.choices = c; return c; });
    Promise.all([api("api/runs?" + qs(p)), choices]).then(function (res) { drawRuns(res[0], res[1], p); }).catch(fail);
  }
  function select(name, label, values, current) {
    var s = el("select", { id: "f-" + name, name: name }, el("option", { value: "", text: "any" }));
    values.forEach(function (v) { s.appendChild(el("option", { value: v, text: v, selected: v === current })); });
    return el("label", { "for": "f-" + name }, label, s);
  }
  function input(name, label, type, current, extra) {
    return el("label", { "for": "f-" + name }, label, el("input", Object.assign({ id: "f-" + name, name: name, type: type, value: current || "" }, extra || {})));
  }
  function drawRuns(page, choices, p) {
    var picked = [];
    var form = el("form", { "class": "filters", role: "search", "aria-label": "Filter runs" },
      input("q", "Search id or name", "search", p.q, { placeholder: "run id, trace id or name" }),
      select("user", "User", choices.users || [], p.user),
      select("agent", "Agent", choices.agents || [], p.agent),
      select("status", "Status", choices.statuses || [], p.status),
      input("since", "Since", "date", p.since), input("until", "Until", "date", p.until),
      input("min_cost", "Min cost ($)", "number", p.min_cost, { step: "any", min: "0" }),
      input("max_cost", "Max cost ($)", "number", p.max_cost, { step: "any", min: "0" }),
      el("button", { "class": "btn primary", type: "submit", text: "Apply" }),
      el("button", { "class": "btn", type: "button", text: "Reset", onclick: function () { location.hash = "#/"; } }));
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var next = { sort: p.sort, dir: p.dir };
      Array.prototype.forEach.call(form.elements, function (f) { if (f.name && f.value) next[f.name] = f.value; });
      location.hash = "#/runs?" + qs(next);
    });
    var compare = el("button", { "class": "btn", type: "button", disabled: true, text: "Compare the two selected runs" });
    var started = {};
    page.rows.forEach(function (r) { started[r.run_id] = r.start_time || ""; });
    compare.addEventListener("click", function () {
      if (picked.length !== 2) return;
      var pair = picked.slice().sort(function (x, y) { return started[x] < started[y] ? -1 : started[x] > started[y] ? 1 : 0; });
      location.hash = "#/diff/" + encodeURIComponent(pair[0]) + "/" + encodeURIComponent(pair[1]);
    });
    function sortHeader(col, label, num) {
      var active = p.sort === col;
      var dir = active && p.dir === "desc" ? "asc" : "desc";
      var th = el("th", { scope: "col", "class": num ? "num" : null, "aria-sort": active ? (p.dir === "asc" ? "ascending" : "descending") : "none" },
        el("button", { type: "button", text: label + (active ? (p.dir === "asc" ? " ▲" : " ▼") : ""), onclick: function () {
          location.hash = "#/runs?" + qs(Object.assign({}, p, { sort: col, dir: dir, offset: "0" }));
        } }));
      return th;
    }
    var head = el("tr", {}, el("th", { scope: "col" }, el("span", { "class": "sr-only", text: "Select to compare" })),
      sortHeader("name", "Run"), sortHeader("user_id", "User"), sortHeader("status", "Status"), sortHeader("start_time", "Started"),
      sortHeader("duration_ms", "Duration", true), sortHeader("steps", "Steps", true), sortHeader("errors", "Errors", true),
      sortHeader("input_tokens", "Tokens in/out", true), sortHeader("total_cost_usd", "Cost", true));
    var body = el("tbody");
    page.rows.forEach(function (r) {
      var box = el("input", { type: "checkbox", "aria-label": "select " + r.name + " " + shortId(r.run_id) + " to compare" });
      box.addEventListener("change", function () {
        if (box.checked) picked.push(r.run_id); else picked = picked.filter(function (x) { return x !== r.run_id; });
        while (picked.length > 2) { var old = picked.shift(); var other = body.querySelector('input[data-run="' + old + '"]'); if (other) other.checked = false; }
        compare.disabled = picked.length !== 2;
      });
      box.setAttribute("data-run", r.run_id);
      var nested = r.total_cost_usd !== null && r.cost_usd !== null && Math.abs((r.total_cost_usd || 0) - (r.cost_usd || 0)) > 1e-12;
      body.appendChild(el("tr", { "class": "clickable", "data-run": r.run_id, onclick: function (e) { if (e.target.tagName !== "INPUT" && e.target.tagName !== "A") location.hash = "#/run/" + encodeURIComponent(r.run_id); } },
        el("td", {}, box),
        el("td", {}, el("a", { href: "#/run/" + encodeURIComponent(r.run_id), text: r.name }), " ", el("span", { "class": "muted mono", title: r.run_id, text: shortId(r.run_id) })),
        el("td", { text: r.user_id || "–" }), el("td", {}, badge(r.status)), el("td", { text: when(r.start_time) }),
        el("td", { "class": "num", text: ms(r.duration_ms) }), el("td", { "class": "num", text: int(r.steps) }),
        el("td", { "class": "num", text: int(r.errors) }), el("td", { "class": "num", text: int(r.input_tokens) + " / " + int(r.output_tokens) }),
        el("td", { "class": "num", title: nested ? "own " + cost(r.cost_usd) + ", with sub-agents " + cost(r.total_cost_usd) : null, text: cost(r.total_cost_usd) + (nested ? " (with sub-agents)" : "") })));
    });
    var first = page.total ? page.offset + 1 : 0, last = page.offset + page.rows.length;
    var prev = el("button", { "class": "btn", type: "button", text: "Previous", disabled: page.offset <= 0, onclick: function () {
      location.hash = "#/runs?" + qs(Object.assign({}, p, { offset: String(Math.max(0, page.offset - page.limit)) })); } });
    var next = el("button", { "class": "btn", type: "button", text: "Next", disabled: last >= page.total, onclick: function () {
      location.hash = "#/runs?" + qs(Object.assign({}, p, { offset: String(page.offset + page.limit) })); } });
    show("Runs", [el("h1", { text: "Runs" }), form,
      el("div", { "class": "pager" }, compare),
      page.rows.length ? el("table", { "class": "runs" }, el("caption", { "class": "sr-only", text: "Runs, newest first" }), el("thead", {}, head), body)
        : el("p", { "class": "muted", text: "No run matches these filters." }),
      el("div", { "class": "pager" }, prev, el("span", { text: first + "–" + last + " of " + int(page.total) }), next)]);
    say(page.total + " runs");
  }

  // -- one run ---------------------------------------------------------------------------------------
  function runSummary(run) {
    var nested = run.total_cost_usd !== undefined && run.total_cost_usd !== null && Math.abs((run.total_cost_usd || 0) - (run.cost_usd || 0)) > 1e-12;
    function item(label, value) { return el("span", {}, label + " ", el("b", { text: value })); }
    return el("div", { "class": "summary" },
      item("run", run.run_id), item("trace", shortId(run.trace_id)), run.user_id ? item("user", run.user_id) : null,
      run.session_id ? item("session", run.session_id) : null, run.trigger ? item("trigger", run.trigger) : null,
      item("started", when(run.start_time)), item("duration", ms(run.duration_ms)), item("steps", int(run.steps)),
      item("tokens in/out", int(run.input_tokens) + " / " + int(run.output_tokens)),
      item("cost (own)", cost(run.cost_usd)), nested ? item("cost with sub-agents", cost(run.total_cost_usd)) : null,
      (run.models && run.models.length) ? item("models", run.models.join(", ")) : null);
  }
  function stepLabel(s) {
    return (s.tool_name || s.model || s.name || "") + (s.tool_name && s.model ? "" : "");
  }
  function stepList(steps, opts) {
    var box = el("div", { "class": "steps", tabindex: "0", role: "listbox", "aria-label": opts.label || "Steps", "aria-activedescendant": "" });
    var spacer = el("div", { "class": "spacer" });
    spacer.style.height = steps.length * ROW + "px";
    box.style.height = "min(62vh, " + (steps.length * ROW + 2) + "px)";
    box.appendChild(spacer);
    var t0 = Infinity, t1 = -Infinity;
    steps.forEach(function (s) {
      var t = s.start_time ? Date.parse(s.start_time) : NaN;
      if (!isNaN(t)) { t0 = Math.min(t0, t); t1 = Math.max(t1, t + (s.duration_ms || 0)); }
    });
    var span = Math.max(1, t1 - t0);
    var selected = opts.selected || null;
    function draw() {
      var top = box.scrollTop, height = box.clientHeight || 400;
      var from = Math.max(0, Math.floor(top / ROW) - 10), to = Math.min(steps.length, Math.ceil((top + height) / ROW) + 10);
      spacer.replaceChildren();
      for (var i = from; i < to; i++) spacer.appendChild(row(steps[i], i));
    }
    function row(s, i) {
      var t = s.start_time ? Date.parse(s.start_time) : NaN;
      var bar = el("div", { "class": "bar t-" + s.type + (s.status === "error" ? " failed" : "") });
      if (!isNaN(t)) { bar.style.left = ((t - t0) / span * 100) + "%"; bar.style.width = Math.max(0.3, (s.duration_ms || 0) / span * 100) + "%"; }
      var label = el("span", { "class": "label" }, el("span", { "class": "type t-" + s.type, text: s.type }),
        stepLabel(s), s.requested_by ? el("span", { "class": "muted", text: "  ← #" + s.requested_by }) : null,
        opts.flags && opts.flags[s.index] ? el("span", { "class": "flag", title: opts.flags[s.index], text: "⚑" }) : null,
        s.status === "error" ? el("span", { "class": "badge error", text: "error" }) : null);
      label.style.paddingLeft = (s.depth || 0) * 14 + "px";
      var node = el("div", { "class": "step-row" + (s.index === selected ? " selected" : "") + (s.status === "error" ? " failed" : ""), role: "option", id: "step-" + s.index,
        "aria-selected": String(s.index === selected), "data-index": s.index, title: s.name + " · " + ms(s.duration_ms) },
        el("span", { "class": "idx", text: s.index }), label, el("div", { "class": "lane" }, bar));
      node.style.top = i * ROW + "px";
      node.addEventListener("click", function () { choose(s.index); });
      return node;
    }
    function choose(index, scroll) {
      selected = index;
      box.setAttribute("aria-activedescendant", "step-" + index);
      var pos = steps.findIndex(function (s) { return s.index === index; });
      if (scroll && pos >= 0) {
        var y = pos * ROW;
        if (y < box.scrollTop || y + ROW > box.scrollTop + box.clientHeight) box.scrollTop = Math.max(0, y - box.clientHeight / 2);
      }
      draw();
      opts.onselect(index);
    }
    box.addEventListener("scroll", function () { window.requestAnimationFrame(draw); });
    box.addEventListener("keydown", function (e) {
      var pos = steps.findIndex(function (s) { return s.index === selected; });
      if (e.key === "ArrowDown" || e.key === "j") { e.preventDefault(); choose(steps[Math.min(steps.length - 1, pos + 1)].index, true); }
      else if (e.key === "ArrowUp" || e.key === "k") { e.preventDefault(); choose(steps[Math.max(0, pos - 1)].index, true); }
      else if (e.key === "Home") { e.preventDefault(); choose(steps[0].index, true); }
      else if (e.key === "End") { e.preventDefault(); choose(steps[steps.length - 1].index, true); }
    });
    box.choose = choose;
    setTimeout(draw, 0);
    return box;
  }
  function stepDetail(s, findings) {
    if (!s) return el("p", { "class": "muted", text: "Select a step to see its messages, arguments and result." });
    var meta = el("dl", { "class": "kv" });
    function kv(k, v) { if (v !== null && v !== undefined && v !== "") { meta.appendChild(el("dt", { text: k })); meta.appendChild(el("dd", { text: String(v) })); } }
    kv("type", s.type); kv("status", s.status); kv("span", s.span_id); kv("model", s.model); kv("tool", s.tool_name);
    kv("tool call id", s.tool_call_id); kv("requested by", s.requested_by ? "step " + s.requested_by : null);
    kv("parent", s.parent_index ? "step " + s.parent_index : null); kv("started", when(s.start_time)); kv("duration", ms(s.duration_ms));
    kv("tokens in/out", s.input_tokens !== null || s.output_tokens !== null ? int(s.input_tokens) + " / " + int(s.output_tokens) : null);
    kv("cost", s.cost_usd !== null && s.cost_usd !== undefined ? cost(s.cost_usd) : null);
    var mine = (findings || []).filter(function (f) { return f.index === s.index || (f.steps || []).indexOf(s.index) >= 0; });
    return el("section", { "class": "detail", "aria-labelledby": "detail-title" },
      el("h2", { id: "detail-title", text: "Step " + s.index + ": " + s.name }), meta,
      s.status === "error" ? el("div", { "class": "error-box", role: "alert", text: errorText(s) }) : null,
      mine.length ? el("div", {}, el("h3", { text: "Findings on this step" }), findingList(mine)) : null,
      el("h3", { text: s.type === "llm" ? "Messages sent" : s.type === "tool" ? "Arguments" : "Input" }), payload(s.input),
      el("h3", { text: s.type === "llm" ? "Answer" : s.type === "tool" ? "Result" : "Output" }), payload(s.output));
  }
  function findingList(findings, jump) {
    return el("ul", { "class": "findings" }, findings.map(function (f) {
      var at = f.index !== null && f.index !== undefined ? el(jump ? "button" : "span", jump ? { "class": "more", type: "button", text: "step " + f.index, onclick: function () { jump(f.index); } } : { text: "step " + f.index }) : null;
      return el("li", {}, badge(f.severity), " ", el("b", { text: f.kind }), " ", el("span", { "class": "muted", text: "(" + (f.layer || "?") + ")" }), " ", at, ": ",
        f.evidence && typeof f.evidence === "string" ? f.evidence : f.message || "", f.evidence && typeof f.evidence === "object" ? el("details", {}, el("summary", { text: "evidence" }), json(f.evidence)) : null,
        f.suggestion ? el("div", { "class": "sugg", text: "→ " + f.suggestion }) : null);
    }));
  }
  function envTable(env) {
    var keys = Object.keys(env || {});
    if (!keys.length) return el("p", { "class": "muted", text: "No environment snapshot recorded." });
    return el("details", {}, el("summary", { text: keys.length + " facts" }),
      el("table", { "class": "env-table" }, el("tbody", {}, keys.map(function (k) { return el("tr", {}, el("td", { text: k }), el("td", { "class": "mono", text: env[k] })); }))));
  }
  function runView(data, params) {
    MESSAGES = Object.assign({}, MESSAGES, data.messages || {});
    var run = data.run, steps = data.steps, findings = data.findings || [];
    var pending = data.findings === undefined && !REPORT;
    if (pending) {
      // The run is drawn at once; what `check` finds comes next (it reads the agent's earlier runs).
      var shown = location.hash;
      api("api/findings?" + qs({ id: run.run_id })).then(function (f) {
        if (location.hash.split("?")[0] !== shown.split("?")[0]) return;  // the user moved on
        var box = document.querySelector(".steps");
        var top = box ? box.scrollTop : 0;
        var step = query(location.hash.split("?")[1] || "").step;
        runView(Object.assign({}, data, f), Object.assign({}, params, step ? { step: step } : {}));
        var again = document.querySelector(".steps");
        if (again) again.scrollTop = top;
      }).catch(function (e) {
        runView(Object.assign({}, data, { findings: [], findings_error: String(e && e.message || e) }), params);
      });
    }
    var flags = {};
    findings.forEach(function (f) { if (f.index !== null && f.index !== undefined) flags[f.index] = (flags[f.index] ? flags[f.index] + "; " : "") + f.kind; });
    var detail = el("div", { id: "detail" });
    var initial = params.step ? Number(params.step) : (steps.length ? steps[0].index : null);
    var list = stepList(steps, { label: "Steps of " + run.name, flags: flags, selected: initial, onselect: function (i) {
      detail.replaceChildren(stepDetail(steps.find(function (s) { return s.index === i; }), findings));
      var h = location.hash.split("?")[0];
      history.replaceState(null, "", h + "?step=" + i);
    } });
    detail.appendChild(stepDetail(steps.find(function (s) { return s.index === initial; }), findings));
    function jump(i) { list.choose(i, true); list.focus(); }
    show(run.name, [
      el("h1", {}, run.name + " ", badge(run.status)), runSummary(run),
      run.status === "error" && run.error ? el("div", { "class": "error-box", role: "alert", text: run.error }) : null,
      el("h2", { text: "Findings" + (findings.length ? " (" + findings.length + ")" : "") }),
      pending ? el("p", { "class": "muted", id: "findings-pending", text: "Checking the run…" }) :
      data.findings_error ? el("p", { "class": "muted", text: "Findings could not be computed: " + data.findings_error }) :
        findings.length ? findingList(findings, jump) : el("p", { "class": "muted", text: "No findings." }),
      el("h2", { text: "Steps (" + steps.length + ")" }),
      steps.length ? el("div", { "class": "layout" }, el("div", {}, el("p", { "class": "muted", text: "Timeline: each bar is a step's time in the run. ↑/↓ move between steps; ← #n is the model step that asked for a tool." }), list), detail)
        : el("p", { "class": "muted", text: "This run has no steps." }),
      el("h2", { text: "Environment" }), envTable(data.environment)]);
    say(run.name + ": " + steps.length + " steps, " + findings.length + " findings");
  }

  // -- two runs ----------------------------------------------------------------------------------------
  function oneLine(s) {
    if (!s) return el("span", { "class": "muted", text: "—" });
    return el("span", {}, el("span", { "class": "type t-" + s.type, text: s.type }), stepLabel(s), s.status === "error" ? el("span", { "class": "badge error", text: "error" }) : null);
  }
  function diffView(data) {
    MESSAGES = Object.assign({}, MESSAGES, data.messages || {});
    var d = data.diff, A = data.a, B = data.b;
    var byA = {}, byB = {};
    A.steps.forEach(function (s) { byA[s.index] = s; });
    B.steps.forEach(function (s) { byB[s.index] = s; });
    var first = d.first_divergence;
    var onlyDiff = false;
    var body = el("tbody");
    var firstRow = null;
    function isFirst(p) { return first && p.index_a === first.index_a && p.index_b === first.index_b && p.status === first.kind; }
    function draw() {
      body.replaceChildren(); firstRow = null;
      d.pairs.forEach(function (p) {
        if (onlyDiff && p.status === "same") return;
        var cls = (p.status === "same" ? "same" : "changed") + (isFirst(p) ? " first" : "") + " clickable";
        var tr = el("tr", { "class": cls, tabindex: "0", "aria-label": "pair A " + (p.index_a || "none") + " B " + (p.index_b || "none") + ": " + p.status },
          el("td", { "class": "num", text: p.index_a || "" }), el("td", {}, oneLine(byA[p.index_a])),
          el("td", { "class": "status", text: p.status + (isFirst(p) ? "  ← first divergence" : "") }),
          el("td", { "class": "num", text: p.index_b || "" }), el("td", {}, oneLine(byB[p.index_b])));
        if (isFirst(p)) { tr.id = "first-divergence"; firstRow = tr; }
        var open = null;
        function toggle() {
          if (open) { open.remove(); open = null; tr.classList.remove("open-detail"); return; }
          tr.classList.add("open-detail");
          open = el("tr", { "class": "pair-detail" }, el("td", { colspan: "5" }, pairDetail(p, byA[p.index_a], byB[p.index_b])));
          tr.after(open);
        }
        tr.addEventListener("click", toggle);
        tr.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(); } });
        body.appendChild(tr);
      });
    }
    draw();
    var goto = el("button", { "class": "btn primary", type: "button", text: "Go to the first divergence", onclick: function () {
      if (!firstRow) { onlyDiff = false; draw(); }
      if (firstRow) { firstRow.scrollIntoView({ block: "center" }); firstRow.focus(); if (!firstRow.classList.contains("open-detail")) firstRow.click(); }
    } });
    var banner = first ? el("div", { "class": "diverge-box", role: "status" },
        el("b", { text: "First divergence: " + first.kind }), " at step A#" + (first.index_a || "–") + " / B#" + (first.index_b || "–") + (first.detail ? " — " + first.detail : ""), " ", goto)
      : el("div", { "class": "same-box", role: "status", text: "No divergence: every step aligned." });
    var only = el("input", { type: "checkbox", id: "only-diff" });
    only.addEventListener("change", function () { onlyDiff = only.checked; draw(); });
    var totals = d.totals || {};
    var totalRows = Object.keys(totals).map(function (k) {
      var t = totals[k] || {};
      var f = /cost/.test(k) ? cost : /ms|time|duration/.test(k) ? ms : int;
      return el("tr", {}, el("td", { text: k }), el("td", { "class": "num", text: f(t.a) }), el("td", { "class": "num", text: f(t.b) }),
        el("td", { "class": "num", text: t.a !== null && t.b !== null && typeof t.a === "number" ? (t.b - t.a > 0 ? "+" : "") + (f === cost ? cost(t.b - t.a) : f === ms ? ms(t.b - t.a) : int(t.b - t.a)) : "" }));
    });
    var envLines = data.environment_lines || [];
    show("Diff " + A.run.name, [
      el("h1", { text: "Diff: " + A.run.name + " vs " + B.run.name }),
      el("div", { "class": "side" },
        el("div", {}, el("h2", {}, "A ", el("a", { href: runHref(A.run.run_id), text: A.run.name }), " ", badge(A.run.status)), runSummary(A.run)),
        el("div", {}, el("h2", {}, "B ", el("a", { href: runHref(B.run.run_id), text: B.run.name }), " ", badge(B.run.status)), runSummary(B.run))),
      banner,
      el("h2", { text: "Steps side by side" }),
      el("label", { "for": "only-diff" }, only, " show only the pairs that differ"),
      el("table", { "class": "pairs" }, el("caption", { "class": "sr-only", text: "Aligned steps of A and B; press Enter on a row for its details" }),
        el("thead", {}, el("tr", {}, el("th", { scope: "col", "class": "num", text: "A#" }), el("th", { scope: "col", text: "A" }), el("th", { scope: "col", text: "difference" }),
          el("th", { scope: "col", "class": "num", text: "B#" }), el("th", { scope: "col", text: "B" }))), body),
      el("h2", { text: "Totals" }),
      el("table", {}, el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "" }), el("th", { scope: "col", "class": "num", text: "A" }), el("th", { scope: "col", "class": "num", text: "B" }), el("th", { scope: "col", "class": "num", text: "B − A" }))), el("tbody", {}, totalRows)),
      el("h2", { text: "Environment" }),
      envLines.length ? el("ul", {}, envLines.map(function (l) { return el("li", { "class": "mono", text: l }); })) : el("p", { "class": "muted", text: "Same environment." })]);
    say(first ? "first divergence: " + first.kind + " at step " + (first.index_b || first.index_a) : "no divergence");
  }
  function pairDetail(p, a, b) {
    var changes = p.changes || [];
    return el("div", {},
      changes.length ? el("table", { "class": "changes" }, el("thead", {}, el("tr", {}, el("th", { text: "what" }), el("th", { text: "A" }), el("th", { text: "B" }))),
        el("tbody", {}, changes.map(function (c) {
          return el("tr", {}, el("td", { "class": "mono", text: c.path || c.field || c.what || "" }), el("td", {}, valueCell(c.a)), el("td", {}, valueCell(c.b)));
        }))) : null,
      el("div", { "class": "side" },
        el("div", {}, el("h3", { text: a ? "A step " + a.index : "not in A" }), a ? stepIO(a) : null),
        el("div", {}, el("h3", { text: b ? "B step " + b.index : "not in B" }), b ? stepIO(b) : null)));
  }
  function valueCell(v) { return typeof v === "string" ? longText(v) : json(v); }
  function stepIO(s) {
    return el("div", {}, s.status === "error" ? el("div", { "class": "error-box", text: errorText(s) }) : null,
      el("details", {}, el("summary", { text: s.type === "tool" ? "arguments" : "input" }), payload(s.input)),
      el("details", { open: true }, el("summary", { text: s.type === "tool" ? "result" : "output" }), payload(s.output)));
  }
  function runHref(id) { return "#/run/" + encodeURIComponent(id); }

  // -- routing -----------------------------------------------------------------------------------------
  function home() {
    var page = CONFIG.page;
    if (!page) return fail("This report holds no run.");
    if (page.kind === "diff") return diffView(page);
    return runView(page, {});
  }
  function reportRun(id) {
    var page = CONFIG.page;
    if (page.kind === "run") return runView(page, {});
    var side = [page.a, page.b].find(function (t) { return t.run.run_id === id; });
    if (!side) return fail("This report does not hold run " + id);
    return runView({ run: side.run, steps: side.steps, environment: side.environment, findings: [], messages: page.messages }, {});
  }
  function route() {
    var hash = location.hash.replace(/^#/, "") || "/";
    var q = hash.indexOf("?");
    var path = q < 0 ? hash : hash.slice(0, q), params = query(q < 0 ? "" : hash.slice(q + 1));
    var parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    try {
      if (!parts.length || parts[0] === "runs") return runsPage(params);
      if (parts[0] === "run" && parts[1]) {
        if (REPORT) return reportRun(parts[1]);
        main.replaceChildren(el("p", { "class": "muted", text: "Loading run…" }));
        return api("api/run?" + qs({ id: parts[1], findings: "0" })).then(function (d) { runView(d, params); main.focus(); }).catch(fail);
      }
      if (parts[0] === "diff" && parts[1] && parts[2]) {
        if (REPORT) return home();
        main.replaceChildren(el("p", { "class": "muted", text: "Comparing…" }));
        return api("api/diff?" + qs({ a: parts[1], b: parts[2] })).then(function (d) { diffView(d); main.focus(); }).catch(fail);
      }
      fail("Unknown page: " + hash);
    } catch (e) { fail(e); }
  }
  document.getElementById("mode").textContent = REPORT ? "report · " + (CONFIG.created || "") : "local view · read-only";
  if (REPORT) document.getElementById("nav-runs").remove();
  window.addEventListener("hashchange", route);
  route();
})();
