"""Run-directory integrity (issue 23): damaged run-directory files and configs end as one line naming the file
(and the record and field) with exit code 2, never a traceback; every record that enters is counted once;
readers never modify what they read; stage outputs are found from any working directory.

Each case damages a copy of a tiny real run directory (a one-race firehose over the shared synthetic world,
an ``eval run`` of the planner, a pipeline directory whose stages point at them).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner, Result

from shoparena.cli.main import app
from shoparena.pipeline.config import PipelineConfig
from shoparena.pipeline.outputs import CorpusOutput, EvalOutput, StageOutput, StudentEvalOutput
from shoparena.records.judge import JudgeVerdict
from shoparena.records.race import RaceDocument, WeightsDocument
from shoparena.runs import RunDir, read_manifest
from shoparena.runs.files import RunFileError, read_json_record


@pytest.fixture(scope="module")
def worlds(shop_world, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``race``: a finished firehose race; ``eval``: a finished eval run; ``corpus``: a built corpus."""
    from shoparena.arena.firehose import FirehoseConfig, run_firehose
    from shoparena.eval.config import EvalConfig
    from shoparena.eval.run import run_eval

    root = tmp_path_factory.mktemp("integrity")
    config = FirehoseConfig(
        suites=[shop_world.mixed], index=shop_world.index, out=root / "fh", races=1, problems_per_race=2
    )
    (race,) = run_firehose(config, search=shop_world.engine)
    eval_config = EvalConfig(
        policy="planner",
        suite=shop_world.mixed,
        index=shop_world.index,
        out=root / "eval",
        progress=False,
        max_steps=12,
        bootstrap=200,
    )
    run_eval(eval_config, engine=shop_world.engine)
    result = CliRunner().invoke(app, ["corpus", "build", str(race), "--out", str(root / "corpus")])
    assert result.exit_code == 0, result.output
    return {"race": race, "eval": root / "eval", "corpus": root / "corpus"}


def _invoke(args: list[str], cwd: Path | None = None) -> Result:
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(app, [str(a) for a in args])
    finally:
        os.chdir(old)


def _one_line_error(result: Result) -> str:
    # SystemExit is how Typer exits; any other exception escaped as a traceback.
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert result.exit_code == 2, (result.exit_code, result.output[-600:])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error"), result.stderr
    return lines[0]


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _agent(race: Path) -> Path:
    return sorted(p for p in (race / "agents").iterdir() if p.is_dir())[0]


def _edit_yaml(path: Path, **changes: object) -> None:
    data = yaml.safe_load(path.read_text())
    data.update(changes)
    path.write_text(yaml.safe_dump(data))


def _first_line_json(path: Path, **changes: object) -> None:
    lines = path.read_text().splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), **changes})
    path.write_text("\n".join(lines) + "\n")


def _pipeline_dir(root: Path, corpus: Path, eval_dir: Path) -> Path:
    run = RunDir(root / "pipe", kind="pipeline", config=PipelineConfig())
    started = 0.0
    for model, path in ((CorpusOutput, corpus), (EvalOutput, eval_dir), (StudentEvalOutput, eval_dir)):
        name = model.stage
        target = root / "pipe" / name
        if not target.exists():
            shutil.copytree(path, target)
        run.complete(name, {"stage": name}, started, _stage_record(model, target), invalidate_later=False)
    return root / "pipe"


def _stage_record(model: type[StageOutput], target: Path) -> dict[str, object]:
    """The manifest record the corpus or an eval stage writes for the run directory ``target``."""
    if model is CorpusOutput:
        funnel = json.loads((target / "report.json").read_text())["funnel"]
        return CorpusOutput(path=str(target), funnel=funnel).record()
    summary = json.loads((target / "summary.json").read_text())
    overall = summary["profiles"]["strict"]["overall"]
    return model(path=str(target), policy="planner", label=summary["label"], strict_overall=overall).record()


# --- race directories (corpus build) ------------------------------------------------------------------------


def _race(damage: Callable[[Path], None]) -> Callable[[dict[str, Path], Path], list[object]]:
    def setup(worlds: dict[str, Path], tmp: Path) -> list[object]:
        race = _copy(worlds["race"], tmp / "race")
        damage(race)
        return ["corpus", "build", race, "--out", tmp / "c"]

    return setup


