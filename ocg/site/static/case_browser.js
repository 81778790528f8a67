// The case browser's script (templates/case_browser.html inlines it): filters, the answer as written
// with the concepts found highlighted, its quality beside its order verdict, sorting, CSV export, and
// an address that holds the whole view. The page is built from DOM nodes: every text from the data is
// a text node (textContent), never markup.
"use strict";
window.onerror = function (msg) { document.getElementById("errors").textContent = "Error: " + msg; };
// One entry per (model, condition, template): its chunk file under cases/ and its counts (ocg/site/browser.py)
const INDEX = JSON.parse(document.getElementById("case-index").textContent);
const TOTAL = INDEX.reduce((n, e) => n + e.n, 0);
const PAGE = 50, MAX_CHUNKS = 40;  // at paper size a chunk holds 4,608 answers
const MULTI = ["model", "condition", "template"];
const SINGLE = ["set", "perm", "outcome", "inorder", "pos", "nonword", "judge", "q", "sort", "dir"];
const DEFAULTS = {dir: "desc"};  // every other control's default is "" (all, or no order)
const LIST_FLAGS = ["copies_list", "bare_list"];  // not degenerate: an answer that echoes the prompt's list
const ORDER = {order: 0, reordered: 1, missed: 2, failed: 3};
// the filters on a column a run may lack (its family not scored): control id -> field, and what it is
const QUALITY_FILTERS = {inorder: ["in_order", "an order verdict"], pos: ["pos_in_order", "PoS-correct coverage (the coverage family)"],
  nonword: ["has_nonword", "non-word flags (the nonword family)"], judge: ["judge_in_order", "judge verdicts (no judge scored them)"]};
// numeric sorts: an answer's value (null: not scored, always last)
const SORTS = {length: (it) => String(field(it, "answer") || "").length, slor: (it) => num(it, "slor"),
  perplexity: (it) => num(it, "perplexity"), judge_score: (it) => num(it, "judge_score")};
