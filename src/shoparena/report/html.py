"""The pipeline report: one self-contained HTML file (inline CSS and SVG, no script, no network).

Every section renders from what the run directory holds; a stage that did not run renders as "not run" with
the reason the pipeline recorded, never as a crash.
"""

from __future__ import annotations

import html
import json
import platform
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from shoparena.eval.metrics import wilson_interval
from shoparena.pipeline.outputs import (
    CorpusOutput,
    FirehoseOutput,
    OutputT,
    ReferenceOutput,
    ScoreBlock,
    StudentEvalOutput,
)
from shoparena.records.eval import Estimate, EvalSummary, GroupMetrics
from shoparena.report import charts
from shoparena.report.data import ReportData, estimate, load_report_data
from shoparena.runs.output import write_text_atomic
from shoparena.scoring.profiles import ScoringProfileName

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45}
h1{font-size:1.6em} h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;font-size:.88em;margin:.6em 0} td,th{border:1px solid #ddd;padding:.25em .6em;
text-align:left} th{background:#f5f5f5} .num{text-align:right;font-variant-numeric:tabular-nums}
.notrun{color:#8a6d3b;background:#fcf8e3;border:1px solid #faebcc;padding:.6em;border-radius:4px}
.msg{border-radius:6px;padding:.4em .7em;margin:.3em 0;white-space:pre-wrap;overflow-wrap:anywhere;
font-size:.85em}
.user{background:#eef4ff} .assistant{background:#f1f8ee} .tool{background:#f7f7f7;font-family:monospace}
.system{background:#fff7e6} .role{font-weight:600;font-size:.8em;color:#555}
.call{font-family:monospace;color:#6a3d9a} svg{max-width:100%;height:auto}
.headline{font-size:1.15em;background:#eef6ee;border-left:4px solid #55A868;padding:.5em .8em}
.headline.warn{background:#fdf6e3;border-left-color:#C44E52}
details{margin:.4em 0} .stamp{color:#777;font-size:.85em}
"""


class SectionNotRun(Exception):
    """The data a section needs is absent; the message says why."""


class SectionMissing(SectionNotRun):
    """The stage ran but the output this section reads is no longer in the run directory."""


def _esc(value: Any) -> str:
    return html.escape(str(value))


def _table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{_fmt(c)}</td>' if isinstance(c, int | float) else f"<td>{_esc(c)}</td>"
            for c in row
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _fmt(value: float | int) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.3f}"


def _need(data: ReportData, model: type[OutputT], notes: Mapping[str, str]) -> OutputT:
    """The record of the stage that writes ``model``, or the section's "output missing" / "not run"."""
    stage = model.stage
    if stage in data.missing:
        raise SectionMissing(data.missing[stage])
    output = data.output(model)
    if output is None:
        raise SectionNotRun(f"stage {stage} has not run" + (f": {notes[stage]}" if stage in notes else ""))
    return output


def _funnel_pairs(funnel: Any) -> list[tuple[str, int]]:
    """The corpus funnel as (step, count) pairs in funnel order: input, quarantined, records, each gate's
    rejections (``rejected: <reason>``, the report's order, zero counts left out), kept. Views and recovery
    copies are not steps of the funnel (:func:`_funnel_apart`). A list-shaped funnel keeps its own order."""
    pairs: list[tuple[str, int]] = []
    if isinstance(funnel, list):
        for item in funnel:
            if isinstance(item, dict):
                name = item.get("stage") or item.get("name") or item.get("reason")
                count = item.get("count", item.get("n"))
                if name is not None and isinstance(count, int | float):
                    pairs.append((str(name), int(count)))
        return pairs
    if not isinstance(funnel, dict):
        return pairs

    def count(key: str) -> None:
        value = funnel.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            pairs.append((key, int(value)))

    for key in ("input", "quarantined", "records"):
        count(key)
    rejected = funnel.get("rejected")
    if isinstance(rejected, dict):
        pairs += [(f"rejected: {k}", int(n)) for k, n in rejected.items() if isinstance(n, int | float) and n]
    count("kept")
    return pairs


def _funnel_apart(funnel: Any) -> list[tuple[str, int]]:
    """What the funnel holds beside its steps: recovery copies and the rows of each view and split."""
    if not isinstance(funnel, dict):
        return []
    pairs = [
        (label, int(funnel[key]))
        for key, label in (("recovered", "recovered copies"), ("recovered_kept", "recovered copies kept"))
        if isinstance(funnel.get(key), int | float)
    ]
    for view, splits in (funnel.get("views") or {}).items():
        if isinstance(splits, dict):
            pairs += [(f"view {view}/{split}", int(n)) for split, n in splits.items()]
        elif isinstance(splits, int | float):
            pairs.append((f"view {view}", int(splits)))
    return pairs


def section_funnel(data: ReportData, notes: Mapping[str, str]) -> str:
    _need(data, CorpusOutput, notes)
    report = data.corpus_report
    funnel = report.funnel.model_dump(mode="json", exclude_unset=True) if report is not None else None
    pairs = _funnel_pairs(funnel)
    if not pairs:
        raise SectionNotRun("the corpus report.json has no funnel")
    out = charts.funnel_chart(pairs) + _table(["step", "trajectories"], [list(p) for p in pairs])
    apart = _funnel_apart(funnel)
    if apart:
        out += (
            "<p>Beside the funnel: sub-task records re-admitted by recovery (copies, judged again) and the"
            " rows each view holds (a <code>steps</code> row is one assistant turn, so views are not funnel"
            " steps).</p>" + _table(["", "rows"], [list(p) for p in apart])
        )
    return out


def section_richness(data: ReportData, notes: Mapping[str, str]) -> str:
    _need(data, CorpusOutput, notes)
    report = data.corpus_report
    # richness_by_miner_kind: the name of a corpus built before the histogram was renamed.
    hist = None
    if report is not None:
        hist = report.richness_histogram or (report.model_extra or {}).get("richness_by_miner_kind")
    if not isinstance(hist, dict) or not hist:
        raise SectionNotRun("the corpus report.json has no richness histogram by miner kind")
    bins = sorted({str(b) for counts in hist.values() if isinstance(counts, dict) for b in counts})
    series = {
        kind: [float(counts.get(b, 0)) for b in bins]
        for kind, counts in hist.items()
        if isinstance(counts, dict)
    }
    return charts.grouped_bars(bins, series, ylabel="trajectories")


def section_diversity(data: ReportData, notes: Mapping[str, str]) -> str:
    from shoparena.corpus.diversity import COLUMNS

    _need(data, CorpusOutput, notes)
    rows = data.corpus_report.diversity if data.corpus_report else None
    if not isinstance(rows, dict) or not rows:
        raise SectionNotRun("the corpus report.json has no diversity (built before it was measured)")
    merged: dict[tuple, list[str]] = {}  # identical rows (e.g. "all" = "kept" when nothing was rejected)
    for group, row in rows.items():
        if isinstance(row, dict):
            merged.setdefault(tuple(row.get(key) for key, _ in COLUMNS), []).append(group)
    table = [
        [" = ".join(groups), *("-" if value is None else value for value in values)]
        for values, groups in merged.items()
    ]
    note = (
        "<p>Distinct request / search bigrams (d-2) and tool-call 3-grams (d-3) per all n-grams, entropy "
        "of whole tool sequences, coverage, near-duplicate rate (docs/corpus.md). Ratios fall with size: "
        "compare groups of equal size.</p>"
    )
    return note + _table(["group", *(header for _, header in COLUMNS)], table)


def section_judge(data: ReportData, notes: Mapping[str, str]) -> str:
    _need(data, CorpusOutput, notes)
    bins = data.corpus_report.judge_bins if data.corpus_report else None
    if not isinstance(bins, dict) or not bins:
        raise SectionNotRun("the corpus report.json has no judge bins")
    labels = [str(k) for k in bins]
    return charts.grouped_bars(
        labels, {"trajectories": [float(v) for v in bins.values()]}, ylabel="trajectories"
    )


def section_races(data: ReportData, notes: Mapping[str, str]) -> str:
    _need(data, FirehoseOutput, notes)
    if not data.races:
        raise SectionNotRun("the firehose recorded no races")
    rows, weights = [], {}
    for i, race in enumerate(data.races):
        why = race.reason or "no miner qualified"
        winner = race.winner or f"none ({why}); the whole weight burns"
        rows.append([race.race_id, race.status, race.suite, winner, race.trajectories])
        for miner, w in race.weights.items():
            weights.setdefault(miner, [0.0] * len(data.races))[i] = float(w)
    explain = (
        "<p>Each race ranks the qualified miners on hidden problems; ORO's weights pin 25 % to the"
        " winner, share a tapered tail among the next ranks, and give the rest to the <b>burn</b> (UID 0,"
        " emission destroyed). A miner qualifies with a race score (its success rate times the judge's"
        " reasoning coefficient, docs/judge.md) of at least 0.1 and 95 % of the best; with no qualifier the"
        " race is CANCELLED, has no winner, and the burn takes everything; so it does when fewer than two"
        " miners finish the race (docs/arena.md).</p>"
    )
    out = explain + _table(["race", "status", "suite", "winner", "trajectories"], rows)
    if weights:
        groups = [r[0] for r in rows]
        out = explain + charts.stacked_bars(groups, weights, ylabel="weight") + out[len(explain) :]
    return out


def _asr_rows(
    data: ReportData, scoring_profile: ScoringProfileName
) -> tuple[list[str], dict[str, list[tuple[float, float, float]]]]:
    """Categories and, per model, (asr, low, high) in category order; reference uses Wilson intervals."""
    per_model: dict[str, dict[str, tuple[float, float, float]]] = {}
    reference = data.output(ReferenceOutput)
    score = reference.scores.get(scoring_profile) if reference is not None else None
    if score is not None:
        cats: dict[str, ScoreBlock] = {"overall": score, **score.per_category}
        per_model["reference planner"] = {
            c: (v.asr, *wilson_interval(v.successes, v.n)) for c, v in cats.items() if v.n
        }
    for label, summary in data.evals.items():
        block = summary.profiles.get(scoring_profile, {})
        per_model[label] = {c: estimate(g.greedy_asr) for c, g in block.items() if g.greedy_asr is not None}
    student = data.evals.get("student")
    floor = student.shortcut_floor.get(scoring_profile) if student is not None else None
    if floor:  # the no-LLM shortcut on the student's problems (Wilson intervals)
        per_model["shortcut"] = {c: estimate(e) for c, e in floor.items()}
    categories = sorted({c for m in per_model.values() for c in m}, key=lambda c: (c != "overall", c))
    return categories, {
        name: [values.get(c, (0.0, 0.0, 0.0)) for c in categories] for name, values in per_model.items()
    }


#: The verdict against the shortcut floor, by where the paired interval of the difference lies.
VERDICTS = {
    "beats": "it has learnt something beyond searching the request and taking the top hit",
    "ties": "it has learnt nothing measurable beyond searching the request and taking the top hit",
    "falls below": "it does worse than searching the request and taking the top hit",
}


def verdict_word(ci_low: float, ci_high: float) -> str:
    """``beats`` when the paired 95 % interval of (student − shortcut) lies above 0, ``falls below`` when it
    lies below, else ``ties`` (the problems cannot tell the two apart)."""
    if ci_low > 0:
        return "beats"
    if ci_high < 0:
        return "falls below"
    return "ties"


def _planner_ceiling(data: ReportData) -> str:
    """``, planner ceiling 40/48`` (the rule-based reference on the same held-out problems), or ""."""
    reference = data.output(ReferenceOutput)
    score = reference.scores.get(ScoringProfileName.STRICT) if reference is not None else None
    if score is None or not score.n:
        return ""
    return f"; the planner's ceiling (the rule-based reference that taught it) {score.successes}/{score.n}"


def verdict(data: ReportData) -> str:
    """The result in words: whether the student beats, ties or falls below the shortcut floor, what that
    means in one sentence, and the planner's ceiling beside it; empty when the stage paired no shortcut."""
    student = data.output(StudentEvalOutput)
    paired = student.vs_shortcut if student is not None else None
    if paired is None:
        return ""
    greedy, diff = paired.greedy, paired.greedy_asr
    n = greedy.a_only + greedy.b_only + greedy.both + greedy.neither
    word = verdict_word(diff.ci_low, diff.ci_high)
    interval = "includes 0" if word == "ties" else "excludes 0"
    mood = "good" if word == "beats" else "warn"
    return (
        f'<p class="headline {mood}"><b>The student {word} the shortcut floor</b>: '
        f"{greedy.b_only + greedy.both}/{n} solved vs the shortcut's {greedy.a_only + greedy.both}/{n} on "
        f"the same held-out problems{_planner_ceiling(data)}. The shortcut floor is what a policy gets with "
        f"no learning at all (search the request verbatim, recommend the top hit), so {VERDICTS[word]} (the "
        f"paired 95 % bootstrap interval of the difference, [{diff.ci_low:+.3f}, {diff.ci_high:+.3f}], "
        f"{interval}).</p>"
    )


def headline(data: ReportData) -> str:
    """The verdict in words, then student vs base on the same held-out problems: greedy strict ASR of each,
    the paired difference with its bootstrap interval, and McNemar's exact p on the discordant problems."""
    if data.comparison is None:
        return (
            f'<p class="notrun">no paired comparison: {_esc(data.comparison_error)}</p>'
            if (data.comparison_error)
            else verdict(data)
        )
    block = data.comparison.profiles.get(ScoringProfileName.STRICT)
    greedy = block.greedy if block is not None else None
    diff = block.greedy_asr if block is not None else None
    if block is None or greedy is None or diff is None:
        return verdict(data)
    n = block.problems
    base, student = greedy.a_only + greedy.both, greedy.b_only + greedy.both
    return verdict(data) + (
        f'<p class="detail"><b>student {student}/{n} vs base {base}/{n}</b> (strict, greedy, held-out): '
        f"difference {diff.diff:+.3f}, paired 95 % bootstrap interval of the difference "
        f"[{diff.ci_low:+.3f}, {diff.ci_high:+.3f}]; McNemar exact p = {greedy.p_value:.2g} "
        f"({greedy.b_only} problems only the student solves, {greedy.a_only} only the base)"
        f"{_versus_shortcut(data)}</p>"
    )


def _versus_shortcut(data: ReportData) -> str:
    """The same student against the shortcut (search the request verbatim, recommend the top hit) on the same
    problems, as ``eval_student`` paired them (``vs_shortcut``); empty when the stage did not."""
    student = data.output(StudentEvalOutput)
    paired = student.vs_shortcut if student is not None else None
    if paired is None:
        return ""
    greedy, diff = paired.greedy, paired.greedy_asr
    n = greedy.a_only + greedy.b_only + greedy.both + greedy.neither
    return (
        f"; <b>vs the shortcut {greedy.a_only + greedy.both}/{n}</b>: difference {diff.diff:+.3f}, paired "
        f"95 % bootstrap interval of the difference [{diff.ci_low:+.3f}, {diff.ci_high:+.3f}]; McNemar "
        f"exact p = {greedy.p_value:.2g}"
    )


def _count(est: Estimate | None) -> str:
    """``9/12`` (the estimate's successes of its problems), or ``-``."""
    if est is None or not est.n:
        return "-"
    return f"{round(est.value * est.n)}/{est.n}"


def _solved(summary: EvalSummary, category: str) -> str:
    block = summary.profiles.get(ScoringProfileName.STRICT, {}).get(category)
    return _count(block.greedy_asr if block is not None else None)


def _shortcut_solved(summary: EvalSummary, category: str) -> str:
    return _count(summary.shortcut_floor.get(ScoringProfileName.STRICT, {}).get(category))


def per_intent_line(data: ReportData) -> str:
    """``Product 9/12 vs 0/12 vs 9/12 · ...``: greedy strict successes per intent, student vs base vs the
    shortcut on the same problems."""
    if not {"base", "student"} <= set(data.evals):
        return ""
    student = data.evals["student"]
    block = student.profiles.get(ScoringProfileName.STRICT, {})
    intents = sorted(c for c in block if c != "overall")
    base = data.evals["base"]
    parts = [
        f"{_esc(c)} {_solved(student, c)} vs {_solved(base, c)} vs {_shortcut_solved(student, c)}"
        for c in intents
    ]
    label = "per intent, student vs base vs shortcut"
    return f'<p class="intents">{label}: {" · ".join(parts)}</p>' if parts else ""


def basket_sizes(data: ReportData) -> str:
    """Student, base, shortcut floor and planner on one line each, by intent and basket size (greedy,
    strict, the same held-out problems; Wilson 95 % intervals)."""
    table = data.baskets
    if table is None:
        return ""
    rows = [
        [row.policy]
        + [
            f"{c.solved}/{c.n} [{c.ci_low:.2f}, {c.ci_high:.2f}]"
            for c in (row.groups[g] for g in table.groups)
        ]
        for row in table.rows
    ]
    caption = (
        '<p class="intents">by intent and basket size (items asked for), greedy strict successes on the '
        "same held-out problems, Wilson 95 % interval of the rate:</p>"
    )
    notes = "".join(f'<p class="notrun">{_esc(note)}</p>' for note in table.notes)
    return caption + _table(["policy", *table.groups], rows) + notes


def section_result(data: ReportData, notes: Mapping[str, str]) -> str:
    parts = [headline(data), per_intent_line(data), basket_sizes(data)]
    if not any(parts):
        why = data.missing.get("eval_student") or notes.get("eval_student") or notes.get("eval_base")
        raise SectionNotRun(why or "the student and its base have not been evaluated")
    return "".join(parts)


def _asr_block(
    data: ReportData, scoring_profile: ScoringProfileName
) -> tuple[str, dict[str, list[tuple[float, float, float]]]]:
    categories, models = _asr_rows(data, scoring_profile)
    if not models:
        return "", {}
    series = {m: [v[0] for v in vals] for m, vals in models.items()}
    errors = {m: ([v[1] for v in vals], [v[2] for v in vals]) for m, vals in models.items()}
    rows = [
        [m, c, v[0], f"[{v[1]:.3f}, {v[2]:.3f}]"]
        for m, vals in models.items()
        for c, v in zip(categories, vals, strict=True)
    ]
    html_ = (
        f"<h3>profile {scoring_profile.value} (held-out partition, greedy; bars: 95 % Wilson intervals)</h3>"
        + charts.grouped_bars(categories, series, ylabel="ASR", errors=errors, ylim=(0, 1))
        + _table(["model", "category", "ASR", "95 % Wilson interval of the ASR"], rows)
    )
    return html_, {m: [tuple(v) for v in vals] for m, vals in models.items()}


def section_asr(data: ReportData, notes: Mapping[str, str]) -> str:
    strict, strict_values = _asr_block(data, ScoringProfileName.STRICT)
    lenient, lenient_values = _asr_block(data, ScoringProfileName.SHOPPINGBENCH)
    parts = [strict]
    if lenient and lenient_values == strict_values:
        parts.append(
            "<p>profile shoppingbench: identical to strict (every model, every category), not repeated.</p>"
        )
    else:
        parts.append(lenient)
    if not any(parts):
        raise SectionNotRun("no evaluation and no reference run: " + "; ".join(notes.values()))
    for stage in ("eval_base", "eval_student"):
        if stage in data.missing and data.evals:
            parts.insert(0, f'<p class="notrun">output missing: {_esc(data.missing[stage])}</p>')
    if not data.evals:
        why = data.missing.get("eval_base") or notes.get("eval_base", "stage eval_base has not run")
        parts.insert(
            0,
            f'<p class="notrun">base and student not evaluated yet: {_esc(why)}</p>',
        )
    return "".join(parts)


def _pass_at_k_points(overall: GroupMetrics | None) -> list[tuple[float, float, float, float]]:
    """``(k, value, low, high)`` of the group's pass@k estimates, by k."""
    if overall is None:
        return []
    return sorted((float(k), *estimate(est)) for k, est in overall.pass_at_k.items() if str(k).isdigit())


def section_pass_at_k(data: ReportData, notes: Mapping[str, str]) -> str:
    if not data.evals:
        if "eval_base" in data.missing:
            raise SectionMissing(data.missing["eval_base"])
        raise SectionNotRun(notes.get("eval_base", "stage eval_base has not run"))
    series = {}
    rows = []
    for label, summary in data.evals.items():
        overall = summary.profiles.get(ScoringProfileName.STRICT, {}).get("overall")
        points = _pass_at_k_points(overall)
        if points:
            series[label] = points
            rows += [[label, int(k), v, f"[{lo:.3f}, {hi:.3f}]"] for k, v, lo, hi in points]
    if not series:
        raise SectionNotRun("the evaluation summaries hold no pass@k")
    decoding = next(iter(data.evals.values())).decoding
    caption = f"<p>decoding: {_esc(json.dumps(decoding))}</p>" if decoding else ""
    if all(len(points) < 2 for points in series.values()):  # one sample per problem: no curve to draw
        chart = (
            "<p>One sample per problem (n = 1): pass@k is pass@1 and there is no curve to draw; sample more "
            "(<code>eval.samples</code>) for pass@k and pass^k over k.</p>"
        )
    else:
        chart = charts.curves(series, xlabel="k", ylabel="pass@k (strict)")
    header = ["model", "k", "pass@k", "95 % bootstrap interval (problems resampled)"]
    return chart + caption + _table(header, rows)


#: Characters of one message shown before it is cut (tool results can be whole search pages).
MESSAGE_CHARS = 1200


def _clip(text: str) -> str:
    if len(text) <= MESSAGE_CHARS:
        return text
    return f"{text[:MESSAGE_CHARS]} … ({len(text) - MESSAGE_CHARS:,} more characters)"


def _message_html(message: Mapping[str, Any]) -> str:
    role = str(message.get("role", "?"))
    body = _esc(_clip(str(message.get("content") or "")))
    for call in message.get("tool_calls") or []:
        fn = call.get("function", call)
        body += f'\n<span class="call">→ {_esc(fn.get("name"))}({_esc(fn.get("arguments"))})</span>'
    label = role + (f" · {message['name']}" if message.get("name") else "")
    return f'<div class="msg {_esc(role)}"><div class="role">{_esc(label)}</div>{body}</div>'


def section_examples(data: ReportData, notes: Mapping[str, str]) -> str:
    if not data.examples:
        raise SectionNotRun("no corpus rows and no reference episodes to show")
    return "".join(
        f"<details{' open' if i == 0 else ''}><summary>{_esc(title)}</summary>"
        + "".join(_message_html(m) for m in messages)
        + "</details>"
        for i, (title, messages) in enumerate(data.examples)
    )


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "-"


def section_provenance(data: ReportData, notes: Mapping[str, str]) -> str:
    m = data.manifest
    recorded = m.get("versions", {})
    versions = [
        ["shoparena", recorded.get("shoparena", "-")],
        ["git sha", recorded.get("git_sha") or "-"],
        ["python", recorded.get("python", platform.python_version())],
        ["platform", recorded.get("platform", platform.platform())],
        ["run id", m.get("run_id", "-")],
    ]
    versions += [[p, _version(p)] for p in ("matplotlib", "datasets", "transformers", "trl", "torch", "ray")]
    stages = [[name, r.get("config_hash", ""), r.get("seconds", 0.0)] for name, r in data.stages.items()]
    stages += [[name, "-", f"not run: {reason}"] for name, reason in notes.items() if name not in data.stages]
    seeds = [[k, v["seed"]] for k, v in data.config.items() if isinstance(v, dict) and "seed" in v]
    return (
        "<h3>versions</h3>"
        + _table(["component", "version"], versions)
        + "<h3>stages (config + input hash)</h3>"
        + _table(["stage", "hash", "seconds"], stages)
        + "<h3>seeds</h3>"
        + _table(["section", "seed"], seeds)
        + "<h3>resolved config</h3><details><summary>config.yaml</summary><pre>"
        + _esc(json.dumps(data.config, indent=1))
        + "</pre></details>"
    )


#: The result first (headline, per-intent ASR), then how the corpus was made, then the evidence.
SECTIONS: list[tuple[str, str, Callable[[ReportData, Mapping[str, str]], str]]] = [
    ("result", "Result: student vs base on the held-out problems", section_result),
    ("asr", "Per-intent ASR on the held-out partition", section_asr),
    ("funnel", "Corpus funnel: input → records → gates → kept", section_funnel),
    ("passk", "pass@k", section_pass_at_k),
    ("richness", "Agentic richness by miner kind", section_richness),
    ("judge", "Judge bins", section_judge),
    ("diversity", "Corpus diversity", section_diversity),
    ("races", "Races and weights", section_races),
    ("examples", "Example trajectories", section_examples),
    ("provenance", "Provenance", section_provenance),
]


def render_report(
    run_dir: str | Path, out: str | Path, *, notes: Mapping[str, str] | None = None, examples: int = 3
) -> Path:
    """Write the self-contained HTML report of ``run_dir`` to ``out`` and return its path.

    Args:
        notes: Why stages did not run (stage -> reason), shown in their sections.
        examples: Example trajectories rendered as conversations.
    """
    notes = dict(notes or {})
    data = load_report_data(run_dir, examples=examples)
    kind = data.manifest.get("kind")
    if kind not in (None, "pipeline"):
        raise ValueError(
            f"{run_dir}: not a pipeline run (manifest kind {kind!r}); the report covers pipeline runs, "
            f"`shoparena view {run_dir}` shows this one's trajectories"
        )
    body = []
    for key, title, render in SECTIONS:
        try:
            content = render(data, notes)
        except SectionMissing as why:
            content = f'<p class="notrun">output missing: {_esc(why)}</p>'
        except SectionNotRun as why:
            content = f'<p class="notrun">not run: {_esc(why)}</p>'
        body.append(f'<section id="{key}"><h2>{_esc(title)}</h2>{content}</section>')
    toc = " · ".join(f'<a href="#{key}">{_esc(title)}</a>' for key, title, _ in SECTIONS)
    page = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>shoparena report: {_esc(Path(run_dir).name)}</title><style>{CSS}</style></head><body>"
        f"<h1>shoparena pipeline report: {_esc(Path(run_dir).name)}</h1>"
        f'<p class="stamp">run directory {_esc(Path(run_dir).resolve())} · preset '
        f"{_esc(data.config.get('preset', '-'))}</p><nav>{toc}</nav>{''.join(body)}</body></html>"
    )
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(out, page)
