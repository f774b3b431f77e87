"""Every CLI command with an output option goes through the one output guard (issue 52): this walks the
app, requires each such command to be listed here, and plants each case on it: a symbolic link, a run's or
index's own file, a path inside an input, the input itself, and (where the command recognises its own
files) a file of someone else's. Each must exit 2 with one line and leave every planted file as it was."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from shoparena.cli.main import app

OUTPUT_OPTIONS = {"--out", "--quarantine", "--run-dir"}
PRECIOUS = b'{"precious": true}\n'


def _commands_with_output() -> set[str]:
    found = set()

    def walk(command, prefix: list[str]) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*prefix, name])
            return
        for param in command.params:
            if getattr(param, "param_type_name", "") == "option" and OUTPUT_OPTIONS & set(param.opts):
                found.add(" ".join(prefix))

    walk(typer.main.get_command(app), [])
    return found


class World:
    def __init__(self, root: Path, shop_world) -> None:
        self.root = root
        self.index = root / "index"
        shutil.copytree(shop_world.index, self.index)  # a copy: planted cases must not touch the shared one
        self.suite = root / "suite.json"
        shutil.copy(shop_world.mixed, self.suite)
        self.catalog = root / "catalog.jsonl"
        self.catalog.write_bytes(b'{"product_id": "1"}\n')
        self.trajectories = root / "output.jsonl"
        self.trajectories.write_bytes(b"")
        self.run = root / "run"  # a run directory: a manifest.json makes it one
        self.run.mkdir()
        (self.run / "manifest.json").write_bytes(PRECIOUS)
        self.victim = root / "victim.json"
        self.victim.write_bytes(PRECIOUS)


# command -> (args given the output path, the inputs it reads, folder output?, recognises its own files?)
FILE_COMMANDS: dict[str, tuple[Callable[[World, str], list[str]], Callable[[World], list[Path]], bool]] = {
    "report": (lambda w, o: ["report", str(w.run), "--out", o], lambda w: [w.run], True),
    "score": (
        lambda w, o: ["score", "--suite", str(w.suite), "--trajectories", str(w.trajectories),
                      "--index", str(w.index), "--out", o],
        lambda w: [w.suite, w.trajectories, w.index], True),
    "arena calibrate": (lambda w, o: ["arena", "calibrate", str(w.run), str(w.index), "--out", o],
                        lambda w: [w.run, w.index], False),
    "catalog validate": (lambda w, o: ["catalog", "validate", str(w.catalog), "--quarantine", o],
                         lambda w: [w.catalog], True),
    "catalog synth": (lambda w, o: ["catalog", "synth", "--products", "3", "--out", o], lambda w: [], False),
    "catalog plant": (lambda w, o: ["catalog", "plant", "--suite", str(w.suite), "--catalog", str(w.catalog),
                                    "--out", o], lambda w: [w.suite, w.catalog], False),
    "episodes run": (lambda w, o: ["episodes", "run", "--suite", str(w.suite), "--index", str(w.index),
                                   "--out", o, "--no-progress"], lambda w: [w.suite, w.index], False),
    "suite synth": (lambda w, o: ["suite", "synth", "--index", str(w.index), "--n", "1", "--out", o],
                    lambda w: [w.index], False),
    "suite cluster": (lambda w, o: ["suite", "cluster", str(w.suite), "--out", o], lambda w: [w.suite], True),
}  # fmt: skip
FOLDER_COMMANDS: dict[str, tuple[Callable[[World, str], list[str]], Callable[[World], list[Path]]]] = {
    "catalog index": (lambda w, o: ["catalog", "index", str(w.catalog), "--out", o], lambda w: [w.catalog]),
    "suite partition": (lambda w, o: ["suite", "partition", "--bank", str(w.suite), "--out", o],
                        lambda w: [w.suite]),
    "arena run": (lambda w, o: ["arena", "run", "--agents", "shortcut", "--suite", str(w.suite),
                                "--index", str(w.index), "--out", o], lambda w: [w.suite, w.index]),
    "arena race": (lambda w, o: ["arena", "race", "--qualifying", str(w.run), "--race-bank", str(w.suite),
                                 "--out", o], lambda w: [w.run, w.suite]),
    "models tiny": (lambda w, o: ["models", "tiny", "--out", o], lambda w: []),
    "models smollm2": (lambda w, o: ["models", "smollm2", "--out", o], lambda w: []),
}  # fmt: skip
#: Run directories, claimed by ``runs.identity.claim_run_dir`` (the same rules; planted in these tests).
CLAIMED = {
    "arena firehose": "tests/arena/test_firehose_identity.py",
    "corpus build": "tests/corpus/test_build_identity.py",
    "corpus publish": "tests/fuzz/test_fuzz_untrusted.py",
    "eval run": "tests/eval/test_run_paths.py",
    "pipeline run": "tests/runs/test_identity.py",
    "train sft": "tests/train/test_train_resume.py",
    "train grpo": "tests/train/test_train_resume.py",
    "train kto": "tests/train/test_train_resume.py",
}


def test_every_command_with_an_output_option_is_walked() -> None:
    listed = set(FILE_COMMANDS) | set(FOLDER_COMMANDS) | set(CLAIMED)
    assert _commands_with_output() == listed
    root = Path(__file__).resolve().parents[2]
    assert all((root / test).is_file() for test in CLAIMED.values())


@pytest.fixture
def world(tmp_path: Path, shop_world) -> World:
    return World(tmp_path, shop_world)


def _snapshot(root: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        key = str(path.relative_to(root))
        if path.is_symlink():
            out[key] = "link -> " + str(path.readlink())
        elif path.is_file():
            out[key] = path.read_bytes()
    return out


def _refused(world: World, args: list[str]) -> str:
    before = _snapshot(world.root)
    result = CliRunner().invoke(app, args, env={"COLUMNS": "400"})
    text = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert result.exit_code == 2, (args, result.exit_code, text)
    assert "Traceback" not in text and (result.exception is None or isinstance(result.exception, SystemExit))
    assert _snapshot(world.root) == before, f"{args}: a planted file changed"
    return text


def _file_cases(world: World, inputs: list[Path], recognises: bool) -> dict[str, Path]:
    link = world.root / "link.out"
    link.symlink_to(world.victim)
    cases = {
        "a link": link,
        "an index's own file": world.index / "manifest.json",
        "a run's own file": world.run / "manifest.json",
    }
    for i, item in enumerate(inputs):
        cases[f"input {i}"] = item
        if item.is_dir():
            cases[f"inside input {i}"] = item / "new.out"
    if recognises:
        foreign = world.root / "notes.txt"
        foreign.write_bytes(b"my notes, not a command's output\n")
        cases["a foreign file"] = foreign
    return cases


@pytest.mark.parametrize("command", sorted(FILE_COMMANDS))
def test_file_outputs_refuse_every_planted_case(world: World, command: str) -> None:
    args, inputs, recognises = FILE_COMMANDS[command]
    for case, out in _file_cases(world, inputs(world), recognises).items():
        text = _refused(world, args(world, str(out)))
        assert str(out.name) in text or case == "a foreign file", (command, case, text)
        assert world.victim.read_bytes() == PRECIOUS


@pytest.mark.parametrize("command", sorted(FOLDER_COMMANDS))
def test_folder_outputs_refuse_every_planted_case(world: World, command: str) -> None:
    args, inputs = FOLDER_COMMANDS[command]
    target = world.root / "elsewhere"
    target.mkdir()
    link = world.root / "link.dir"
    link.symlink_to(target)
    cases = {"a link": link, "a file": world.victim}
    for i, item in enumerate(inputs(world)):
        cases[f"holds input {i}"] = item.parent
    for case, out in cases.items():
        _refused(world, args(world, str(out)))
        assert not any(target.iterdir()), (command, case)


def test_a_failed_write_leaves_the_existing_file_whole(world: World) -> None:
    """``catalog validate --quarantine EXISTING`` on a damaged input used to leave the file at 0 bytes."""
    quarantine = world.root / "q.jsonl"
    quarantine.write_bytes(b'{"line_no": 1, "reason": "old", "raw": "x"}\n')
    damaged = world.root / "damaged.jsonl.gz"
    damaged.write_bytes(b"\x1f\x8b\x08\x00broken")
    result = CliRunner().invoke(app, ["catalog", "validate", str(damaged), "--quarantine", str(quarantine)])
    assert result.exit_code == 3
    assert quarantine.read_bytes() == b'{"line_no": 1, "reason": "old", "raw": "x"}\n'
    assert [p.name for p in world.root.iterdir() if p.name.startswith(".q.jsonl")] == []
    # and a file it wrote is replaced whole by the next run
    args = ["catalog", "validate", str(world.catalog), "--quarantine", str(quarantine)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1 and b'"reason"' in quarantine.read_bytes()
    assert b'"reason": "old"' not in quarantine.read_bytes()
