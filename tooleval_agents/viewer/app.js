// tooleval view: runs, a run's examples, one example (or the same example in two runs).
// Data arrive as data/*.js files calling TOOLEVAL.put(key, value); every value is shown as
// text (textContent), never parsed as HTML.
"use strict";

const TOOLEVAL = window.TOOLEVAL = {
  data: {}, waiting: {}, loading: {},
  put(key, value) {
    this.data[key] = value;
    (this.waiting[key] || []).forEach((resolve) => resolve(value));
    delete this.waiting[key];
  },
};
const PAGE = 100;

function load(key) {
  return new Promise((resolve, reject) => {
    if (key in TOOLEVAL.data) { resolve(TOOLEVAL.data[key]); return; }
    (TOOLEVAL.waiting[key] = TOOLEVAL.waiting[key] || []).push(resolve);
    if (TOOLEVAL.loading[key]) return;
    TOOLEVAL.loading[key] = true;
    const script = document.createElement("script");
    script.src = "data/" + key + ".js";
    script.onerror = () => reject(new Error("cannot load data/" + key + ".js"));
    document.head.appendChild(script);
  });
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// A verdict's text with its `names` in code, as DOM nodes (text, never parsed as HTML); a
// backtick without its pair stays as written.
function inline(text) {
  const parts = String(text).split("`");
  return parts.map((part, i) => i % 2 === 0 ? part :
    i < parts.length - 1 ? el("code", {}, part) : "`" + part);
}

// A name that may break after its hyphens, underscores and dots (a <wbr> after each) when it
// is long; a short one stays on one line.
function breakable(text) {
  const parts = String(text).split(/(?<=[-_.=])/);
  if (String(text).length <= 12) return el("span", {class: "nowrap"}, text);
  return parts.flatMap((part, i) => i ? [el("wbr"), part] : [part]);
}

function num(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "n/a";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(2);
  return String(value);
}

function usd(cost) {
  if (!cost || !("total_usd" in cost)) return "";
  if (cost.total_usd === null) return "unknown price";
  const per = cost.per_success_usd === null ? null :
    el("div", {class: "ci"}, `${cost.per_success_usd.toFixed(4)} per success`);
  return [cost.total_usd.toFixed(4), per];
}

// When a run started (recorded in UTC), to the minute, in the reader's time zone: the date
// over the time.
function started(run) {
  const at = new Date(run.created_at || "");
  if (Number.isNaN(at.getTime())) return "";
  const two = (n) => String(n).padStart(2, "0");
  return [`${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())}`, el("br"),
          `${two(at.getHours())}:${two(at.getMinutes())}`];
}

// A run's name: its folder's (what `tooleval run` printed and `tooleval compare` takes).
function runName(run) {
  return (run.path || run.id).split(/[\\/]/).filter(Boolean).pop() || run.id;
}

function callCost(price, usage) {
  if (!price || !usage) return null;
  const cached = usage.cached_input_tokens || 0;
  const cachedRate = price.cached_input === null ? price.input : price.cached_input;
  return ((usage.input_tokens - cached) * price.input + cached * cachedRate +
          usage.output_tokens * price.output) / 1e6;
}

function pretty(value) {
  if (typeof value === "string") return value;
  return JSON.stringify(value, null, 2);
}

function block(title, value, open) {
  if (value === null || value === undefined || (Array.isArray(value) && !value.length)) return null;
  return el("details", {open: open !== false, class: "block"}, el("summary", {}, title),
            el("pre", {}, pretty(value)));
}

function parseHash() {
  const [path, query] = location.hash.replace(/^#\/?/, "").split("?");
  const params = new URLSearchParams(query || "");
  return {parts: path.split("/").filter(Boolean).map(decodeURIComponent), params};
}

function link(parts, params) {
  const query = params && [...params].length ? "?" + params.toString() : "";
  return "#/" + parts.map(encodeURIComponent).join("/") + query;
}

function headline(run) {
  return run.headline && run.headline.length ? run.headline : Object.keys(run.metrics || {}).slice(0, 4);
}

function runLabel(run) {
  const opts = Object.entries(run.strategy_options || {}).map(([k, v]) => k + "=" + v).join(",");
  return [run.strategy + (opts ? "(" + opts + ")" : ""), agentLabel(run), run.model]
    .filter(Boolean).join(" · ");
}

// An agent command's run says whether it ran sealed (--agent-sandbox): an unsealed one could
// read the data, so its numbers are marked.
function agentLabel(run) {
  return run.agent ? run.agent + (run.sealed === false ? " (unsealed)" : "") : "";
}

function nOfN(run) {
  // --epochs: n counts attempts; the examples are n / epochs
  const epochs = +((run.options || {}).epochs || 1);
  const scored = run.counts.scored !== undefined ? run.counts.scored : run.examples;
  if (epochs > 1) return nOfN({...run, options: {}, counts: {scored: Math.round(scored / epochs)}}) +
    ` × ${epochs}`;
  const n = scored;
  return run.split_examples && run.split_examples !== n ? n + " of " + run.split_examples : String(n);
}

// A run not finished: "running: 37 of 120" (examples done of those planned; attempts with
// --epochs), "stopped: ..." for one interrupted before its summary; null when finished.
function progress(run) {
  if (!run.state || run.state === "finished") return null;
  return `${run.state}: ${run.examples} of ${run.planned}`;
}

// Served (tooleval view --serve writes TOOLEVAL.data.live): while a run is going, the run
// list and its run page reload at the pace the site is rewritten. An example page, or a page
// whose filter box is being typed in, is left alone.
let reloadTimer = null;
function scheduleReload(runs, parts) {
  clearTimeout(reloadTimer);
  document.body.removeAttribute("data-reload-s");
  const live = TOOLEVAL.data.live;
  const watched = parts[0] === "run" ? runs.filter((r) => r.id === parts[1]) : runs;
  if (!live || parts[2] === "ex" || !watched.some((r) => r.state === "running")) return;
  const seconds = Math.max(1, +live.every || 3);
  document.body.setAttribute("data-reload-s", String(seconds));
  reloadTimer = setTimeout(() => {
    const typing = /^(INPUT|SELECT|TEXTAREA)$/.test((document.activeElement || {}).tagName || "");
    if (typing) scheduleReload(runs, parts); else location.reload();
  }, seconds * 1000);
}

function liveNote(runs) {
  const going = runs.filter((r) => r.state === "running").length;
  if (!going) return null;
  const pace = TOOLEVAL.data.live ? ` (this page reloads every ${num(Math.max(1, +TOOLEVAL.data.live.every || 3))} s)` : "";
  return el("p", {class: "note", id: "live"}, `${going} run(s) in progress${pace}`);
}

// --- pages ---------------------------------------------------------------------------------

// The options that differ between the listed runs (an option a run lacks counts as empty).
function differingOptions(runs) {
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r.options || {})))].sort();
  return keys.filter((k) => new Set(runs.map((r) => (r.options || {})[k] || "")).size > 1);
}

