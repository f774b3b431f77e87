"""The stage DAG: each stage a resumable step of one run directory, keyed by its config and its inputs.

A stage's hash covers its own config section(s) and the hashes of the stages it reads, so a change anywhere
re-runs exactly the stages downstream of it. Bookkeeping lives in the run directory's typed manifest
(:class:`shoparena.runs.RunDir`); a stage whose hash matches its completed record is skipped.

A stage whose implementation is not on this checkout raises :class:`StageUnavailable`; it is reported as
"unavailable", never recorded as done, and the stages that need it are reported "blocked" (they run on a later
invocation once it is available, because nothing was recorded for them).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console

from shoparena.pipeline.outputs import OutputT, StageOutput
from shoparena.runs import RunDir, RunManifest
from shoparena.runs.rundir import config_hash, from_run_relative


class StageFailedError(RuntimeError):
    """A stage raised; earlier stages stay recorded, so fixing the cause and re-running resumes here."""

    def __init__(self, stage: str, cause: BaseException) -> None:
        super().__init__(f"stage {stage} failed: {type(cause).__name__}: {cause}")
        self.stage = stage


class StageUnavailable(RuntimeError):
    """The stage's implementation is missing on this checkout (the message says which module and issue)."""


@dataclass(frozen=True)
class StageContext:
    """What a stage function gets: its directory, the config, and its inputs' outputs (records)."""

    run: RunDir
    name: str
    config: Any
    inputs: Mapping[str, StageOutput]
    console: Console
    stage_hash: str

    def input(self, model: type[OutputT]) -> OutputT:
        """The output of the stage that writes ``model`` (one of this stage's dependencies), as ``model``."""
        value = self.inputs[model.stage]
        return value if isinstance(value, model) else model.model_validate(value.record())

    @property
    def dir(self) -> Path:
        path = self.run.path / self.name
        path.mkdir(parents=True, exist_ok=True)
        return path


#: A stage returns its record (a test's stand-in may return a plain mapping: it is recorded as is).
StageFn = Callable[[StageContext], StageOutput | dict[str, Any]]


@dataclass(frozen=True)
class Stage:
    """A node: ``sections`` picks the config it depends on, ``deps`` the stages whose outputs it reads,
    ``output`` the record its outputs are (read back from the manifest on resume)."""

    name: str
    deps: tuple[str, ...]
    sections: Callable[[Any], Any]
    fn: StageFn
    title: str = ""
    optional: bool = field(default=False)
    output: type[StageOutput] = StageOutput
    #: Raised when what the stage writes changes for the same config, so a resumed run never reuses the
    #: older output (0 adds nothing to the hash: the stages' hashes before versions existed stay valid).
    version: int = 0


@dataclass
class StageResult:
    name: str
    status: str  # ran | resumed | unavailable | blocked | failed
    stage_hash: str | None = None
    seconds: float = 0.0
    outputs: StageOutput = field(default_factory=StageOutput)
    reason: str = ""


def upstream_of(stages: Sequence[Stage], name: str) -> set[str]:
    """``name`` and every stage it reads, directly or not (what ``pipeline run --until NAME`` runs)."""
    by_name = {s.name: s for s in stages}
    if name not in by_name:
        raise ValueError(f"unknown stage {name!r}; known: {', '.join(s.name for s in topological(stages))}")
    needed: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current not in needed:
            needed.add(current)
            todo.extend(by_name[current].deps)
    return needed


