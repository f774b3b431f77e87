"""The run-directory layer of the fuzz suite (issue 23): seeded mutations of the files one stage writes and
another reads, and of every command's config, each fed to the command that reads it.

A base of real run directories is built once (a one-race firehose, two ``eval run`` directories, a pipeline
run directory with fake stages); each case copies the base, damages one file (structure, bytes, a hostile
top-level value, an empty or missing file) and runs the reading command in-process. The promise checked:
exit 0, or a documented error exit with a message and never a traceback. Every case is reproducible from
``(kind, seed, index)``.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import shutil
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from fuzz_helpers import HOSTILE_VALUES, mutate_bytes, mutate_line, mutate_value
from rich.console import Console
from typer.testing import CliRunner, Result

from shoparena.cli.main import app

#: Documented exit codes per command (docs/reliability.md): 0, or 2 with a one-line error.
COMMAND_EXITS = {
    "corpus build": {0, 2},
    "eval compare": {0, 2},
    "report": {0, 2},
    "pipeline run": {0, 2},
    "train config": {0, 2},
}


@dataclass
class Base:
    """The run directories every case starts from."""

    root: Path
    race: Path  # a firehose race directory (race-000)
    eval_a: Path
    eval_b: Path
    pipeline: Path

    def race_file(self, pattern: str) -> str:
        """The path (relative to the race directory) of the first file matching ``pattern``."""
        return str(next(iter(sorted(self.race.glob(pattern)))).relative_to(self.race))


@dataclass
class Outcome:
    """What one fuzz kind saw (the record in docs/reliability.md)."""

    cases: int = 0
    exits: Counter = field(default_factory=Counter)
    tracebacks: list[str] = field(default_factory=list)


def build_base(root: Path, shop_world: Any) -> Base:
    """A one-race firehose (two miners, two problems), two eval runs and a fake-stage pipeline run."""
    from shoparena.arena.firehose import FirehoseConfig, run_firehose
    from shoparena.eval.config import EvalConfig
    from shoparena.eval.run import run_eval
    from shoparena.pipeline import PipelineConfig, run_pipeline
    from shoparena.report import render_report

    fh = FirehoseConfig(
        suites=[shop_world.bank],
        index=shop_world.index,
        out=root / "fh",
        races=1,
        problems_per_race=2,
        timeout_s=10,
        population=[("agentic-careful", "agentic", "careful"), ("crash", "faulty", "")],
    )
    run_firehose(fh, search=shop_world.engine)
    evals = []
    for name in ("a", "b"):
        config = EvalConfig(
            policy="planner",
            suite=shop_world.bank,
            index=shop_world.index,
            out=root / f"eval-{name}",
            progress=False,
            max_steps=8,
            bootstrap=100,
        )
        run_eval(config, engine=shop_world.engine)
        evals.append(config.out)
    pipeline = root / "pipeline"
    console = Console(file=io.StringIO())
    run_pipeline(PipelineConfig(), pipeline, stages=_fake_stages(), console=console, report=render_report)
    return Base(root, root / "fh" / "race-000", evals[0], evals[1], pipeline)


def _fake_stages() -> list[Any]:
    from shoparena.pipeline import Stage
    from shoparena.pipeline.stages import pipeline_stages

    def make(name: str) -> Callable[[Any], dict[str, Any]]:
        def fn(ctx: Any) -> dict[str, Any]:
            (ctx.dir / "out.txt").write_text(name)
            return {"path": str(ctx.dir / "out.txt")}

        return fn

    return [Stage(s.name, s.deps, s.sections, make(s.name), s.title) for s in pipeline_stages()]


# ------------------------------------------------------------------------------------------- mutators


def mutate_file(rng: random.Random, path: Path) -> str:
    """Damage ``path`` once (or remove it); returns what was done."""
    if not path.exists():
        path.write_bytes(b"")
    data = path.read_bytes()
    op = rng.randrange(10)
    if op == 0:
        path.unlink()
        return "missing"
    if op == 1:
        path.write_bytes(b"")
        return "empty"
    if op == 2:
        path.write_bytes(mutate_bytes(rng, data))
        return "bytes"
    if op == 3:
        value = rng.choice(HOSTILE_VALUES)
        path.write_bytes(json.dumps(value).encode("utf-8", "surrogatepass"))
        return "hostile top level"
    if path.suffix == ".jsonl":
        lines = data.split(b"\n")
        i = rng.randrange(len(lines))
        lines[i] = mutate_line(rng, lines[i]) if lines[i].strip() else mutate_bytes(rng, b"{}")
        if rng.random() < 0.3 and lines[i].strip():
            lines.insert(i, lines[i])  # a repeated line
        path.write_bytes(b"\n".join(lines))
        return "line"
    try:
        value = yaml.safe_load(data) if path.suffix in (".yaml", ".yml") else json.loads(data)
    except (ValueError, yaml.YAMLError):
        path.write_bytes(mutate_bytes(rng, data))
        return "bytes"
    for _ in range(rng.randrange(1, 4)):
        value = mutate_value(rng, value)
    if path.suffix in (".yaml", ".yml"):
        text = yaml.safe_dump(value, allow_unicode=True) if rng.random() < 0.8 else json.dumps(value)
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
    else:
        path.write_bytes(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    return "structure"


# ------------------------------------------------------------------------------------------- kinds


def _invoke(command: str, args: list[str], outcome: Outcome, label: str) -> Result:
    result = CliRunner().invoke(app, args)
    outcome.cases += 1
    outcome.exits[result.exit_code] += 1
    escaped = result.exception is not None and not isinstance(result.exception, SystemExit)
    if escaped or "Traceback" in result.output or result.exit_code not in COMMAND_EXITS[command]:
        where = ""
        if escaped and result.exc_info is not None:
            frame = traceback.extract_tb(result.exc_info[2])[-1]
            where = f" at {Path(frame.filename).name}:{frame.lineno}"
        outcome.tracebacks.append(f"{label}: exit {result.exit_code}: {result.exception!r}{where}")
    elif result.exit_code:
        assert result.stderr.strip() or result.stdout.strip(), f"{label}: an error exit must say why"
    return result


def _copy_race(base: Base, work: Path) -> Path:
    shutil.copytree(base.race.parent, work / "fh", symlinks=True)
    return work / "fh" / base.race.name


@contextlib.contextmanager
def _damaged(path: Path, rng: random.Random) -> Iterator[str]:
    """Damage ``path`` in place for one case and put the original back afterwards (no tree copy)."""
    original = path.read_bytes() if path.exists() else None
    try:
        yield mutate_file(rng, path)
    finally:
        if original is None:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(original)


def _corpus_build(base: Base, work: Path, rel: str, rng: random.Random, outcome: Outcome, label: str) -> None:
    with _damaged(base.race / rel, rng) as how:
        args = ["corpus", "build", str(base.race), "--out", str(work / "corpus")]
        _invoke("corpus build", args, outcome, f"{label} {rel} ({how})")


def _eval_compare(base: Base, work: Path, rel: str, rng: random.Random, outcome: Outcome, label: str) -> None:
    with _damaged(base.eval_a / rel, rng) as how:
        args = ["eval", "compare", str(base.eval_b), str(base.eval_a)]
        _invoke("eval compare", args, outcome, f"{label} {rel} ({how})")


def _report(base: Base, work: Path, rel: str, rng: random.Random, outcome: Outcome, label: str) -> None:
    with _damaged(base.pipeline / rel, rng) as how:
        args = ["report", str(base.pipeline), "--out", str(work / "r.html")]
        _invoke("report", args, outcome, f"{label} {rel} ({how})")


CORPUS_YAML = {
    "filter": {"tau": 1.0, "require_format": True},
    "gates": {"judge_bar": 0.5, "success_profile": "strict", "max_tokens": 8192},
    "split": {"seed": 0, "eval_fraction": 0.25},
    "recover": True,
}
PIPELINE_YAML = {
    "workers": 2,
    "firehose": {"races": 1, "problems_per_race": 4},
    "corpus": {"recover": True, "render_profile": "compact"},
    "sft": {"preset": "tiny", "select": "kept"},
    "eval": {"samples": 1, "max_steps": 6},
}


def _corpus_config(base: Base, work: Path, rng: random.Random, outcome: Outcome, label: str) -> None:
    race = _copy_race(base, work)
    path = work / "corpus.yaml"
    path.write_text(yaml.safe_dump(CORPUS_YAML))
    how = mutate_file(rng, path)
    args = ["corpus", "build", str(race), "--out", str(work / "corpus")]
    if path.exists():
        args += ["--config", str(path)]
    _invoke("corpus build", args, outcome, f"{label} corpus.yaml ({how})")


def _pipeline_config(base: Base, work: Path, rng: random.Random, outcome: Outcome, label: str) -> None:
    path = work / "pipeline.yaml"
    path.write_text(yaml.safe_dump(PIPELINE_YAML))
    how = mutate_file(rng, path)
    args = ["pipeline", "run", "--dry-run", "--out", str(work / "run")]
    if path.exists():
        args += ["--config", str(path)]
    _invoke("pipeline run", args, outcome, f"{label} pipeline.yaml ({how})")


def _train_config(base: Base, work: Path, rng: random.Random, outcome: Outcome, label: str) -> None:
    """``train sft --config``'s loader (the command would go on to train: the loader is what reads it)."""
    from shoparena.train.config import ConfigError, load_config, resolved_preset

    path = work / "train.yaml"
    path.write_text(yaml.safe_dump(resolved_preset("tiny")))
    how = mutate_file(rng, path)
    outcome.cases += 1
    try:
        load_config(str(path), "sft", [])
        outcome.exits[0] += 1
    except ConfigError as exc:
        outcome.exits[2] += 1
        assert str(exc).strip()
    except Exception as exc:  # anything else is a traceback at the CLI
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f" at {Path(frame.filename).name}:{frame.lineno}"
        outcome.tracebacks.append(f"{label} train.yaml ({how}): {exc!r}{where}")