function runsPage(runs) {
  // headline columns per benchmark, each filled only on that benchmark's rows
  const benchmarks = [...new Set(runs.map((r) => r.benchmark))];
  const columns = benchmarks.flatMap((b) => [...new Set(runs.filter((r) => r.benchmark === b)
    .flatMap(headline))].map((m) => ({benchmark: b, metric: m})));
  const options = differingOptions(runs);
  // headers and names break after _ and -, not anywhere: the table fits a 1,400 px window
  const table = el("table", {id: "runs"},
    el("thead", {}, el("tr", {}, [
      ...["run", "started", "split", "strategy", "model", ...options, "n of N"]
        .map((h) => el("th", {}, breakable(h))),
      ...columns.map((c) => el("th", {title: c.benchmark}, breakable(c.metric),
        benchmarks.length > 1 ? el("div", {class: "ci"}, c.benchmark) : null)),
      el("th", {}, "tokens/ example"), el("th", {}, "cost $")])),
    el("tbody", {}, runs.map((run) => el("tr", {"data-run": run.id},
      el("td", {class: "name"}, el("a", {href: link(["run", run.id]), title: run.path || run.id},
        breakable(runName(run)))),
      el("td", {class: "nowrap started", title: run.created_at}, started(run)),
      el("td", {}, breakable(run.split)),
      el("td", {}, run.strategy + (run.agent ? " · " + agentLabel(run) : "")),
      el("td", {}, run.model || ""),
      options.map((k) => el("td", {class: "option"}, (run.options || {})[k] || "—")),
      el("td", {class: "num nowrap" + (progress(run) ? " progress " + run.state : "")},
        progress(run) || nOfN(run)),
      columns.map((c) => c.benchmark !== run.benchmark ? el("td", {class: "other"}, "") :
        el("td", {class: "num"}, c.metric in run.metrics ? num(run.metrics[c.metric]) : "",
          (run.ci || {})[c.metric] ? el("div", {class: "ci"},
            `${num(run.ci[c.metric][0])}–${num(run.ci[c.metric][1])}`) : null)),
      el("td", {class: "num"}, num((run.usage.input_tokens_per_example || 0) +
                                   (run.usage.output_tokens_per_example || 0))),
      el("td", {class: "num cost"}, usd(run.cost))))));
  return [el("h1", {}, runs.length + " run(s)"), liveNote(runs),
          el("div", {class: "wide"}, table)];
}

