"""Policy specs are read by one table of kinds (eval.policies.POLICY_KINDS)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoparena.eval.config import EvalConfig
from shoparena.eval.policies import POLICY_KINDS, PolicyKind, build_policy, policy_folder, policy_kind


def _config(policy: str) -> EvalConfig:
    return EvalConfig(policy=policy, suite=Path("s.json"), index=Path("idx"), out=Path("out"))


@pytest.mark.parametrize(
    ("spec", "kind"),
    [
        ("planner", "planner"),
        (" hf:runs/sft/final ", "hf"),
        ("transformers:m#x", "hf"),
        ("openai:http://h:8000/v1#Qwen", "openai"),
        ("https://h/v1#m", "openai"),
        ("miner:agentic", "miner"),
        ("plannerx", None),
        ("gguf:m", None),
    ],
)
def test_each_spec_form_has_its_kind(spec: str, kind: str | None) -> None:
    found = policy_kind(spec)
    assert (found.name if found else None) == kind


def test_the_folder_of_an_hf_spec() -> None:
    assert policy_folder(" hf:runs/sft/final#rev ") == Path("runs/sft/final")


def test_an_unknown_spec_names_every_kind() -> None:
    expected = r"'gguf:m': expected planner, hf:DIR, openai:URL#model or miner:FILE"
    with pytest.raises(ValueError, match=expected):
        build_policy(_config("gguf:m"), engine=None, knowledge=None)


def test_a_kind_added_as_one_entry_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []

    def build(spec, config, engine, knowledge, backend):
        seen.append((spec, engine, backend))
        return "a policy"

    monkeypatch.setitem(POLICY_KINDS, "echo", PolicyKind("echo", (), ("echo:",), build))
    assert build_policy(_config(" echo:1 "), engine="E", knowledge=None, backend="B") == "a policy"
    assert seen == [("echo:1", "E", "B")]