def topological(stages: Sequence[Stage]) -> list[Stage]:
    """The stages in an order where every dependency comes first; rejects unknown deps and cycles."""
    by_name = {s.name: s for s in stages}
    order: list[Stage] = []
    state: dict[str, int] = {}

    def visit(name: str, chain: tuple[str, ...]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            raise ValueError(f"stage cycle: {' -> '.join((*chain, name))}")
        if name not in by_name:
            raise ValueError(f"stage {chain[-1] if chain else '?'} depends on unknown stage {name!r}")
        state[name] = 1
        for dep in by_name[name].deps:
            visit(dep, (*chain, name))
        state[name] = 2
        order.append(by_name[name])

    for stage in stages:
        visit(stage.name, ())
    return order


def stage_payload(stage: Stage, config: Any, dep_hashes: Mapping[str, str]) -> dict[str, Any]:
    """What a stage's hash covers: its config section(s) and the hashes of the stages it reads."""
    payload = {"config": _jsonable(stage.sections(config)), "inputs": {d: dep_hashes[d] for d in stage.deps}}
    if stage.version:
        payload["version"] = stage.version
    return payload


def _jsonable(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def stage_hash(stage: Stage, config: Any, dep_hashes: Mapping[str, str]) -> str:
    return config_hash(stage_payload(stage, config, dep_hashes))


def plan(
    stages: Sequence[Stage], config: Any, manifest: RunManifest | None = None, root: Path | None = None
) -> list[tuple[str, str, bool]]:
    """(stage, hash, done already in ``manifest``) for every stage, without running anything (the dry run).
    With the run directory ``root``, a stage whose outputs were deleted, or that needs one that will run, is
    not done (as :func:`run_dag` decides)."""
    hashes: dict[str, str] = {}
    done: dict[str, bool] = {}
    rows = []
    for stage in topological(stages):
        hashes[stage.name] = stage_hash(stage, config, hashes)
        record = manifest.stages.get(stage.name) if manifest is not None else None
        ok = record is not None and record.config_hash == hashes[stage.name]
        if ok and root is not None and record is not None:
            ok = not _missing_outputs(root, record.outputs) and all(done[d] for d in stage.deps)
        done[stage.name] = ok
        rows.append((stage.name, hashes[stage.name], ok))
    return rows


#: Stage output keys that name files or directories (the rest are numbers, stats and names).
_PATH_KEYS = ("path", "final", "race_dirs")


def _missing_outputs(root: Path, outputs: Mapping[str, Any]) -> list[str]:
    """The recorded output paths inside the run directory that no longer exist (a deleted stage directory).
    Paths outside it (a hub model name, a base model folder) are not the run's to check."""
    inside = root.resolve()
    missing = []
    for key in _PATH_KEYS:
        value = from_run_relative(outputs.get(key), root)  # "./x" as the manifest stores it: root / x
        for item in value if isinstance(value, list) else [value]:
            item = str(item) if isinstance(item, Path) else item
            if not isinstance(item, str) or not item:
                continue
            path = Path(item)
            if path.exists() or (not path.is_absolute() and (root / path).exists()):
                continue
            if path.resolve() == inside or inside in path.resolve().parents:
                missing.append(item)
    return missing


def run_dag(
    stages: Sequence[Stage],
    config: Any,
    run: RunDir,
    *,
    console: Console | None = None,
    only: Sequence[str] | None = None,
) -> list[StageResult]:
    """Run every stage whose hash has no completed record; resume the rest. Returns one result per stage."""
    console = console or Console()
    results: dict[str, StageResult] = {}
    hashes: dict[str, str] = {}
    for number, stage in enumerate(topological(stages), start=1):
        payload = stage_payload(stage, config, hashes)
        h = hashes[stage.name] = config_hash(payload)
        missing = [d for d in stage.deps if results[d].status not in {"ran", "resumed"}]
        if missing:
            reason = f"needs {', '.join(missing)}"
            results[stage.name] = StageResult(stage.name, "blocked", h, reason=reason)
            console.print(f"[yellow]{number:>2}. {stage.name}: blocked ({reason})")
            continue
        record = run.done(stage.name, payload)
        gone = _missing_outputs(run.path, record.outputs) if record is not None else []
        if gone:  # recorded, but its output was deleted since: run it again
            console.print(f"[yellow]{number:>2}. {stage.name}: output missing ({gone[0]}), running it again")
            record = None
        elif record is not None and any(results[d].status == "ran" for d in stage.deps):
            record = None  # an input was just remade under the same hash: remake what was built on it
        recorded = _recorded_output(stage, record.outputs, console) if record is not None else None
        if record is not None and recorded is not None:
            results[stage.name] = StageResult(stage.name, "resumed", h, record.seconds, recorded)
            console.print(f"[dim]{number:>2}. {stage.name}: resumed ({h})")
            continue
        if only is not None and stage.name not in only:
            results[stage.name] = StageResult(stage.name, "blocked", h, reason="not selected")
            continue
        console.rule(f"[bold]{number}. {stage.title or stage.name}")
        ctx = StageContext(
            run=run,
            name=stage.name,
            config=config,
            inputs={d: results[d].outputs for d in stage.deps},
            console=console,
            stage_hash=h,
        )
        started = time.time()
        try:
            returned = stage.fn(ctx)
            outputs = returned if isinstance(returned, StageOutput) else stage.output.model_validate(returned)
        except StageUnavailable as exc:
            results[stage.name] = StageResult(stage.name, "unavailable", h, reason=str(exc))
            console.print(f"[yellow]{stage.name}: not available: {exc}")
            continue
        except Exception as exc:
            raise StageFailedError(stage.name, exc) from exc
        record = run.complete(stage.name, payload, started, outputs.record(), invalidate_later=False)
        results[stage.name] = StageResult(stage.name, "ran", h, record.seconds, outputs)
        console.print(f"[green]{stage.name}: done in {record.seconds:.1f}s")
    return [results[s.name] for s in topological(stages)]


def _recorded_output(stage: Stage, outputs: Mapping[str, Any], console: Console) -> StageOutput | None:
    """A completed stage's recorded outputs as its record; None (run it again) when they are not one."""
    try:
        return stage.output.model_validate(dict(outputs))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        console.print(
            f"[yellow]{stage.name}: recorded outputs unreadable ({where}: {first['msg']}), running it again"
        )
        return None