function filterRows(rows, params) {
  const status = params.get("status"), kind = params.get("kind"), metric = params.get("metric");
  const low = params.get("min"), high = params.get("max");
  const reason = params.get("reason"), search = matcher(params.get("q"));
  return rows.filter((r) => (!status || r.status === status) &&
    (!kind || (r.error_kind || "") === kind) &&
    (!reason || r.reason === reason) && (!search || search(r)) &&
    (!metric || ((low === null || low === "" || (r.scores[metric] ?? -Infinity) >= +low) &&
                 (high === null || high === "" || (r.scores[metric] ?? Infinity) <= +high))));
}

// Search by id, number or text (the reason, the error): the rows hold no full answers, so a
// 10,000-example run filters without loading its chunks.
function matcher(query) {
  const q = (query || "").trim().toLowerCase();
  if (!q) return null;
  return (r) => r.key === q || String(r.id).toLowerCase().includes(q) ||
    (r.why || "").toLowerCase().includes(q) || (r.error || "").toLowerCase().includes(q);
}

// Failure reasons with their counts; a click filters the table to one (again: all).
function reasonFacet(rows, params, go) {
  const counts = new Map();
  rows.forEach((r) => counts.set(r.reason || "?", (counts.get(r.reason || "?") || 0) + 1));
  const current = params.get("reason");
  const entries = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return el("div", {class: "facet", id: "reasons"}, el("span", {class: "muted"}, "why: "),
    entries.map(([reason, n]) => el("a", {href: "#", class: "reason" + (reason === current ? " on" : ""),
      "data-reason": reason,
      onclick: (e) => { e.preventDefault(); go({reason: reason === current ? "" : reason}); }},
      `${reason} (${n})`)));
}

function sortRows(rows, key, desc) {
  const value = (r) => key === "index" ? r.index : key === "status" ? r.status :
    key === "tokens" ? r.tokens : key === "latency" ? r.latency_s : r.scores[key];
  const sorted = [...rows].sort((a, b) => {
    const x = value(a), y = value(b);
    if (x === y) return a.index - b.index || a.epoch - b.epoch;
    if (x === undefined || x === null) return 1;
    if (y === undefined || y === null) return -1;
    return x < y ? -1 : 1;
  });
  return desc ? sorted.reverse() : sorted;
}

