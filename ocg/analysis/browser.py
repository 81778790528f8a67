"""A static case browser: every answer of a report, filterable, readable from disk (no server).

`cases.html` holds the page; its data sit beside it as one small script per (model, condition,
template) under `cases/` (4,608 answers each at paper size), loaded on demand with a <script>
tag, which browsers allow from file:// where fetch() is refused. Each row shows the prompt as
rendered, the raw output, the extracted answer, its tokens with the concepts' matches
highlighted at the positions the order verdict used (and those positions), and the answer's flags.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from ..io import atomic_path
from ..layout import ModelGenerations, ModelScores, ReportFolder
from ..metrics.degenerate import FLAG_COLUMNS

FIELDS = ["set_id", "perm_index", "concepts", "pos_pattern", "prompt", "raw", "answer", "answer_status",
          "tokens", "match_positions", "all_present", "in_order", "flags"]
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def chunk_name(model: str, condition: str, template_id: int) -> str:
    return _SAFE.sub("_", f"{model}__{condition}__t{template_id}") + ".js"


def _rows(answers: pd.DataFrame, extra: dict[str, tuple[str, str]]) -> list[list]:
    """One list per answer, in FIELDS order; `extra` maps an instance id to (prompt, raw)."""
    rows = []
    has = set(answers.columns)
    for r in answers.to_dict("records"):
        prompt, raw = extra.get(r["instance_id"], ("", ""))
        tokens = r.get("tokens") if "tokens" in has else None
        # the positions the order verdict used; scores from before they were stored: first matches
        positions = r.get("order_positions") if "order_positions" in has else r.get("match_positions")
        rows.append([r["set_id"], int(r["perm_index"]), list(r["concepts"]), r["pos_pattern"], prompt, raw,
                     r["answer"] if isinstance(r["answer"], str) else None, r["answer_status"],
                     list(tokens) if tokens is not None else [],
                     [int(x) for x in positions] if positions is not None else [],
                     bool(r.get("all_present", False)), bool(r.get("in_order", False)),
                     [f for f in FLAG_COLUMNS if bool(r.get(f, False))]])
    return rows


def _prompt_text(prompt) -> str:
    """The prompt as shown: rendered text as is; API (and replay) messages one turn per block."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, (list, tuple)):
        return "\n\n".join(f"[{m.get('role', '?')}]\n{m.get('content', '')}" if isinstance(m, dict) else str(m)
                           for m in prompt)
    return ""


def _prompts_and_raw(generations: pd.DataFrame) -> dict[str, tuple[str, str]]:
    if generations.empty:
        return {}
    prompts = generations["prompt"] if "prompt" in generations else [""] * len(generations)
    raws = generations["raw"] if "raw" in generations else [""] * len(generations)
    return {i: (_prompt_text(p), r if isinstance(r, str) else "")
            for i, p, r in zip(generations["instance_id"], prompts, raws)}


def write_chunks(out_dir: str | Path, answers: pd.DataFrame, generations: dict[str, pd.DataFrame]) -> list[dict]:
    """cases/*.js for these scored answers (one per model, condition, template); their index entries.
    `generations` maps a model to its records (prompt and raw output), which may be empty."""
    chunks = ReportFolder(Path(out_dir)).case_chunks
    index = []
    extra = {m: _prompts_and_raw(g) for m, g in generations.items()}
    for (model, condition, template_id), a in answers.groupby(["model", "condition", "template_id"], sort=True):
        a = a.sort_values(["set_id", "perm_index"])
        name = chunk_name(model, condition, int(template_id))
        payload = {"fields": FIELDS, "rows": _rows(a, extra.get(model, {}))}
        script = (f"window.OCG_CASES = window.OCG_CASES || {{}};\nOCG_CASES[{json.dumps(name)}] = "
                  f"{json.dumps(payload, ensure_ascii=False, separators=(',', ':'))};\n")
        with atomic_path(chunks / name) as tmp:
            tmp.write_text(script.replace("</", "<\\/"), encoding="utf-8")
        index.append({"model": model, "condition": condition, "template_id": int(template_id),
                      "file": f"{chunks.name}/{name}", "n": len(a)})
    return index


def write_page(out_dir: str | Path, index: list[dict]) -> Path:
    page = _PAGE.replace("__INDEX__", json.dumps(index).replace("</", "<\\/"))
    path = ReportFolder(Path(out_dir)).cases
    with atomic_path(path) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return path


ANSWER_COLUMNS = ["instance_id", "model", "condition", "template_id", "set_id", "perm_index", "concepts",
                  "pos_pattern", "answer", "answer_status", "tokens", "match_positions", "order_positions", "all_present",
                  "in_order", *FLAG_COLUMNS]


def _model_chunks(out_dir: str, model: str, scores_root: str, generations_root: str) -> list[dict]:
    """One model's chunks (its answers and generation records read here, then dropped)."""
    from ..generation.store import read_generations
    path = ModelScores.of(model, scores_root).answers
    if not path.exists():
        return []
    present = set(_parquet_columns(path))
    answers = pd.read_parquet(path, columns=[c for c in ANSWER_COLUMNS if c in present])
    return write_chunks(out_dir, answers, {model: read_generations(ModelGenerations.of(model, generations_root).folder)})


