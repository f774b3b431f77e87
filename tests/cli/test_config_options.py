"""``eval run``, ``corpus build`` and ``arena firehose`` build their options from their config models: every
option is a field of the model (default, required-ness and, for corpus and firehose, help taken from it) or
is listed as none (``NOT_FIELDS``), so no option can carry a second copy of a default."""

from __future__ import annotations

from typing import Any

import pytest
import typer
import yaml
from pydantic import BaseModel
from typer.testing import CliRunner

from shoparena.arena.firehose import FirehoseConfig
from shoparena.cli import corpus as corpus_cli
from shoparena.cli import eval as eval_cli
from shoparena.cli import firehose as firehose_cli
from shoparena.cli._options import field_default
from shoparena.cli.main import app
from shoparena.corpus.config import CorpusConfig
from shoparena.eval.config import EvalConfig

COMMANDS = {
    ("eval", "run"): (EvalConfig, eval_cli),
    ("corpus", "build"): (CorpusConfig, corpus_cli),
    ("arena", "firehose"): (FirehoseConfig, firehose_cli),
}
#: The commands whose every field option's help is the field's description.
HELP_FROM_FIELD = (("corpus", "build"), ("arena", "firehose"))


def _command(path: tuple[str, ...]) -> Any:
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return command


def _field_params(path: tuple[str, ...]) -> list[tuple[Any, str]]:
    model, module = COMMANDS[path]
    params = [p for p in _command(path).params if p.name not in module.NOT_FIELDS]
    fields = [(p, module.FIELD_OF_OPTION.get(p.name, p.name)) for p in params]
    unknown = [p.name for p, field in fields if field not in model.model_fields]
    assert not unknown, f"{path}: options neither a {model.__name__} field nor in NOT_FIELDS: {unknown}"
    return fields


def _expected(model: type[BaseModel], field: str) -> object:
    value = field_default(model, field)
    return list(value) if isinstance(value, tuple | list) else value


@pytest.mark.parametrize("path", list(COMMANDS), ids=" ".join)
def test_each_option_defaults_to_its_config_field(path):
    model, _ = COMMANDS[path]
    fields = _field_params(path)
    assert len(fields) >= 7
    for param, field in fields:
        required = model.model_fields[field].is_required()
        assert param.required == required, (param.name, field)
        if not required:
            default = param.default if not isinstance(param.default, tuple) else list(param.default)
            assert default == _expected(model, field), (param.name, field, param.default)


@pytest.mark.parametrize("path", HELP_FROM_FIELD, ids=" ".join)
def test_each_option_help_is_its_field_description(path):
    model, _ = COMMANDS[path]
    for param, field in _field_params(path):
        description = model.model_fields[field].description
        assert description, f"{model.__name__}.{field} has no description for {param.name}'s help"
        assert (param.help or "").startswith(description), (param.name, field)


def test_the_not_fields_are_options_of_their_command():
    for path, (model, module) in COMMANDS.items():
        names = {p.name for p in _command(path).params}
        assert set(module.NOT_FIELDS) <= names | {"ctx"}, path
        assert not set(module.NOT_FIELDS) & set(model.model_fields), path


def test_corpus_build_options_given_override_the_config_file_and_defaults_do_not(tmp_path, monkeypatch):
    import shoparena.corpus as corpus_pkg

    seen: list[CorpusConfig] = []

    class Built(Exception):  # the command reached the build with this config
        pass

    def fake(config, **_):
        seen.append(config)
        raise Built

    monkeypatch.setattr(corpus_pkg, "build_corpus", fake)
    rows = tmp_path / "rows.jsonl"
    rows.write_text("", encoding="utf-8")
    config = tmp_path / "corpus.yaml"
    config.write_text(yaml.safe_dump({"render_profile": "upstream", "workers": 3}), encoding="utf-8")
    base = ["corpus", "build", "--from", str(rows), "--out", str(tmp_path / "out"), "--config", str(config)]
    for args in (base, [*base, "--render-profile", "compact", "--workers", "2"], base[:-2]):
        assert isinstance(CliRunner().invoke(app, args).exception, Built)
    got = [(c.render_profile, c.workers) for c in seen]
    assert got == [("upstream", 3), ("compact", 2), ("compact", None)]
    assert all(c.files == [rows] and c.out == tmp_path / "out" for c in seen)
    assert CorpusConfig.model_fields["render_profile"].default == "compact"


def test_firehose_options_reach_the_config(tmp_path, monkeypatch):
    import shoparena.arena.firehose as firehose_mod

    seen: list[FirehoseConfig] = []

    def fake(config, **_):
        seen.append(config)
        return []

    monkeypatch.setattr(firehose_mod, "run_firehose", fake)
    suite, index = tmp_path / "bank.json", tmp_path / "index"
    suite.write_text("[]", encoding="utf-8")
    index.mkdir()
    args = ["arena", "firehose", "--suite", str(suite), "--index", str(index), "--out", str(tmp_path / "o")]
    assert CliRunner().invoke(app, [*args, "--timeout", "5", "--seed", "3"]).exit_code == 0
    assert CliRunner().invoke(app, args).exit_code == 0
    first, second = seen
    assert (first.timeout_s, first.seed, first.suites, first.index) == (5.0, 3, [suite], index)
    defaults = FirehoseConfig(suites=[suite], index=index, out=tmp_path / "o")
    assert second == defaults