function runPage(run, rows, params) {
  const metrics = headline(run);
  const go = (changes) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) { if (v === "" || v === null) next.delete(k); else next.set(k, v); }
    if (!("page" in changes)) next.delete("page");
    location.hash = link(["run", run.id], next);
  };
  const select = (name, values, label) => el("label", {}, label + " ",
    el("select", {name, onchange: (e) => go({[name]: e.target.value})},
      el("option", {value: ""}, "all"),
      values.map((v) => el("option", {value: v, selected: params.get(name) === v}, v || "(none)"))));
  const kinds = [...new Set(rows.map((r) => r.error_kind || ""))].filter(Boolean).sort();
  const statuses = [...new Set(rows.map((r) => r.status))].sort();
  const allMetrics = [...new Set(rows.flatMap((r) => Object.keys(r.scores)))];
  const filters = el("div", {class: "filters"},
    select("status", statuses, "status"), select("kind", kinds, "error kind"),
    select("metric", allMetrics, "metric"),
    el("label", {}, "from ", el("input", {name: "min", size: 5, value: params.get("min") || "",
                                           onchange: (e) => go({min: e.target.value})})),
    el("label", {}, "to ", el("input", {name: "max", size: 5, value: params.get("max") || "",
                                         onchange: (e) => go({max: e.target.value})})),
    el("label", {}, "search ", el("input", {name: "q", size: 18, value: params.get("q") || "",
      placeholder: "id, # or text", onchange: (e) => go({q: e.target.value})})));
  const sortKey = params.get("sort") || "index", desc = params.get("desc") === "1";
  const shown = sortRows(filterRows(rows, params), sortKey, desc);
  const page = Math.max(0, +(params.get("page") || 0));
  const slice = shown.slice(page * PAGE, (page + 1) * PAGE);
  const head = (key, label) => el("th", {class: "sortable",
    onclick: () => go({sort: key, desc: sortKey === key && !desc ? "1" : ""})},
    label + (sortKey === key ? (desc ? " ▼" : " ▲") : ""));
  const table = el("table", {id: "examples"},
    el("thead", {}, el("tr", {}, head("index", "#"), head("status", "status"),
      el("th", {}, "error kind"), el("th", {}, "why"), metrics.map((m) => head(m, m)),
      head("tokens", "tokens"), head("latency", "latency s"))),
    el("tbody", {}, slice.map((r, i) => el("tr", {"data-index": r.key, class: r.status},
      // j opens the first example shown; the filter goes along, so j/k walk the filtered rows
      el("td", {}, el("a", {href: link(["run", run.id, "ex", r.key], params),
                            "data-key": i === 0 ? "j" : null}, r.key)),
      el("td", {}, r.status), el("td", {}, r.error_kind || ""),
      el("td", {class: "why"}, inline(r.why || "")),
      metrics.map((m) => el("td", {class: "num"}, m in r.scores ? num(r.scores[m]) : "")),
      el("td", {class: "num"}, r.tokens), el("td", {class: "num"}, num(r.latency_s))))));
  const pager = el("div", {class: "pager"},
    el("button", {disabled: page === 0, onclick: () => go({page: page - 1})}, "previous"),
    ` ${shown.length ? page * PAGE + 1 : 0}-${page * PAGE + slice.length} of ${shown.length} `,
    el("button", {disabled: (page + 1) * PAGE >= shown.length, onclick: () => go({page: page + 1})}, "next"));
  const summary = el("table", {class: "summary"}, el("tbody", {},
    Object.entries(run.metrics).map(([k, v]) => el("tr", {}, el("td", {}, k),
      el("td", {class: "num"}, num(v)))),
    Object.entries(run.not_computed || {}).map(([k, why]) => el("tr", {}, el("td", {}, k),
      el("td", {class: "num"}, "not computed (" + why + ")")))));
  return [el("h1", {}, run.experiment), liveNote([run]),
          progress(run) ? el("p", {class: "progress " + run.state, id: "progress"}, progress(run) +
            (run.state === "stopped" ? " (interrupted: run the same command again to resume)" : "")) : null,
          el("p", {class: "muted"}, `${run.split} · ${runLabel(run)} · n ${nOfN(run)} · ` +
             Object.entries(run.counts).map(([k, v]) => k + " " + v).join(", ")),
          (run.notes || []).map((n) => el("p", {class: "note"}, "note: " + n)),
          paidLine(run),
          el("details", {class: "block"}, el("summary", {}, "metrics"), summary),
          reasonFacet(rows, params, go), filters, table, pager];
}

// What was paid to produce the run's results (every session that wrote them), and what its
// last session paid: apart from the answers' tokens above, which a response cache leaves alone.
function paidLine(run) {
  const paid = (p) => `${p.model_calls || 0} model call(s), tokens ${p.input_tokens || 0} in / ` +
    `${p.output_tokens || 0} out, ${p.cache_hits || 0} cache hit(s), ` +
    (p.usd === null || p.usd === undefined ? "unknown price" : "$" + p.usd.toFixed(4));
  const spent = run.spent || {}, session = run.session || {};
  if (!Object.keys(spent).length) return null;
  return el("p", {class: "muted", id: "paid"}, "paid: " + paid(spent) +
    (Object.keys(session).length ? " · last session: " + paid(session) : ""));
}

function message(m) {
  const calls = m.tool_calls ? el("pre", {class: "calls"}, pretty(m.tool_calls)) : null;
  return el("div", {class: "message " + (m.role || "")},
    el("div", {class: "role"}, (m.role || "?") + (m.name ? " · " + m.name : "") +
       (m.status === "error" ? " · error" : "")),
    el("pre", {}, pretty(m.content)), calls);
}