def _out_collision(base: Base, work: Path, rng: random.Random, outcome: Outcome, label: str) -> None:
    """``--out`` onto a file, an input, or a directory of another kind."""
    race = _copy_race(base, work)
    a = work / "a"
    shutil.copytree(base.eval_a, a)
    a_file = a / "summary.json"
    choice = rng.randrange(6)
    if choice == 0:
        command, args = "corpus build", ["corpus", "build", str(race), "--out", str(a_file)]
    elif choice == 1:
        command, args = "corpus build", ["corpus", "build", str(race), "--out", str(race)]
    elif choice == 2:
        command, args = "corpus build", ["corpus", "build", str(race), "--out", str(race / "agents")]
    elif choice == 3:
        command, args = "corpus build", ["corpus", "build", str(race), "--out", str(a)]
    elif choice == 4:
        command, args = "pipeline run", ["pipeline", "run", "--dry-run", "--out", str(a_file)]
    else:
        command, args = "report", ["report", str(a), "--out", str(a)]
    _invoke(command, args, outcome, f"{label} --out collision {choice}")


def kinds(base: Base) -> dict[str, Callable[[Path, random.Random, Outcome, str], None]]:
    """Fuzz kind -> one case (work directory, rng, outcome, label)."""

    def race(rel: str) -> Callable[[Path, random.Random, Outcome, str], None]:
        return lambda work, rng, out, label: _corpus_build(base, work, rel, rng, out, label)

    def ev(rel: str) -> Callable[[Path, random.Random, Outcome, str], None]:
        return lambda work, rng, out, label: _eval_compare(base, work, rel, rng, out, label)

    def rep(rel: str) -> Callable[[Path, random.Random, Outcome, str], None]:
        return lambda work, rng, out, label: _report(base, work, rel, rng, out, label)

    return {
        "race.json": race("race.json"),
        "miner.json": race(base.race_file("agents/*/miner.json")),
        "judge.jsonl": race(base.race_file("agents/*/judge.jsonl")),
        "proxy log": race(base.race_file("proxy/*/*.jsonl")),
        "race output.jsonl": race(base.race_file("agents/*/output.jsonl")),
        "race manifest.json": race("manifest.json"),
        "race config.yaml": race("config.yaml"),
        "eval episodes.jsonl": ev("episodes.jsonl"),
        "eval summary.json": ev("summary.json"),
        "eval manifest.json": ev("manifest.json"),
        "pipeline manifest.json": rep("manifest.json"),
        "pipeline summary.json": rep("summary.json"),
        "corpus.yaml": lambda work, rng, out, label: _corpus_config(base, work, rng, out, label),
        "pipeline.yaml": lambda work, rng, out, label: _pipeline_config(base, work, rng, out, label),
        "train.yaml": lambda work, rng, out, label: _train_config(base, work, rng, out, label),
        "--out collisions": lambda work, rng, out, label: _out_collision(base, work, rng, out, label),
    }


def private_base(base: Base, tmp: Path) -> Base:
    """A copy of the base for one fuzz run: cases damage its files in place and restore them."""
    root = tmp / "base"
    shutil.copytree(base.root, root, symlinks=True)

    def moved(path: Path) -> Path:
        return root / path.relative_to(base.root)

    return Base(root, moved(base.race), moved(base.eval_a), moved(base.eval_b), moved(base.pipeline))


def fuzz_kind(base: Base, kind: str, tmp: Path, seed: int, cases: int) -> Outcome:
    """Run ``cases`` seeded cases of one kind, each in its own work directory (removed afterwards)."""
    own = private_base(base, tmp)
    run = kinds(own)[kind]
    outcome = Outcome()
    for i in range(cases):
        rng = random.Random(f"{kind}/{seed}/{i}")
        work = tmp / f"case-{i}"
        work.mkdir(parents=True)
        try:
            run(work, rng, outcome, f"[{kind} seed={seed} case={i}]")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(own.root, ignore_errors=True)
    return outcome
