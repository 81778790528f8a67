"""The case browser's page (ocg/analysis/browser.py fills in __INDEX__): filters, the answer as
written with the concepts found highlighted, sorting, CSV export, and an address that follows the filters."""

PAGE = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ocg: case browser</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em auto;max-width:78em;padding:0 1em;color:#222}
h1{font-size:1.5em;margin-bottom:.2em} .sub{color:#666;margin-top:0}
fieldset{border:1px solid #ccc;border-radius:6px;margin:0 0 1em;padding:.6em 1em;display:flex;flex-wrap:wrap;gap:.8em 1.4em}
label{font-size:.9em;color:#444} select,input{font-size:.95em;margin-left:.3em}
table{border-collapse:collapse;width:100%;font-size:.9em} th,td{border-bottom:1px solid #e3e3e3;padding:.45em .5em;vertical-align:top;text-align:left}
th{background:#f4f6f8;position:sticky;top:0} td.mono,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em;white-space:pre-wrap;margin:0}
mark{background:#ffe58a;border-radius:3px;padding:0 2px} mark sup{color:#8a5a00;font-size:.7em}
.ok{color:#1a7f37;font-weight:600} .bad{color:#c62828;font-weight:600} .warn{color:#9a6700}
.flag{display:inline-block;background:#eef;border-radius:3px;padding:0 4px;margin:1px;font-size:.8em}
details summary{cursor:pointer;color:#0550ae} #pager{margin:.8em 0;display:flex;gap:.6em;align-items:center}
#errors{color:#c62828}
</style></head><body>
<h1>Case browser</h1>
<p class="sub">Every answer of this report, as the model wrote it. Highlighted: where each concept was found by the order check (superscript: the concept's number in the asked order).</p>
<div id="errors"></div><div id="notice" class="warn"></div><div id="nomatch" class="warn"></div>
<fieldset>
<label>Model<select id="model"></select></label>
<label>Condition<select id="condition"></select></label>
<label>Template<select id="template"></select></label>
<label>Concept set<select id="set"><option value="">all</option></select></label>
<label>Permutation<input id="perm" type="number" min="0" style="width:5em" placeholder="all"></label>
<label>Outcome<select id="outcome">
<option value="">all</option><option value="present">all concepts present</option><option value="order">in order</option>
<option value="reordered">all present, another order</option><option value="missed">a concept missed</option>
<option value="degenerate">degenerate (any flag)</option><option value="truncated">truncated (stopped at the token budget)</option>
<option value="looping">looping (repeats itself)</option><option value="failed">failed extraction</option></select></label>
<label>Text contains<input id="q" type="search" placeholder="word"></label>
<label>Sort by<select id="sort"><option value="">concept set, permutation</option><option value="length">answer length</option>
<option value="outcome">outcome</option></select></label>
</fieldset>
<div id="pager"><button id="prev">&larr; previous</button><span id="count"></span><button id="next">next &rarr;</button>
<a id="permalink" href="#">link to this view</a> <a id="csv" download="cases.csv" href="#">export (CSV)</a></div>
<table><thead><tr><th>concept set / perm</th><th>concepts (asked order)</th><th>answer, concepts found</th><th>outcome</th><th>flags</th><th>prompt and raw output</th></tr></thead>
<tbody id="rows"></tbody></table>
<script>
"use strict";
window.onerror = function (msg) { document.getElementById("errors").textContent = "Error: " + msg; };
const INDEX = __INDEX__;
const PAGE = 50;
const $ = (id) => document.getElementById(id);
let page = 0, current = null;
function esc(s) { return String(s == null ? "" : s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c])); }
function fill(sel, values, keep) {
  const old = keep ? sel.value : null;
  sel.innerHTML = values.map((v) => `<option value="${esc(v)}">${esc(v)}</option>`).join("");
  if (old !== null && values.map(String).includes(old)) sel.value = old;
}
function entries() { return INDEX.filter((e) => e.model === $("model").value && e.condition === $("condition").value); }
function refreshChoices() {
  fill($("condition"), [...new Set(INDEX.filter((e) => e.model === $("model").value).map((e) => e.condition))], true);
  fill($("template"), entries().map((e) => e.template_id), true);
}
function load() {
  const entry = entries().find((e) => String(e.template_id) === $("template").value);
  if (!entry) { $("rows").innerHTML = ""; $("count").textContent = "no answers"; return; }
  const key = entry.file.slice("cases/".length);
  if (window.OCG_CASES && OCG_CASES[key]) { current = OCG_CASES[key]; setChoices(); render(); return; }
  const tag = document.createElement("script");
  tag.src = entry.file;
  tag.onload = () => { current = OCG_CASES[key]; setChoices(); render(); };
  tag.onerror = () => { $("errors").textContent = "Error: cannot load " + entry.file; };
  document.body.appendChild(tag);
}
function field(row, name) { return row[current.fields.indexOf(name)]; }
function setLabel(row) { return [...field(row, "concepts")].sort().join(", "); }
function setChoices() {
  const labels = new Map(current.rows.map((r) => [field(r, "set_id"), setLabel(r)]));
  const sel = $("set"), old = sel.value || preset.get("set") || "";
  sel.innerHTML = '<option value="">all</option>' + [...labels].sort((a, b) => a[1].localeCompare(b[1]))
    .map(([s, l]) => `<option value="${esc(s)}">${esc(l)}</option>`).join("");
  if (labels.has(old)) sel.value = old;
  else if (old && !checked.has("set")) say(`The address asks for set=${old}, which is not among these answers; showing all sets.`);
  checked.add("set");
}
const OUTCOMES = ["", "present", "order", "reordered", "missed", "degenerate", "truncated", "looping", "failed"];
const checked = new Set();
function say(text) { $("notice").textContent = ($("notice").textContent ? $("notice").textContent + " " : "") + text; }
function applyPreset(id) {
  if (!preset.has(id)) return;
  const want = preset.get(id), options = [...$(id).options].map((o) => o.value);
  if (options.includes(want)) { $(id).value = want; return; }
  say(`The address asks for ${id}=${want}, which this report does not have (it has: ${options.filter((o) => o !== "").join(", ") || "none"}); showing ${id} ${$(id).value || "all"}.`);
}
function outcome(row) {
  if (["unclosed_think", "no_output"].includes(field(row, "answer_status"))) return "failed";
  if (field(row, "in_order")) return "order";
  if (field(row, "all_present")) return "reordered";
  return "missed";
}
function keep(row) {
  const set = $("set").value, perm = $("perm").value, want = $("outcome").value, q = $("q").value.toLowerCase();
  if (set && field(row, "set_id") !== set) return false;
  if (perm !== "" && field(row, "perm_index") !== Number(perm)) return false;
  const o = outcome(row);
  if (want === "present" && !field(row, "all_present")) return false;
  if (want === "degenerate" && field(row, "flags").length === 0) return false;
  if (["truncated", "looping"].includes(want) && !field(row, "flags").includes(want)) return false;
  if (["order", "reordered", "missed", "failed"].includes(want) && o !== want) return false;
  if (q && !String(field(row, "answer") || "").toLowerCase().includes(q)) return false;
  return true;
}
function answerHtml(row) {
  const answer = field(row, "answer"), spans = field(row, "spans") || [];
  if (answer === null) return "(failed extraction)";
  if (!spans.length) return esc(answer);
  const by = new Map();
  spans.forEach(([s, e, c]) => { const k = s + ":" + e; by.set(k, [s, e, [...(by.get(k) || [s, e, []])[2], c]]); });
  let out = "", at = 0;
  for (const [s, e, cs] of [...by.values()].sort((a, b) => a[0] - b[0])) {
    if (s < at) continue;
    out += esc(answer.slice(at, s)) + `<mark title="concept ${cs.join(", ")}">${esc(answer.slice(s, e))}<sup>${cs.join(",")}</sup></mark>`;
    at = e;
  }
  return out + esc(answer.slice(at));
}
function tokensHtml(row) {
  const toks = field(row, "tokens"), pos = field(row, "match_positions");
  if (!toks.length) return esc(field(row, "answer") === null ? "(failed extraction)" : field(row, "answer"));
  const at = {};
  pos.forEach((p, i) => { if (p >= 0) (at[p] = at[p] || []).push(i + 1); });
  return toks.map((t, i) => at[i] ? `<mark title="concept ${at[i].join(", ")} at token ${i}">${esc(t)}<sup>${at[i].join(",")}@${i}</sup></mark>` : esc(t)).join(" ");
}
const ORDER = {order: 0, reordered: 1, missed: 2, failed: 3};
function sorted(rows) {
  const how = $("sort").value;
  if (how === "length") return [...rows].sort((a, b) => String(field(b, "answer") || "").length - String(field(a, "answer") || "").length);
  if (how === "outcome") return [...rows].sort((a, b) => ORDER[outcome(a)] - ORDER[outcome(b)]);
  return rows;
}
function csvCell(v) { const s = String(v == null ? "" : v); return /[",\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s; }
let csvUrl = null;
function exportLink(rows) {
  const head = ["model", "condition", "template_id", "set_id", "concept_set", "perm_index", "concepts", "answer", "outcome", "flags"];
  const lines = rows.map((r) => [$("model").value, $("condition").value, $("template").value, field(r, "set_id"), setLabel(r),
    field(r, "perm_index"), field(r, "concepts").join(" "), field(r, "answer"), outcome(r), field(r, "flags").join(" ")].map(csvCell).join(","));
  if (csvUrl) URL.revokeObjectURL(csvUrl);
  csvUrl = URL.createObjectURL(new Blob([[head.join(","), ...lines].join("\n") + "\n"], {type: "text/csv"}));
  $("csv").href = csvUrl;
  $("csv").textContent = `export ${rows.length} answers (CSV)`;
}
function address() {
  const p = new URLSearchParams();
  for (const id of ["model", "condition", "template", "set", "perm", "outcome", "q", "sort"]) if ($(id).value !== "") p.set(id, $(id).value);
  return "#" + p.toString();
}
function render() {
  if (!current) return;
  const rows = sorted(current.rows.filter(keep));
  $("permalink").href = address();
  if (location.hash !== address()) history.replaceState(null, "", address());
  exportLink(rows);
  $("nomatch").textContent = rows.length ? "" : "No answer matches these filters.";
  const pages = Math.max(1, Math.ceil(rows.length / PAGE));
  page = Math.min(page, pages - 1);
  $("count").textContent = `${rows.length} answers, page ${page + 1} of ${pages}`;
  $("rows").innerHTML = rows.slice(page * PAGE, page * PAGE + PAGE).map((r) => {
    const o = outcome(r), cls = o === "order" ? "ok" : (o === "reordered" ? "warn" : "bad");
    const label = {order: "all present, in order", reordered: "all present, another order", missed: "missed", failed: "failed"}[o];
    const concepts = field(r, "concepts").map((c, i) => `${i + 1}. ${esc(c)}` + (field(r, "match_positions")[i] < 0 ? ' <span class="bad">(missing)</span>' : "")).join("<br>");
    return `<tr class="case"><td>${esc(setLabel(r))}<br><span class="mono">p${field(r, "perm_index")} · ${esc(field(r, "pos_pattern"))}</span></td>` +
      `<td>${concepts}</td><td><span class="answer">${answerHtml(r)}</span><details><summary>spaCy tokens</summary>${tokensHtml(r)}</details></td><td class="${cls}">${label}</td>` +
      `<td>${field(r, "flags").map((f) => `<span class="flag">${esc(f)}</span>`).join("")}</td>` +
      `<td><details><summary>prompt / raw</summary><pre>${esc(field(r, "prompt"))}</pre><hr><pre>${esc(field(r, "raw"))}</pre></details></td></tr>`;
  }).join("");
}
fill($("model"), [...new Set(INDEX.map((e) => e.model))], false);
// Filters can be preset in the address, e.g. cases.html#model=m&condition=ordered&template=1&outcome=missed
const preset = new URLSearchParams(location.hash.slice(1));
applyPreset("model");
refreshChoices();
for (const id of ["condition", "template"]) { applyPreset(id); refreshChoices(); }
for (const id of ["outcome", "sort"]) applyPreset(id);
for (const id of ["perm", "q"]) if (preset.has(id)) $(id).value = preset.get(id);
$("model").onchange = () => { refreshChoices(); load(); };
$("condition").onchange = () => { refreshChoices(); load(); };
$("template").onchange = load;
for (const id of ["set", "perm", "outcome", "q", "sort"]) $(id).oninput = () => { page = 0; $("notice").textContent = ""; render(); };
$("prev").onclick = () => { page = Math.max(0, page - 1); render(); };
$("next").onclick = () => { page += 1; render(); };
load();
</script></body></html>
"""