const SORT_FIELDS = {slor: "SLOR (the slor family)", perplexity: "perplexity (the perplexity family)", judge_score: "judge ratings (no judge scored them)"};
const $ = (id) => document.getElementById(id);
let page = 0, items = [], compare = null, loads = 0, compares = 0, capped = 0;
function el(tag, props, ...kids) {  // an element whose strings are text nodes: nothing from the data becomes markup
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const kid of kids.flat(Infinity)) if (kid != null && kid !== "") node.append(kid);
  return node;
}
function lines(parts) { return parts.flatMap((p, i) => i ? [el("br"), p] : [p]); }
function say(text) { $("notice").textContent = ($("notice").textContent ? $("notice").textContent + " " : "") + text; }
function chosen(id) { return [...$(id).selectedOptions].map((o) => o.value); }
function values(id) { return [...$(id).options].map((o) => o.value); }
function fillMulti(id, list, want) {
  const sel = $(id), keep = new Set(want || chosen(id));
  sel.replaceChildren(...list.map((v) => new Option(v, v)));
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
function has(item, name) { return item.c.ix[name] !== undefined; }
function num(item, name) { const v = has(item, name) ? field(item, name) : null; return v == null ? null : v; }
function sampleOf(item) { const s = has(item, "sample") ? field(item, "sample") : null; return s == null ? "" : s; }  // "" for a greedy run
async function itemsOf(entries) {
  const chunks = await Promise.all(entries.map(chunk));
  return entries.flatMap((e, i) => chunks[i].rows.map((row) => ({e, c: chunks[i], row})));
}
async function load(first) {
  const mine = ++loads;  // a later choice wins over a slower earlier load
  if (!first) $("notice").textContent = "";
  let entries = selectedEntries();
  capped = 0;
  if (entries.length > MAX_CHUNKS) {
    capped = entries.length;
    say(`${entries.length} model/condition/template combinations chosen; showing the first ${MAX_CHUNKS} (a browser holds only so many answers): narrow the filters.`);
    entries = entries.slice(0, MAX_CHUNKS);
  }
  const loaded = await itemsOf(entries);
  if (mine !== loads) return;
  items = loaded;
  setChoices();
  offer();
  render();
  if (compare) showCompare();
}
function setLabel(item) { return [...field(item, "concepts")].sort().join(", "); }
function setChoices() {
  const labels = new Map(items.map((it) => [field(it, "set_id"), setLabel(it)]));
  const sel = $("set"), old = sel.value || presetSet || "";
  presetSet = "";  // the address's set applies once; "all" chosen later stays "all"
  sel.replaceChildren(new Option("all", ""), ...[...labels].sort((a, b) => a[1].localeCompare(b[1])).map(([s, l]) => new Option(l, s)));
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
function offer() {  // the quality filters and sorts these answers carry; one asked for on a column they lack says so and is off
  if (!items.length) return;
  const carried = (name) => items.some((it) => has(it, name));
  for (const [id, [name, what]] of Object.entries(QUALITY_FILTERS)) {
    $(id).closest("label").hidden = !carried(name);
    if (!carried(name) && $(id).value !== "") { say(`These answers carry no ${what}: the ${id} filter is off.`); $(id).value = ""; }
  }
  for (const o of $("sort").options) if (SORT_FIELDS[o.value]) o.hidden = !carried(o.value);
  const how = $("sort").value;
  if (SORT_FIELDS[how] && !carried(how)) { say(`These answers carry no ${SORT_FIELDS[how]}: sorted by concept set, permutation instead.`); $("sort").value = ""; }
  $("dir").disabled = !SORTS[$("sort").value];
}
function outcome(item) {
  if (["unclosed_think", "no_output"].includes(field(item, "answer_status"))) return "failed";
  if (field(item, "in_order")) return "order";
  if (field(item, "all_present")) return "reordered";
  return "missed";
}
function yesNo(want, value) { return want === "" || (value != null && (want === "yes") === Boolean(value)); }
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
  for (const [id, [name]] of Object.entries(QUALITY_FILTERS)) {
    if (id !== "judge" && !yesNo($(id).value, num(item, name))) return false;
  }
  const judge = $("judge").value, verdict = num(item, "judge_in_order");
  if (judge === "disagrees" && !judgeDisagrees(item)) return false;
  if (judge === "agrees" && (verdict == null || judgeDisagrees(item))) return false;
  if (judge === "unjudged" && !(has(item, "judge_in_order") && verdict == null)) return false;
  if (q && !String(field(item, "answer") || "").toLowerCase().includes(q)) return false;
  return true;
}
function answerNodes(item) {  // the answer as written, each concept found in a <mark> with its number
  const answer = field(item, "answer"), spans = field(item, "spans") || [];
  if (answer === null) return ["(failed extraction)"];
  const by = new Map();
  spans.forEach(([s, e, c]) => { const k = s + ":" + e; by.set(k, [s, e, [...(by.get(k) || [s, e, []])[2], c]]); });
  const out = [];
  let at = 0;
  for (const [s, e, cs] of [...by.values()].sort((a, b) => a[0] - b[0])) {
    if (s < at) continue;
    out.push(answer.slice(at, s), el("mark", {title: `concept ${cs.join(", ")}`}, answer.slice(s, e), el("sup", {}, cs.join(","))));
    at = e;
  }
  return [...out, answer.slice(at)];
}
function tokenNodes(item) {
  const toks = field(item, "tokens"), pos = field(item, "match_positions");
  if (!toks.length) return ["(none)"];
  const at = {};
  pos.forEach((p, i) => { if (p >= 0) (at[p] = at[p] || []).push(i + 1); });
  return toks.flatMap((t, i) => [i ? " " : "", at[i] ? el("mark", {title: `concept ${at[i].join(", ")} at token ${i}`}, t, el("sup", {}, `${at[i].join(",")}@${i}`)) : t]);
}
function sorted(list) {
  const how = $("sort").value, key = SORTS[how], sign = $("dir").value === "asc" ? 1 : -1;
  if (how === "outcome") return [...list].sort((a, b) => ORDER[outcome(a)] - ORDER[outcome(b)]);
  if (!key) return list;
  return [...list].sort((a, b) => {  // stable; an answer without a value last, either way
    const x = key(a), y = key(b);
    return x == null || y == null ? (x == null) - (y == null) : sign * (x - y);
  });
}
function csvCell(v) {
  if (v == null) return "";
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "";  // a number stays one (SLOR -5.8)
  if (typeof v === "boolean") return String(v);
  let s = String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = "'" + s;  // a model's text is never read as a spreadsheet formula
  return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}
let csvUrl = null, shown = [];
const QUALITY = ["pos_all_present", "pos_in_order", "has_nonword", "nonwords", "slor", "perplexity"];
function exportCsv(list) {
  const head = ["model", "condition", "template_id", "set_id", "concept_set", "perm_index", "sample", "concepts", "answer", "outcome", "flags",
    ...QUALITY, "judge_score", "judge_in_order", "judge_reason"];
  const lines = list.map((it) => [it.e.model, it.e.condition, it.e.template_id, field(it, "set_id"), setLabel(it),
    field(it, "perm_index"), sampleOf(it), field(it, "concepts").join(" "), field(it, "answer"), outcome(it), field(it, "flags").join(" "),
    ...QUALITY.map((q) => { const v = num(it, q); return Array.isArray(v) ? v.join(" ") : v; }),
    field(it, "judge_score"), field(it, "judge_in_order"), field(it, "judge_reason")].map(csvCell).join(","));
  if (csvUrl) URL.revokeObjectURL(csvUrl);
  csvUrl = URL.createObjectURL(new Blob([[head.join(","), ...lines].join("\n") + "\n"], {type: "text/csv"}));
  $("csv").href = csvUrl;
}
function address() {  // the whole view: every choice that differs from its default, and the multi-choices always
  const parts = [];
  for (const id of MULTI) parts.push(id + "=" + chosen(id).map(encodeURIComponent).join(","));
  for (const id of SINGLE) {
    if (id === "dir" ? SORTS[$("sort").value] : $(id).value !== "") parts.push(id + "=" + encodeURIComponent($(id).value));
  }
  if (compare) parts.push("compare=" + encodeURIComponent(compare.join("~")));
  return "#" + parts.join("&");
}
function optionText(id) { return $(id).options[$(id).selectedIndex].text; }
function which(id, one, many) {
  const c = chosen(id);
  return c.length === $(id).options.length && c.length > 1 ? `${many} all` : `${c.length > 1 ? many : one} ${c.join(", ")}`;
}
function describe() {  // what the view holds, in words: the choices, the filters and the order
  const parts = [which("model", "model", "models"), which("condition", "condition", "conditions"), which("template", "template", "templates")];
  if (capped) parts.push(`the first ${MAX_CHUNKS} of ${capped} combinations`);
  if ($("set").value) parts.push(`concept set ${optionText("set")}`);
  if ($("perm").value !== "") parts.push(`permutation ${$("perm").value}`);
  if ($("outcome").value) parts.push(optionText("outcome"));
  const words = {inorder: ["in order", "not in order"], pos: ["PoS-correct in order", "not PoS-correct in order"],
    nonword: ["with a non-word", "without a non-word"]};
  for (const [id, [yes, no]] of Object.entries(words)) if ($(id).value) parts.push($(id).value === "yes" ? yes : no);
  if ($("judge").value) parts.push(optionText("judge"));
  if ($("q").value) parts.push(`text contains “${$("q").value}”`);
  const how = $("sort").value;
  parts.push(`sorted by ${optionText("sort")}` + (SORTS[how] ? ` ${$("dir").value === "asc" ? "ascending" : "descending"}` : ""));
  return parts.join(", ");
}
function judgeDisagrees(item) { const j = num(item, "judge_in_order"); return j != null && j !== field(item, "in_order"); }
function judgeNodes(item) {  // the LLM judge's rating and order verdict, where one scored this answer
  if (!has(item, "judge_in_order")) return [];
  const j = field(item, "judge_in_order"), score = field(item, "judge_score"), why = field(item, "judge_reason");
  const verdict = j === null ? (why ? `unjudged: ${why}` : "unjudged") : `reads ${(field(item, "judge_order") || []).join(" ")}: ${j ? "in order" : "not in order"}`;
  return [el("br"), el("span", {class: "judge" + (judgeDisagrees(item) ? " bad" : "")},
    `judge${score == null ? "" : ` ${score}/5`}, ${verdict}${judgeDisagrees(item) ? " (disagrees)" : ""}`)];
}
function outcomeCell(item) {
  const o = outcome(item), cls = o === "order" ? "ok" : (o === "reordered" ? "warn" : "bad");
  const label = {order: "all present, in order", reordered: "all present, another order", missed: "missed", failed: "failed"}[o];
  return el("td", {class: cls}, label, judgeNodes(item));
}
function qualityCell(item) {  // what the answer is as a sentence: each scored column, "–" where this answer has none
  const parts = [];
  if (has(item, "pos_in_order")) {
    const inOrder = field(item, "pos_in_order"), present = num(item, "pos_all_present");
    parts.push(inOrder == null ? "PoS-correct: –" : el("span", {class: "pos " + (inOrder ? "ok" : present ? "warn" : "bad")},
      inOrder ? "PoS-correct, in order" : present ? "PoS-correct, another order" : "not PoS-correct"));
  }
  if (has(item, "has_nonword")) {
    const words = num(item, "nonwords") || [], flag = field(item, "has_nonword");
    parts.push(flag == null ? "non-words: –" : flag ? el("span", {class: "bad"}, "non-words: ",
      words.flatMap((w, i) => [i ? ", " : "", el("span", {class: "nonword"}, w)])) : "no non-word");
  }
  const number = (name, label, digits, why) => {
    if (!has(item, name)) return;
    const v = field(item, name);
    parts.push(v == null ? el("span", {title: why}, `${label} –`) : el("span", {class: "num"}, `${label} ${v.toFixed(digits)}`));
  };
  number("slor", "SLOR", 2, "not scored (under two tokens, or no text)");
  number("perplexity", "perplexity", 1, "not scored (under two tokens, or no text)");
  return el("td", {class: "quality"}, lines(parts));
}
function flagsCell(item) { return el("td", {}, field(item, "flags").map((f) => el("span", {class: "flag"}, f))); }
const answers = (n) => `${n} answer${n === 1 ? "" : "s"}`;
function render() {
  const list = sorted(items.filter(keep));
  const pages = Math.max(1, Math.ceil(list.length / PAGE));
  page = Math.min(page, pages - 1);
  $("permalink").href = address();
  if (location.hash !== address()) history.replaceState(null, "", address());
  shown = list;
  $("csv").textContent = `export ${answers(list.length)} (CSV)`;
  $("nomatch").textContent = list.length ? "" : "No answer matches these filters.";
  $("view").textContent = `showing ${list.length} of ${TOTAL} answers: ${describe()}`;
  const judged = list.filter((it) => num(it, "judge_in_order") != null);
  $("count").textContent = `${answers(list.length)}, page ${page + 1} of ${pages}` + (judged.length ?
    `; the judge's order verdict differs from ocg's on ${judged.filter(judgeDisagrees).length} of ${judged.length} judged` : "");
  $("rows").replaceChildren(...list.slice(page * PAGE, page * PAGE + PAGE).map((it) => {
    const concepts = field(it, "concepts").map((c, i) => [`${i + 1}. ${c}`, field(it, "match_positions")[i] < 0 ? [" ", el("span", {class: "bad"}, "(missing)")] : []]);
    const key = [field(it, "set_id"), field(it, "perm_index"), it.e.template_id].join("~");
    const link = el("a", {href: "#", class: "cmp"}, "side by side");
    link.onclick = (ev) => { ev.preventDefault(); compare = compareKey(key); showCompare(); render(); };
    return el("tr", {class: "case"},
      el("td", {}, setLabel(it), el("br"), el("span", {class: "mono"}, `p${field(it, "perm_index")} · ${field(it, "pos_pattern")}`,
        sampleOf(it) === "" ? "" : ` · sample ${sampleOf(it)}`), el("br"), link),
      el("td", {}, it.e.model, el("br"), it.e.condition, el("br"), "template ", String(it.e.template_id)),
      el("td", {}, lines(concepts)),
      el("td", {}, el("span", {class: "answer"}, answerNodes(it)), el("details", {}, el("summary", {}, "spaCy tokens"), tokenNodes(it))),
      outcomeCell(it), qualityCell(it), flagsCell(it),
      el("td", {}, el("details", {}, el("summary", {}, "prompt / raw"), el("pre", {}, field(it, "prompt")), el("hr"), el("pre", {}, field(it, "raw")))));
  }));
}
// compare=SET~PERM~TEMPLATE: [set, perm, template], or null for anything else (a set id may hold "~")
function compareKey(text) {
  const parts = text.split("~");
  if (parts.length < 3) return null;
  const [perm, template] = parts.slice(-2), set = parts.slice(0, -2).join("~");
  return set !== "" && /^\d+$/.test(perm) && /^\d+$/.test(template) ? [set, String(Number(perm)), String(Number(template))] : null;
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
  if (mine !== compares || !compare) return;
  const found = all.filter((it) => field(it, "set_id") === set && field(it, "perm_index") === Number(perm));
  if (!found.length) {  // not applied: dropped from the view, so "link to this view" never keeps it
    say(`The address asks to compare ${compare.join(" ")}, which no answer of this report is.`);
    compare = null; $("compare").replaceChildren(); render(); return;
  }
  const first = found[0], close = el("a", {href: "#", id: "closecmp"}, "close");
  close.onclick = (ev) => { ev.preventDefault(); compare = null; $("compare").replaceChildren(); render(); };
  $("compare").replaceChildren(
    el("h2", {}, `Side by side: ${setLabel(first)}, asked as ${field(first, "concepts").join(" → ")} (permutation ${perm}, template ${template})`),
    el("table", {id: "side"}, el("thead", {}, el("tr", {}, ["model", "condition", "answer, concepts found", "outcome", "quality", "flags"].map((h) => el("th", {}, h)))),
      el("tbody", {}, found.map((it) => el("tr", {class: "side"}, el("td", {}, it.e.model, sampleOf(it) === "" ? "" : ` (sample ${sampleOf(it)})`),
        el("td", {}, it.e.condition), el("td", {}, answerNodes(it)), outcomeCell(it), qualityCell(it), flagsCell(it))))),
    el("p", {}, close));
}
// The address holds the whole view: cases.html#model=a,b&condition=ordered&template=1&outcome=missed&sort=slor&dir=asc.
// Whatever it leaves out takes its default (the first model, condition and template; every other filter off).
const asked = {set: "", perm: ""};
let presetSet = "";
function wanted(preset, id, known) {
  if (!preset.has(id)) return null;
  const list = preset.get(id) === "all" ? known : preset.get(id).split(",").filter((v) => v !== "");
  const bad = list.filter((v) => !known.includes(v));
  if (bad.length) say(`The address asks for ${id}=${bad.join(",")}, which this report does not have (it has: ${known.join(", ") || "none"}).`);
  return list.filter((v) => known.includes(v));
}
function presetChoice(preset, id, what) {
  if (!preset.has(id)) return;
  if (values(id).includes(preset.get(id))) $(id).value = preset.get(id);
  else say(`The address asks for ${id}=${preset.get(id)}, which is not ${what} (${values(id).filter((o) => o).join(", ")}); showing ${optionText(id)}.`);
}
function applyAddress(hash) {
  const preset = new URLSearchParams(hash.slice(1));
  for (const id of SINGLE) $(id).value = DEFAULTS[id] || "";
  compare = null;
  $("compare").replaceChildren();
  asked.set = presetSet = preset.get("set") || "";
  asked.perm = "";
  const want = {model: null, condition: null, template: null};
  const fill = () => refreshChoices({model: want.model || [], condition: want.condition || [], template: want.template || []});
  for (const id of MULTI) { fill(); want[id] = wanted(preset, id, values(id)); }
  fill();
  for (const id of MULTI) if (want[id] && !want[id].length) say(`Showing ${id} ${chosen(id).join(", ")} instead.`);
  presetChoice(preset, "outcome", "an outcome");
  for (const id of ["inorder", "pos", "nonword", "judge"]) presetChoice(preset, id, "a choice of this filter");
  presetChoice(preset, "sort", "a sort order");
  presetChoice(preset, "dir", "a direction");
  if (preset.has("perm")) {
    if (/^\d+$/.test(preset.get("perm"))) $("perm").value = asked.perm = String(Number(preset.get("perm")));
    else say(`The address asks for perm=${preset.get("perm")}, which is not a permutation number (0, 1, 2, ...); showing all permutations.`);
  }
  if (preset.has("q")) $("q").value = preset.get("q");
  if (preset.has("compare")) {
    compare = compareKey(preset.get("compare"));
    if (!compare) say(`The address asks to compare ${preset.get("compare")}, which is not a concept set, permutation and template (compare=SET~PERM~TEMPLATE); showing no comparison.`);
  }
  $("dir").disabled = !SORTS[$("sort").value];
}
applyAddress(location.hash);
// a link followed or an address typed in this tab: the view it names, the rest at defaults
window.addEventListener("hashchange", () => { $("notice").textContent = ""; applyAddress(location.hash); page = 0; load(true); });
for (const id of MULTI) $(id).onchange = () => { refreshChoices(); page = 0; load(); };
$("all").onclick = () => { for (const id of MULTI) { for (const o of $(id).options) o.selected = true; refreshChoices(); } for (const o of $("template").options) o.selected = true; page = 0; load(); };
for (const id of SINGLE) $(id).oninput = () => { page = 0; $("notice").textContent = ""; $("dir").disabled = !SORTS[$("sort").value]; render(); };
$("csv").onclick = () => exportCsv(shown);  // built when asked for: up to 40 chunks of answers
$("prev").onclick = () => { page = Math.max(0, page - 1); render(); };
$("next").onclick = () => { page += 1; render(); };
load(true);