function exampleCost(run, detail) {
  const prices = run.prices || {};
  const model = callCost(prices.model, detail.usage);
  const judged = detail.judge_usage && detail.judge_usage.model_calls;
  const judge = judged ? callCost(prices.judge, detail.judge_usage) : 0;
  return model === null || judge === null ? "unknown price" : "$" + (model + judge).toFixed(5);
}

// The verdict line and the predicted-vs-gold table: marked by colour and by a text marker,
// so the difference reads without colour too.
const MARKS = {ok: "✓", wrong: "✗ wrong", missing: "− missing", extra: "+ extra"};

function verdictLine(detail) {
  const v = detail.verdict || {passed: detail.status === "ok", reason: detail.status};
  return el("p", {class: "verdict " + (v.passed ? "passed" : "failed")},
            v.passed ? "PASSED" : "FAILED", v.reason ? [" — ", ...inline(v.reason)] : null);
}

function markCell(mark, text) {
  return el("td", {class: "mark " + mark}, text);
}

function diffTable(detail) {
  const rows = (detail.verdict && detail.verdict.rows) || [];
  if (!rows.length) return null;
  const body = [];
  rows.forEach((row, i) => {
    body.push(el("tr", {class: "call " + row.mark},
      // UltraTool rows are gold steps (the scorer aligns by step), AppBench rows gold calls
      el("td", {}, row.step ? `step ${row.step}` : `call ${i + 1}`),
      el("td", {}, row.pred || "—"), el("td", {}, row.gold || "—"),
      markCell(row.mark, MARKS[row.mark] || row.mark)));
    row.args.forEach((a) => body.push(el("tr", {class: "arg " + a.mark},
      el("td", {class: "argname"}, a.name), el("td", {}, a.pred || "—"), el("td", {}, a.gold || "—"),
      markCell(a.mark, MARKS[a.mark] || a.mark))));
  });
  return el("table", {class: "diff"},
    el("thead", {}, el("tr", {}, ["", "predicted", "gold", ""].map((h) => el("th", {}, h)))),
    el("tbody", {}, body));
}

function comment(text) {
  // a long comment (every unresolved dependency spelled out) folds to its first line
  if (!text) return el("td", {class: "comment"}, "");
  const first = String(text).split("\n")[0];
  if (first === text && first.length <= 120) return el("td", {class: "comment"}, text);
  return el("td", {class: "comment"}, el("details", {}, el("summary", {}, first.slice(0, 120) + " …"),
                                         el("pre", {}, text)));
}

function exampleColumn(run, detail) {
  if (!detail) return el("div", {class: "column"}, el("h2", {}, runLabel(run)),
                         el("p", {}, "this run has no such example"));
  const score = detail.score || {};
  const scores = el("table", {class: "scores"}, el("tbody", {},
    Object.entries(score.scores || {}).map(([k, v]) => el("tr", {}, el("td", {}, k),
      el("td", {class: "num"}, num(v)), comment((score.comments || {})[k]))),
    Object.entries(score.parts || {}).map(([k, v]) => el("tr", {}, el("td", {}, k),
      el("td", {class: "num"}, num(v.hits) + " / " + num(v.total)), el("td", {}, "")))));
  const calls = (detail.model_calls || []).map((c, i) => el("details", {class: "block call"},
    el("summary", {}, `model call ${i + 1}` + (c.tools ? ` · ${c.tools.length} tool(s) bound` : "") +
       (c.request ? ` · ${c.request.format} through the gateway` : "")),
    c.messages.map(message),
    c.tools ? block("tools", c.tools, false) : null,
    // what an outside agent's request carried besides (its model name, unused fields)
    c.request ? block("request", c.request, false) : null,
    c.output ? message(c.output) : el("p", {class: "error"}, c.error || "no answer")));
  const out = detail.outputs || {};
  return el("div", {class: "column"},
    el("h2", {}, runLabel(run)),
    verdictLine(detail),
    diffTable(detail),
    // an answer that was not read: what the model said matters, not the empty prediction
    out.parse_error ? block("the answer, not read: " + out.parse_error,
                            (out.raw_outputs || []).slice(-1)[0] || "(empty)")
                    : block("prediction", out.prediction),
    el("p", {class: "status " + detail.status}, detail.status +
       (detail.error_kind ? " · " + detail.error_kind : "") + (detail.error ? ": " + detail.error : "")),
    el("p", {class: "muted"}, `tokens ${detail.usage.input_tokens} in / ${detail.usage.output_tokens} out · ` +
       `${detail.usage.model_calls} model call(s) · ${num(detail.latency_s)} s` +
       (detail.judge_usage && detail.judge_usage.model_calls ?
        ` · judge ${detail.judge_usage.input_tokens} in / ${detail.judge_usage.output_tokens} out` : "") +
       ` · cost ${exampleCost(run, detail)}`),
    el("h3", {}, "scores"), scores,
    score.error ? el("p", {class: "error"}, score.error) : null,
    block("input", detail.inputs, false),
    block("gold answer", detail.reference_outputs, false),
    el("details", {class: "block"}, el("summary", {}, `model calls (${calls.length})`),
       calls.length ? calls : el("p", {class: "muted"}, "none recorded")),
    block("raw outputs", out.raw_outputs, false),
    block("trace", out.trace, false),
    Object.entries(score.evidence || {}).map(([k, v]) => block("scoring saw: " + k, v, false)));
}