def _cfg(text: str) -> Callable[[dict[str, Path], Path], list[object]]:
    def setup(worlds: dict[str, Path], tmp: Path) -> list[object]:
        (tmp / "corpus.yaml").write_text(text)
        return ["corpus", "build", worlds["race"], "--out", tmp / "c", "--config", tmp / "corpus.yaml"]

    return setup


def _eval_case(damage: Callable[[Path], None]) -> Callable[[dict[str, Path], Path], list[object]]:
    def setup(worlds: dict[str, Path], tmp: Path) -> list[object]:
        run = _copy(worlds["eval"], tmp / "a")
        damage(run)
        return ["eval", "compare", run, worlds["eval"]]

    return setup


def _torn_episode(run: Path) -> None:
    lines = (run / "episodes.jsonl").read_text().splitlines()
    lines[0] = lines[0][:25]
    (run / "episodes.jsonl").write_text("\n".join(lines) + "\n")


def _repeated_episode(run: Path) -> None:
    path = run / "episodes.jsonl"
    path.write_text(path.read_text() + path.read_text().splitlines()[0] + "\n")


def _rep(damage: Callable[[Path], None]) -> Callable[[dict[str, Path], Path], list[object]]:
    def setup(worlds: dict[str, Path], tmp: Path) -> list[object]:
        run = _pipeline_dir(tmp, worlds["corpus"], worlds["eval"])
        damage(run)
        return ["report", run, "-o", tmp / "r.html"]

    return setup


def _torn_view(run: Path) -> None:
    path = run / "corpus" / "views" / "sft-train.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"record_id": "x", "outcome": "kept", "messages": [{"role": "us\n')


def _pipe(text: str | bytes) -> Callable[[dict[str, Path], Path], list[object]]:
    def setup(worlds: dict[str, Path], tmp: Path) -> list[object]:
        path = tmp / "pipeline.yaml"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        return ["pipeline", "run", "--dry-run", "--config", path, "--out", tmp / "run"]

    return setup


def _train_case(*sets: str, config: str = "tiny") -> Callable[[dict[str, Path], Path], list[object]]:
    def setup(worlds: dict[str, Path], tmp: Path) -> list[object]:
        source = config
        if config == "cycle":
            (tmp / "a.yaml").write_text(f"extends: {tmp / 'b.yaml'}\n")
            (tmp / "b.yaml").write_text(f"extends: {tmp / 'a.yaml'}\n")
            source = str(tmp / "a.yaml")
        args: list[object] = ["train", "sft", "--config", source, "--out", tmp / "t", "--quiet"]
        for item in sets:
            args += ["--set", item]
        return args

    return setup


def _corpus_report_torn(worlds: dict[str, Path], tmp: Path) -> list[object]:
    corpus = _copy(worlds["corpus"], tmp / "c")
    (corpus / "report.json").write_text('{"funnel": {"input": ')
    return ["corpus", "report", corpus]


def _eval_hf_missing(worlds: dict[str, Path], tmp: Path) -> list[object]:
    config = yaml.safe_load((worlds["eval"] / "config.yaml").read_text())
    return [
        "eval", "run", "--policy", "hf:/nonexistent", "--suite", config["suite"], "--index", config["index"],
        "--out", tmp / "e",
    ]  # fmt: skip


def _bogus_agent(race: Path) -> None:
    manifest = json.loads((race / "manifest.json").read_text())
    manifest["agents"]["ghost"] = next(iter(manifest["agents"].values()))
    (race / "manifest.json").write_text(json.dumps(manifest))


