"""``shoparena view PIPELINE_DIR``: a pipeline directory opens as the runs it holds, named by role (each
arena race, the corpus, base and student), and arena rows carry the strict outcome and the category."""

from __future__ import annotations

import time
import urllib.request

import pytest
from typer.testing import CliRunner

from sandbox_marks import needs_bwrap
from shoparena.cli.main import app
from shoparena.pipeline import PipelineConfig
from shoparena.pipeline.outputs import (
    CorpusOutput,
    EvalOutput,
    FirehoseOutput,
    RaceSummary,
    StageOutput,
    StudentEvalOutput,
)
from shoparena.records.corpus import CorpusFunnel
from shoparena.runs import RunDir
from shoparena.viewer import ViewerError, ViewerServer, load_runs


def _pipeline_dir(root, race_dirs, corpus, base, student):
    """A pipeline directory whose stages recorded these runs, as the DAG records them."""
    run = RunDir(root / "pipe", kind="pipeline", config=PipelineConfig())
    started = time.time()

    def stage(output: StageOutput) -> None:
        run.complete(output.stage, {"n": output.stage}, started, output.record(), invalidate_later=False)

    races = [
        RaceSummary(race_id=f"race-{i + 1}", status="C", suite="s", winner="", trajectories=0, weights={})
        for i in range(len(race_dirs))
    ]
    stage(FirehoseOutput(path=str(root), race_dirs=[str(d) for d in race_dirs], races=races, trajectories=0))
    funnel = CorpusFunnel(input=2, quarantined=0, records=2, rejected={}, kept=2, adds_up=True)
    stage(CorpusOutput(path=str(corpus), funnel=funnel))
    for model, path in ((EvalOutput, base), (StudentEvalOutput, student)):
        stage(model(path=str(path), policy="planner", label="x", strict_overall={}))
    return root / "pipe"


@needs_bwrap
def test_a_pipeline_directory_opens_as_its_runs_named_by_role(
    tmp_path, eval_runs, corpus_run, view_bank, synth
) -> None:
    arena = tmp_path / "race"
    result = CliRunner().invoke(app, [
        "arena", "run", "--agents", "agentic", "shortcut", "--suite", str(view_bank),
        "--index", str(synth.index.index_dir), "--out", str(arena), "--backend", "planner",
        "--workers", "2", "--timeout", "30", "--judge", "rubric",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    pipe = _pipeline_dir(tmp_path, [arena], corpus_run, *eval_runs)
    runs = load_runs([pipe])
    assert [r.label for r in runs] == ["arena race-1", "corpus", "base", "student"]
    assert [r.kind for r in runs] == ["arena", "corpus", "eval", "eval"]
    rows = [item.row for item in runs[0].items]
    assert len(rows) == 8 and {r.agent for r in rows} == {"agentic", "shortcut"}
    # Scored outcomes, not the envelope's status: the planner-driven miner solves some, the shortcut not all.
    assert {r.outcome for r in rows} <= {"success", "failure"} and "success" in {r.outcome for r in rows}
    assert all(r.success == (r.outcome == "success") and r.scores["strict"] == r.success for r in rows)
    assert {r.category for r in rows} == {"Product", "Shop"}
    with ViewerServer([pipe]) as server:
        page = urllib.request.urlopen(server.url, timeout=10).read().decode()
        assert '"label": "base"' in page and '"label": "student"' in page and "arena race-1" in page
    # Two pipeline directories: each role prefixed with its directory's name.
    labels = [r.label for r in load_runs([pipe, pipe])]
    assert labels[:4] == ["pipe arena race-1", "pipe corpus", "pipe base", "pipe student"]


def test_a_pipeline_directory_missing_a_run_names_it(tmp_path, eval_runs, corpus_run) -> None:
    pipe = _pipeline_dir(tmp_path, [tmp_path / "gone"], corpus_run, *eval_runs)
    with pytest.raises(ViewerError, match=r"its arena race-1 run .*gone is not there"):
        load_runs([pipe])
    result = CliRunner().invoke(app, ["view", str(pipe)])
    assert result.exit_code == 2 and "is not there" in result.stderr and "Traceback" not in result.output