def write_case_browser_from(out_dir: str | Path, models: list[str], scores_root: str | Path,
                            generations_root: str | Path, progress: bool = False, processes: int | None = None) -> Path:
    """The case browser for many models, read and written one model at a time per process, so
    memory holds a few models' answers (83k each at paper size), never all of them. Several
    models at once on several CPUs (`processes`, default: every CPU this job may use)."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from tqdm import tqdm

    from ..provenance import available_cpus
    jobs = [(str(out_dir), m, str(scores_root), str(generations_root)) for m in models]
    workers = min(processes or available_cpus(), len(jobs))
    bar = tqdm(total=len(jobs), desc="case browser", unit="model", disable=not progress)
    index = []
    if workers <= 1:
        for job in jobs:
            index += _model_chunks(*job)
            bar.update()
    else:  # spawn: safe from any caller (a kernel, a thread); each worker imports ocg once
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            for entries in pool.map(_model_chunks, *zip(*jobs)):
                index += entries
                bar.update()
    bar.close()
    return write_page(out_dir, index)


def _parquet_columns(path: Path) -> list[str]:
    import pyarrow.parquet as pq
    return pq.read_schema(path).names


_PAGE = r"""<!doctype html>
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
<p class="sub">Every answer of this report. Highlighted: the token where each concept matched first (superscript: concept number, token position).</p>
<div id="errors"></div>
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
</fieldset>
<div id="pager"><button id="prev">&larr; previous</button><span id="count"></span><button id="next">next &rarr;</button></div>
<table><thead><tr><th>set / perm</th><th>concepts (asked order)</th><th>answer, tokens matched</th><th>outcome</th><th>flags</th><th>prompt and raw output</th></tr></thead>
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
function setChoices() {
  const sets = [...new Set(current.rows.map((r) => field(r, "set_id")))];
  const sel = $("set"), old = sel.value || preset.get("set") || "";
  sel.innerHTML = '<option value="">all</option>' + sets.map((s) => `<option value="${esc(s)}">${esc(s.slice(0, 12))}</option>`).join("");
  if (sets.includes(old)) sel.value = old;
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
function tokensHtml(row) {
  const toks = field(row, "tokens"), pos = field(row, "match_positions");
  if (!toks.length) return esc(field(row, "answer") === null ? "(failed extraction)" : field(row, "answer"));
  const at = {};
  pos.forEach((p, i) => { if (p >= 0) (at[p] = at[p] || []).push(i + 1); });
  return toks.map((t, i) => at[i] ? `<mark title="concept ${at[i].join(", ")} at token ${i}">${esc(t)}<sup>${at[i].join(",")}@${i}</sup></mark>` : esc(t)).join(" ");
}
function render() {
  if (!current) return;
  const rows = current.rows.filter(keep);
  const pages = Math.max(1, Math.ceil(rows.length / PAGE));
  page = Math.min(page, pages - 1);
  $("count").textContent = `${rows.length} answers, page ${page + 1} of ${pages}`;
  $("rows").innerHTML = rows.slice(page * PAGE, page * PAGE + PAGE).map((r) => {
    const o = outcome(r), cls = o === "order" ? "ok" : (o === "reordered" ? "warn" : "bad");
    const label = {order: "all present, in order", reordered: "all present, another order", missed: "missed", failed: "failed"}[o];
    const concepts = field(r, "concepts").map((c, i) => `${i + 1}. ${esc(c)}` + (field(r, "match_positions")[i] < 0 ? ' <span class="bad">(missing)</span>' : "")).join("<br>");
    return `<tr class="case"><td class="mono">${esc(field(r, "set_id").slice(0, 8))}<br>p${field(r, "perm_index")}<br>${esc(field(r, "pos_pattern"))}</td>` +
      `<td>${concepts}</td><td>${tokensHtml(r)}</td><td class="${cls}">${label}</td>` +
      `<td>${field(r, "flags").map((f) => `<span class="flag">${esc(f)}</span>`).join("")}</td>` +
      `<td><details><summary>prompt / raw</summary><pre>${esc(field(r, "prompt"))}</pre><hr><pre>${esc(field(r, "raw"))}</pre></details></td></tr>`;
  }).join("");
}
fill($("model"), [...new Set(INDEX.map((e) => e.model))], false);
// Filters can be preset in the address, e.g. cases.html#model=m&condition=ordered&template=1&outcome=missed
const preset = new URLSearchParams(location.hash.slice(1));
if (preset.has("model")) $("model").value = preset.get("model");
refreshChoices();
for (const id of ["condition", "template"]) if (preset.has(id)) { $(id).value = preset.get(id); refreshChoices(); }
for (const id of ["set", "perm", "outcome", "q"]) if (preset.has(id)) $(id).value = preset.get(id);
$("model").onchange = () => { refreshChoices(); load(); };
$("condition").onchange = () => { refreshChoices(); load(); };
$("template").onchange = load;
for (const id of ["set", "perm", "outcome", "q"]) $(id).oninput = () => { page = 0; render(); };
$("prev").onclick = () => { page = Math.max(0, page - 1); render(); };
$("next").onclick = () => { page += 1; render(); };
load();
</script></body></html>
"""