#: (case id, setup returning the CLI arguments, what the one error line must name)
CASES: list[tuple[str, Callable[[dict[str, Path], Path], list[object]], tuple[str, ...]]] = [
    ("race.json torn", _race(lambda r: (r / "race.json").write_text('{"race": {')), ("race.json", "JSON")),
    ("race.json a list", _race(lambda r: (r / "race.json").write_text("[]")), ("race.json", "RaceDocument")),
    (
        "miner.json garbage",
        _race(lambda r: (_agent(r) / "miner.json").write_text("garbage{")),
        ("miner.json", "JSON"),
    ),
    (
        "verdict status a list",
        _race(lambda r: _first_line_json(_agent(r) / "judge.jsonl", status=["ok"])),
        ("judge.jsonl:1", "status"),
    ),
    (
        "verdict score a boolean",
        _race(lambda r: _first_line_json(_agent(r) / "judge.jsonl", status="ok", score=True)),
        ("judge.jsonl:1", "score"),
    ),
    (
        "race config suite a list",
        _race(lambda r: _edit_yaml(r / "config.yaml", suite=["a", "b"])),
        ("config.yaml", "suite"),
    ),
    (
        "race config similarity bogus",
        _race(lambda r: _edit_yaml(r / "config.yaml", similarity="bogus")),
        ("config.yaml", "similarity"),
    ),
    (
        "race config index not an index",
        _race(lambda r: _edit_yaml(r / "config.yaml", index=str(r / "agents"))),
        ("config.yaml", "index"),
    ),
    ("manifest lists a bogus agent", _race(_bogus_agent), ("manifest.json", "agents.ghost")),
    ("corpus.yaml YAML syntax", _cfg("filter: [\n"), ("corpus.yaml", "YAML")),
    ("corpus.yaml a list", _cfg("- a\n"), ("corpus.yaml", "mapping")),
    ("corpus tokenizer missing", _cfg("tokenizer: /nonexistent\n"), ("tokenizer",)),
    ("corpus judge_bar negative", _cfg("gates:\n  judge_bar: -5\n"), ("judge_bar",)),
    ("corpus judge_bar nan", _cfg("gates:\n  judge_bar: .nan\n"), ("judge_bar", "finite")),
    ("corpus report torn", _corpus_report_torn, ("report.json",)),
    ("eval run hf missing", _eval_hf_missing, ("hf:/nonexistent",)),
    (
        "eval compare torn summary",
        _eval_case(lambda r: (r / "summary.json").write_text('{"run_id": "x", "ru')),
        ("summary.json", "JSON"),
    ),
    ("eval compare torn episode line", _eval_case(_torn_episode), ("episodes.jsonl:1",)),
    (
        "eval compare missing episodes",
        _eval_case(lambda r: (r / "episodes.jsonl").unlink()),
        ("episodes.jsonl", "missing"),
    ),
    ("eval compare repeated episode", _eval_case(_repeated_episode), ("episodes.jsonl", "repeats")),
    ("report manifest a list", _rep(lambda r: (r / "manifest.json").write_text("[]")), ("manifest.json",)),
    ("report torn sft view", _rep(_torn_view), ("sft-train.jsonl:1",)),
    ("pipeline config not UTF-8", _pipe(b"name: \xff\xfe\n"), ("pipeline.yaml", "UTF-8")),
    ("pipeline firehose junk", _pipe("firehose: {options: {bogus: 1}}\n"), ("firehose.options.bogus",)),
    ("pipeline corpus.options junk", _pipe("corpus:\n  options: {gates: {judge_bar: 7}}\n"), ("judge_bar",)),
    ("pipeline eval.options junk", _pipe("eval:\n  options: {threads: many}\n"), ("eval.options.threads",)),
    ("pipeline sft.trainer key", _pipe("sft:\n  trainer:\n    learnin_rate: 0.1\n"), ("learnin_rate",)),
    ("pipeline sft.trainer value", _pipe("sft:\n  trainer:\n    learning_rate: fast\n"), ("learning_rate",)),
    ("pipeline model.base junk", _pipe("model:\n  base: '???'\n"), ("model.base",)),
    ("pipeline judge junk", _pipe("judge:\n  judge: oracle\n"), ("judge.judge",)),
    ("pipeline llm judge no backend", _pipe("judge:\n  judge: llm\n"), ("judge.backend",)),
    ("pipeline reference junk", _pipe("reference:\n  agent: nobody\n"), ("reference.agent",)),
    ("train learning_rate junk", _train_case("sft.learning_rate=fast"), ("learning_rate",)),
    ("train max_steps negative", _train_case("sft.max_steps=-3"), ("max_steps",)),
    ("train extends cycle", _train_case(config="cycle"), ("extends", "cycle")),
]  # fmt: skip