async function examplePage(run, rows, index, params, runs) {
  // index: "37", or "37@2" for the third attempt of example 37 (--epochs)
  const row = rows.find((r) => r.key === index);
  if (!row) return [el("p", {class: "error"}, `no example ${index} in ${run.experiment}`)];
  const chunk = await load(run.id + "/chunk-" + row.chunk);
  const detail = chunk.find((d) => d.key === index);
  const others = runs.filter((r) => r.id !== run.id && r.split === run.split);
  const withId = params.get("with");
  const columns = [exampleColumn(run, detail)];
  if (withId) {
    const other = runs.find((r) => r.id === withId);
    if (other) {
      const otherRows = await load(other.id + "/index");
      const otherRow = otherRows.find((r) => r.key === index);
      const otherDetail = otherRow ?
        (await load(other.id + "/chunk-" + otherRow.chunk)).find((d) => d.key === index) : null;
      columns.push(exampleColumn(other, otherDetail));
    }
  }
  // previous/next (keys k/j) walk the run page's filtered rows when this example is among them
  const filtered = filterRows(rows, params);
  const list = filtered.includes(row) ? filtered : rows;
  const position = list.indexOf(row);
  const nav = (delta) => list[position + delta] ?
    el("a", {href: link(["run", run.id, "ex", list[position + delta].key], params),
             "data-key": delta < 0 ? "k" : "j"},
       delta < 0 ? "← previous (k)" : "next (j) →") : null;
  const compare = others.length ? el("label", {}, "side by side with ",
    el("select", {onchange: (e) => { const p = new URLSearchParams(params);
      if (e.target.value) p.set("with", e.target.value); else p.delete("with");
      location.hash = link(["run", run.id, "ex", index], p); }},
      el("option", {value: ""}, "(none)"),
      others.map((o) => el("option", {value: o.id, selected: o.id === withId}, runLabel(o))))) : null;
  return [el("h1", {}, `${run.split} · example ${index}`),
          el("p", {class: "nav"}, el("a", {href: link(["run", run.id])}, "all examples"), " ",
             nav(-1), " ", nav(1), " ", compare),
          el("div", {class: "columns n" + columns.length, id: "example"}, columns)];
}

async function render() {
  const started = performance.now();
  const app = document.getElementById("app");
  const runs = TOOLEVAL.data.runs || [];
  const {parts, params} = parseHash();
  let content;
  try {
    if (parts[0] === "run" && parts[1]) {
      const run = runs.find((r) => r.id === parts[1]);
      if (!run) throw new Error("no run " + parts[1]);
      document.getElementById("where").textContent = " / " + run.experiment;
      const rows = await load(run.id + "/index");
      content = parts[2] === "ex" ? await examplePage(run, rows, parts[3], params, runs)
                                  : runPage(run, rows, params);
    } else {
      document.getElementById("where").textContent = "";
      content = runsPage(runs);
    }
  } catch (error) {
    content = [el("p", {class: "error"}, String(error.message || error))];
  }
  app.replaceChildren(...content.flat().filter(Boolean));
  document.body.setAttribute("data-render-ms", (performance.now() - started).toFixed(1));
  document.body.setAttribute("data-rendered", location.hash || "#/");
  scheduleReload(runs, parts);
}

window.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey || /^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName)) return;
  const target = document.querySelector(`a[data-key="${e.key}"]`);
  if (target) location.hash = target.getAttribute("href");
});
window.addEventListener("hashchange", render);
window.addEventListener("load", render);
