// The case browser's script (templates/case_browser.html inlines it): filters, the answer as written
// with the concepts found highlighted, sorting, CSV export, and an address that follows the filters.
"use strict";
window.onerror = function (msg) { document.getElementById("errors").textContent = "Error: " + msg; };
// One entry per (model, condition, template): its chunk file under cases/ and its counts (ocg/site/browser.py)
const INDEX = JSON.parse(document.getElementById("case-index").textContent);
const PAGE = 50, MAX_CHUNKS = 40;  // at paper size a chunk holds 4,608 answers
const MULTI = ["model", "condition", "template"], SINGLE = ["set", "perm", "outcome", "q", "sort"];
const OUTCOMES = ["", "present", "order", "reordered", "missed", "degenerate", "truncated", "looping", "copies_list",
  "bare_list", "order_not_copied", "failed", "judge_disagrees"];
const LIST_FLAGS = ["copies_list", "bare_list"];  // not degenerate: an answer that echoes the prompt's list
const ORDER = {order: 0, reordered: 1, missed: 2, failed: 3};
const $ = (id) => document.getElementById(id);
let page = 0, items = [], compare = null, loads = 0, compares = 0;
function esc(s) { return String(s == null ? "" : s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c])); }
function say(text) { $("notice").textContent = ($("notice").textContent ? $("notice").textContent + " " : "") + text; }
function chosen(id) { return [...$(id).selectedOptions].map((o) => o.value); }
function fillMulti(id, values, want) {
  const sel = $(id), keep = new Set(want || chosen(id));
  sel.innerHTML = values.map((v) => `<option value="${esc(v)}">${esc(v)}</option>`).join("");
  for (const o of sel.options) o.selected = keep.has(o.value);
  if (!sel.selectedOptions.length && sel.options.length) sel.options[0].selected = true;
}
function refreshChoices(want) {
  want = want || {};
  fillMulti("model", [...new Set(INDEX.map((e) => e.model))], want.model);
  const models = chosen("model");
  fillMulti("condition", [...new Set(INDEX.filter((e) => models.includes(e.model)).map((e) => e.condition))], want.condition);
  const conds = chosen("condition");
  fillMulti("template", [...new Set(INDEX.filter((e) => models.includes(e.model) && conds.includes(e.condition))
    .map((e) => String(e.template_id)))].sort((a, b) => a - b), want.template);
}
function selectedEntries() {
  const m = chosen("model"), c = chosen("condition"), t = chosen("template");
  return INDEX.filter((e) => m.includes(e.model) && c.includes(e.condition) && t.includes(String(e.template_id)));
}
async function unpack(c) {  // a chunk's rows are gzip'd JSON in base64, inflated by the browser itself (no fetch: file:// works)
  if (!c.gzip) return c;
  const bytes = Uint8Array.from(atob(c.gzip), (ch) => ch.charCodeAt(0));
  return JSON.parse(await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text());
}
const CHUNKS = {};
function chunk(entry) {  // a promise of the entry's rows, loaded once with a <script> tag (file:// allows it)
  const key = entry.file.slice("cases/".length);
  const empty = (why) => { $("errors").textContent = "Error: cannot load " + entry.file + why; return {fields: [], rows: [], ix: {}}; };
  return CHUNKS[key] = CHUNKS[key] || new Promise((resolve) => {
    const tag = document.createElement("script");
    tag.src = entry.file;
    tag.onload = () => unpack(OCG_CASES[key]).then((c) => {
      c.ix = Object.fromEntries(c.fields.map((f, i) => [f, i])); resolve(c);
    }, (e) => resolve(empty(": " + e)));
    tag.onerror = () => resolve(empty(""));
    document.body.appendChild(tag);
  });
}
function field(item, name) { return item.row[item.c.ix[name]]; }
function sampleOf(item) { const s = item.c.ix.sample === undefined ? null : field(item, "sample"); return s == null ? "" : s; }  // "" for a greedy run
async function itemsOf(entries) {
  const chunks = await Promise.all(entries.map(chunk));
  return entries.flatMap((e, i) => chunks[i].rows.map((row) => ({e, c: chunks[i], row})));
}
async function load(first) {
  const mine = ++loads;  // a later choice wins over a slower earlier load
  if (!first) $("notice").textContent = "";
  let entries = selectedEntries();
  if (entries.length > MAX_CHUNKS) {
    say(`${entries.length} model/condition/template combinations chosen; showing the first ${MAX_CHUNKS} (a browser holds only so many answers): narrow the filters.`);
    entries = entries.slice(0, MAX_CHUNKS);
  }
  const loaded = await itemsOf(entries);
  if (mine !== loads) return;
  items = loaded;
  setChoices();
  render();
  if (compare) showCompare();
}
function setLabel(item) { return [...field(item, "concepts")].sort().join(", "); }
function setChoices() {
  const labels = new Map(items.map((it) => [field(it, "set_id"), setLabel(it)]));
  const sel = $("set"), old = sel.value || presetSet || "";
  presetSet = "";  // the address's set applies once; "all" chosen later stays "all"
  sel.innerHTML = '<option value="">all</option>' + [...labels].sort((a, b) => a[1].localeCompare(b[1]))
    .map(([s, l]) => `<option value="${esc(s)}">${esc(l)}</option>`).join("");
  if (labels.has(old)) sel.value = old;
  else if (old && old === asked.set) { asked.set = ""; say(`The address asks for set=${old}, which is not among these answers; showing all sets.`); }
  if (asked.perm !== "") {  // the address's permutation, checked once against the answers loaded
    const perms = [...new Set(items.map((it) => field(it, "perm_index")))].sort((a, b) => a - b);
    if (!perms.includes(Number(asked.perm))) {
      const have = perms.length > 12 ? `${perms[0]}–${perms[perms.length - 1]}` : perms.join(", ");
      say(`The address asks for perm=${asked.perm}, which none of these answers has (they have permutations ${have || "none"}); showing all permutations.`);
      $("perm").value = "";
    }
    asked.perm = "";
  }
}
function outcome(item) {
  if (["unclosed_think", "no_output"].includes(field(item, "answer_status"))) return "failed";
  if (field(item, "in_order")) return "order";
  if (field(item, "all_present")) return "reordered";
  return "missed";
}
function keep(item) {
  const set = $("set").value, perm = $("perm").value, want = $("outcome").value, q = $("q").value.toLowerCase();
  if (set && field(item, "set_id") !== set) return false;
  if (perm !== "" && field(item, "perm_index") !== Number(perm)) return false;
  const o = outcome(item);
  if (want === "present" && !field(item, "all_present")) return false;
  if (want === "degenerate" && field(item, "flags").every((f) => LIST_FLAGS.includes(f))) return false;
  if (["truncated", "looping", ...LIST_FLAGS].includes(want) && !field(item, "flags").includes(want)) return false;
  if (want === "order_not_copied" && (o !== "order" || field(item, "flags").includes("copies_list"))) return false;
  if (["order", "reordered", "missed", "failed"].includes(want) && o !== want) return false;
  if (want === "judge_disagrees" && !judgeDisagrees(item)) return false;
  if (q && !String(field(item, "answer") || "").toLowerCase().includes(q)) return false;
  return true;
}
function answerHtml(item) {
  const answer = field(item, "answer"), spans = field(item, "spans") || [];
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
function tokensHtml(item) {
  const toks = field(item, "tokens"), pos = field(item, "match_positions");
  if (!toks.length) return "(none)";
  const at = {};
  pos.forEach((p, i) => { if (p >= 0) (at[p] = at[p] || []).push(i + 1); });
  return toks.map((t, i) => at[i] ? `<mark title="concept ${at[i].join(", ")} at token ${i}">${esc(t)}<sup>${at[i].join(",")}@${i}</sup></mark>` : esc(t)).join(" ");
}
function sorted(list) {
  const how = $("sort").value;
  if (how === "length") return [...list].sort((a, b) => String(field(b, "answer") || "").length - String(field(a, "answer") || "").length);
  if (how === "outcome") return [...list].sort((a, b) => ORDER[outcome(a)] - ORDER[outcome(b)]);
  return list;
}
function csvCell(v) {
  let s = String(v == null ? "" : v);
  if (/^[=+\-@\t\r]/.test(s)) s = "'" + s;  // a model's text is never read as a spreadsheet formula
  return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}
let csvUrl = null, shown = [];
function exportCsv(list) {
  const head = ["model", "condition", "template_id", "set_id", "concept_set", "perm_index", "sample", "concepts", "answer", "outcome", "flags", "judge_score", "judge_in_order", "judge_reason"];
  const lines = list.map((it) => [it.e.model, it.e.condition, it.e.template_id, field(it, "set_id"), setLabel(it),
    field(it, "perm_index"), sampleOf(it), field(it, "concepts").join(" "), field(it, "answer"), outcome(it), field(it, "flags").join(" "),
    field(it, "judge_score"), field(it, "judge_in_order"), field(it, "judge_reason")].map(csvCell).join(","));
  if (csvUrl) URL.revokeObjectURL(csvUrl);
  csvUrl = URL.createObjectURL(new Blob([[head.join(","), ...lines].join("\n") + "\n"], {type: "text/csv"}));
  $("csv").href = csvUrl;
}
function address() {
  const parts = [];
  for (const id of MULTI) parts.push(id + "=" + chosen(id).map(encodeURIComponent).join(","));
  for (const id of SINGLE) if ($(id).value !== "") parts.push(id + "=" + encodeURIComponent($(id).value));
  if (compare) parts.push("compare=" + encodeURIComponent(compare.join("~")));
  return "#" + parts.join("&");
}
function judgeDisagrees(item) { const j = field(item, "judge_in_order"); return j != null && j !== field(item, "in_order"); }
function judgeText(item) {  // the LLM judge's rating and order verdict, where one scored this answer
  const j = field(item, "judge_in_order"), score = field(item, "judge_score");
  if (j === undefined) return "";
  const why = field(item, "judge_reason");
  const verdict = j === null ? (why ? `unjudged: ${esc(why)}` : "unjudged") : `reads ${esc((field(item, "judge_order") || []).join(" "))}: ${j ? "in order" : "not in order"}`;
  return `<br><span class="judge${judgeDisagrees(item) ? " bad" : ""}">judge${score == null ? "" : ` ${score}/5`}, ${verdict}${judgeDisagrees(item) ? " (disagrees)" : ""}</span>`;
}
function outcomeCell(item) {
  const o = outcome(item), cls = o === "order" ? "ok" : (o === "reordered" ? "warn" : "bad");
  const label = {order: "all present, in order", reordered: "all present, another order", missed: "missed", failed: "failed"}[o];
  return `<td class="${cls}">${label}${judgeText(item)}</td>`;
}
function flagsCell(item) { return `<td>${field(item, "flags").map((f) => `<span class="flag">${esc(f)}</span>`).join("")}</td>`; }
function render() {
  const list = sorted(items.filter(keep));
  const pages = Math.max(1, Math.ceil(list.length / PAGE));
  page = Math.min(page, pages - 1);
  $("permalink").href = address();
  if (location.hash !== address()) history.replaceState(null, "", address());
  shown = list;
  $("csv").textContent = `export ${list.length} answers (CSV)`;
  $("nomatch").textContent = list.length ? "" : "No answer matches these filters.";
  const judged = list.filter((it) => field(it, "judge_in_order") != null);
  $("count").textContent = `${list.length} answers, page ${page + 1} of ${pages}` + (judged.length ?
    `; the judge's order verdict differs from ocg's on ${judged.filter(judgeDisagrees).length} of ${judged.length} judged` : "");
  $("rows").innerHTML = list.slice(page * PAGE, page * PAGE + PAGE).map((it) => {
    const concepts = field(it, "concepts").map((c, i) => `${i + 1}. ${esc(c)}` + (field(it, "match_positions")[i] < 0 ? ' <span class="bad">(missing)</span>' : "")).join("<br>");
    const key = [field(it, "set_id"), field(it, "perm_index"), it.e.template_id].join("~");
    const sample = sampleOf(it) === "" ? "" : ` · sample ${esc(sampleOf(it))}`;
    return `<tr class="case"><td>${esc(setLabel(it))}<br><span class="mono">p${field(it, "perm_index")} · ${esc(field(it, "pos_pattern"))}${sample}</span>` +
      `<br><a href="#" class="cmp" data-key="${esc(key)}">side by side</a></td>` +
      `<td>${esc(it.e.model)}<br>${esc(it.e.condition)}<br>template ${esc(it.e.template_id)}</td>` +
      `<td>${concepts}</td><td><span class="answer">${answerHtml(it)}</span><details><summary>spaCy tokens</summary>${tokensHtml(it)}</details></td>` +
      outcomeCell(it) + flagsCell(it) +
      `<td><details><summary>prompt / raw</summary><pre>${esc(field(it, "prompt"))}</pre><hr><pre>${esc(field(it, "raw"))}</pre></details></td></tr>`;
  }).join("");
  for (const a of document.querySelectorAll("a.cmp")) a.onclick = (ev) => { ev.preventDefault(); compare = a.dataset.key.split("~"); showCompare(); render(); };
}
async function showCompare() {  // one instance (set, permutation, template) across every model and condition
  const [set, perm, template] = compare;
  const mine = ++compares;
  let entries = INDEX.filter((e) => String(e.template_id) === String(template));
  if (entries.length > MAX_CHUNKS) {
    say(`Side by side: ${entries.length} models and conditions; showing the first ${MAX_CHUNKS}.`);
    entries = entries.slice(0, MAX_CHUNKS);
  }
  const all = await itemsOf(entries);
  if (mine !== compares) return;
  const found = all.filter((it) => field(it, "set_id") === set && field(it, "perm_index") === Number(perm));
  if (!found.length) { $("compare").innerHTML = ""; say(`The address asks to compare ${compare.join(" ")}, which no answer of this report is.`); return; }
  const first = found[0];
  $("compare").innerHTML = `<h2>Side by side: ${esc(setLabel(first))}, asked as ${esc(field(first, "concepts").join(" → "))} (permutation ${esc(perm)}, template ${esc(template)})</h2>` +
    `<table id="side"><thead><tr><th>model</th><th>condition</th><th>answer, concepts found</th><th>outcome</th><th>flags</th></tr></thead><tbody>` +
    found.map((it) => `<tr class="side"><td>${esc(it.e.model)}${sampleOf(it) === "" ? "" : ` (sample ${esc(sampleOf(it))})`}</td><td>${esc(it.e.condition)}</td><td>${answerHtml(it)}</td>${outcomeCell(it)}${flagsCell(it)}</tr>`).join("") +
    `</tbody></table><p><a href="#" id="closecmp">close</a></p>`;
  $("closecmp").onclick = (ev) => { ev.preventDefault(); compare = null; $("compare").innerHTML = ""; render(); };
}
// Filters can be preset in the address: cases.html#model=a,b&condition=ordered&template=1&outcome=missed
const preset = new URLSearchParams(location.hash.slice(1));
const asked = {set: preset.get("set") || "", perm: ""};
let presetSet = asked.set;
function wanted(id, known) {
  if (!preset.has(id)) return null;
  const asked = preset.get(id) === "all" ? known : preset.get(id).split(",").filter((v) => v !== "");
  const bad = asked.filter((v) => !known.includes(v));
  if (bad.length) say(`The address asks for ${id}=${bad.join(",")}, which this report does not have (it has: ${known.join(", ") || "none"}).`);
  return asked.filter((v) => known.includes(v));
}
const want = {model: wanted("model", [...new Set(INDEX.map((e) => e.model))])};
refreshChoices(want);
want.condition = wanted("condition", [...$("condition").options].map((o) => o.value));
refreshChoices(want);
want.template = wanted("template", [...$("template").options].map((o) => o.value));
refreshChoices(want);
for (const id of MULTI) if (want[id] && !want[id].length) say(`Showing ${id} ${chosen(id).join(", ")} instead.`);
if (preset.has("outcome")) {
  if (OUTCOMES.includes(preset.get("outcome"))) $("outcome").value = preset.get("outcome");
  else say(`The address asks for outcome=${preset.get("outcome")}, which is not an outcome (${OUTCOMES.filter((o) => o).join(", ")}); showing all.`);
}
if (preset.has("sort")) {
  const sorts = [...$("sort").options].map((o) => o.value);
  if (sorts.includes(preset.get("sort"))) $("sort").value = preset.get("sort");
  else say(`The address asks for sort=${preset.get("sort")}, which is not a sort order (${sorts.filter((o) => o).join(", ")}); showing concept set, permutation.`);
}
if (preset.has("perm")) {
  if (/^\d+$/.test(preset.get("perm"))) $("perm").value = asked.perm = String(Number(preset.get("perm")));
  else say(`The address asks for perm=${preset.get("perm")}, which is not a permutation number (0, 1, 2, ...); showing all permutations.`);
}
if (preset.has("q")) $("q").value = preset.get("q");
if (preset.has("compare")) compare = preset.get("compare").split("~");
for (const id of MULTI) $(id).onchange = () => { refreshChoices(); page = 0; load(); };
$("all").onclick = () => { for (const id of MULTI) { for (const o of $(id).options) o.selected = true; refreshChoices(); } for (const o of $("template").options) o.selected = true; page = 0; load(); };
for (const id of SINGLE) $(id).oninput = () => { page = 0; $("notice").textContent = ""; render(); };
$("csv").onclick = () => exportCsv(shown);  // built when asked for: up to 40 chunks of answers
$("prev").onclick = () => { page = Math.max(0, page - 1); render(); };
$("next").onclick = () => { page += 1; render(); };
load(true);