@pytest.mark.parametrize(("setup", "names"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_damaged_input_is_one_line_exit_2(worlds, tmp_path: Path, setup, names) -> None:
    line = _one_line_error(_invoke(setup(worlds, tmp_path)))
    for name in names:
        assert name in line, line


def test_train_value_error_comes_before_data_preparation(tmp_path: Path) -> None:
    # No corpus at all: a value error must be reported before the data is looked at.
    args = ["train", "sft", "--config", "tiny", "--set", "sft.learning_rate=fast", "--out", tmp_path / "t"]
    line = _one_line_error(_invoke(args))
    assert "corpus" not in line and "learning_rate" in line


# --- every record counted once ------------------------------------------------------------------------------


def _funnel(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())["funnel"]


def test_an_agent_the_manifest_omits_is_quarantined_not_lost(worlds, tmp_path: Path) -> None:
    race = _copy(worlds["race"], tmp_path / "race")
    manifest = json.loads((race / "manifest.json").read_text())
    omitted = sorted(manifest["agents"])[0]
    del manifest["agents"][omitted]
    (race / "manifest.json").write_text(json.dumps(manifest))
    lines = sum(len(p.read_text().splitlines()) for p in (race / "agents").glob("*/output.jsonl"))
    assert _invoke(["corpus", "build", race, "--out", tmp_path / "c"]).exit_code == 0
    funnel = _funnel(tmp_path / "c")
    assert funnel["input"] == lines and funnel["adds_up"]
    quarantine = [json.loads(x) for x in (tmp_path / "c" / "quarantine.jsonl").read_text().splitlines()]
    mine = [q for q in quarantine if q["field"] == "agent"]
    assert mine and all(omitted in q["reason"] and "not listed" in q["reason"] for q in mine)


def test_a_missing_or_torn_proxy_log_is_its_own_reason(worlds, tmp_path: Path) -> None:
    race = _copy(worlds["race"], tmp_path / "race")
    logs = sorted((race / "proxy").glob("*/*.jsonl"))
    logs = [p for p in logs if p.parent.name != "_unattributed"]
    logs[0].unlink()
    logs[1].write_bytes(logs[1].read_bytes()[:-7])  # a torn last line
    assert _invoke(["corpus", "build", race, "--out", tmp_path / "c"]).exit_code == 0
    records = [json.loads(x) for x in (tmp_path / "c" / "records.jsonl").read_text().splitlines()]
    damaged = {(p.parent.name, p.stem) for p in logs[:2]}
    hit = [r for r in records if (r["provenance"]["agent"], r["problem_id"]) in damaged]
    assert hit and all(r["evidence"]["proxy_log_problem"] for r in hit)
    assert all(r["outcome"] in ("proxy_log_missing", "not_success_envelope") for r in hit)
    assert not any(r["outcome"] == "forged_log" for r in hit)


def test_a_missing_verdict_is_judge_missing(worlds, tmp_path: Path) -> None:
    race = _copy(worlds["race"], tmp_path / "race")
    for path in (race / "agents").glob("*/judge.jsonl"):
        path.unlink()
    assert _invoke(["corpus", "build", race, "--out", tmp_path / "c"]).exit_code == 0
    records = [json.loads(x) for x in (tmp_path / "c" / "records.jsonl").read_text().splitlines()]
    judged_stage = [r for r in records if r["outcome"] in ("judge_missing", "judge_below_bar", "kept")]
    assert judged_stage and all(r["outcome"] == "judge_missing" for r in judged_stage)


def test_a_boolean_judge_score_is_refused() -> None:
    with pytest.raises(ValueError, match="boolean"):
        JudgeVerdict.model_validate_json('{"status": "ok", "score": true}')
    assert JudgeVerdict.model_validate_json('{"status": "ok", "score": 1}').score == 1.0


def test_corpus_build_ingests_an_eval_run(worlds, tmp_path: Path) -> None:
    episodes = len((worlds["eval"] / "output.jsonl").read_text().splitlines())
    result = _invoke(["corpus", "build", worlds["eval"], "--out", tmp_path / "c"])
    assert result.exit_code == 0, result.output
    funnel = _funnel(tmp_path / "c")
    assert funnel["input"] == episodes > 0 and funnel["adds_up"]


def test_corpus_build_refuses_a_directory_of_another_kind(worlds, tmp_path: Path) -> None:
    line = _one_line_error(_invoke(["corpus", "build", worlds["corpus"], "--out", tmp_path / "c"]))
    assert "manifest.json" in line and "kind" in line


def test_eval_compare_never_modifies_its_inputs(worlds, tmp_path: Path) -> None:
    run = _copy(worlds["eval"], tmp_path / "a")
    path = run / "episodes.jsonl"
    path.write_bytes(path.read_bytes() + b'{"problem_id": "torn')
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    line = _one_line_error(_invoke(["eval", "compare", run, worlds["eval"]]))
    assert "episodes.jsonl:" in line
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


# --- report: stage outputs found from anywhere, never another run's ----------------------------------------


def test_stage_outputs_are_stored_relative_to_the_run(worlds, tmp_path: Path) -> None:
    run = _pipeline_dir(tmp_path, worlds["corpus"], worlds["eval"])
    stored = read_manifest(run).stages["corpus"].outputs["path"]
    assert stored == "./corpus"
    assert RunDir(run, kind="pipeline", config=PipelineConfig()).done("corpus", {"stage": "corpus"}).outputs[
        "path"
    ] == str(run / "corpus")


def test_report_from_another_directory_shows_this_run_only(worlds, tmp_path: Path) -> None:
    run = _pipeline_dir(tmp_path / "a", worlds["corpus"], worlds["eval"])
    # A decoy run in the working directory under the same relative names must never be read.
    decoy = tmp_path / "elsewhere"
    (decoy / "corpus").mkdir(parents=True)
    (decoy / "corpus" / "report.json").write_text(json.dumps({"funnel": {"input": 987654321, "kept": 0}}))
    result = _invoke(["report", run, "-o", tmp_path / "r.html"], cwd=decoy)
    assert result.exit_code == 0, result.output
    page = (tmp_path / "r.html").read_text()
    assert "987654321" not in page and "987,654,321" not in page
    funnel = _funnel(worlds["corpus"])
    assert f"{funnel['input']:,}" in page or str(funnel["input"]) in page


def test_report_says_output_missing_not_not_run(worlds, tmp_path: Path) -> None:
    run = _pipeline_dir(tmp_path, worlds["corpus"], worlds["eval"])
    (run / "eval_base" / "summary.json").unlink()
    (run / "eval_student" / "summary.json").unlink()
    assert _invoke(["report", run, "-o", tmp_path / "r.html"]).exit_code == 0
    page = (tmp_path / "r.html").read_text()
    assert "output missing" in page and "eval_base has not run" not in page


# --- the typed records -------------------------------------------------------------------------------------


def test_race_and_weights_documents_read_back(worlds) -> None:
    doc = read_json_record(worlds["race"] / "race.json", RaceDocument)
    weights = read_json_record(worlds["race"] / "weights.json", WeightsDocument)
    assert doc.race.race_id == weights.race_id
    # Canonical bytes: the reader's model writes the file back byte for byte.
    assert weights.to_bytes() == (worlds["race"] / "weights.json").read_bytes()
    with pytest.raises(RunFileError, match=r"race\.json"):
        read_json_record(worlds["race"] / "race.json", WeightsDocument)


def test_a_torn_episode_line_on_resume_names_file_and_line(worlds, tmp_path: Path) -> None:
    from shoparena.eval.run import EpisodeStore

    run = _copy(worlds["eval"], tmp_path / "a")
    _torn_episode(run)
    with pytest.raises(RunFileError, match=r"episodes\.jsonl:1: torn or corrupt line"):
        EpisodeStore(run)


def test_an_empty_view_split_or_selection_is_a_config_error(tmp_path: Path) -> None:
    import datasets

    from shoparena.train.config import ConfigError, load_config
    from shoparena.train.data import select_rows

    views = tmp_path / "corpus" / "views"
    columns = datasets.Features({k: datasets.Value("string") for k in ("outcome", "origin", "record_id")})
    rejected = {"outcome": ["low_richness"], "origin": ["agentic"], "record_id": ["r:p:0"]}
    splits = {
        "train": datasets.Dataset.from_dict(rejected, features=columns),
        "eval": datasets.Dataset.from_dict({k: [] for k in rejected}, features=columns),
    }
    datasets.DatasetDict(splits).save_to_disk(str(views / "sft"))
    corpus = f"data.corpus={tmp_path / 'corpus'}"
    with pytest.raises(ConfigError, match="split 'eval' is empty"):
        select_rows(load_config("tiny", "sft", [corpus, "data.split=eval"]))
    with pytest.raises(ConfigError, match="keeps 0 of the 1 rows"):
        select_rows(load_config("tiny", "sft", [corpus, "data.split=train"]))
