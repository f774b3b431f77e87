"""The render stamp: which render profile and chat template a policy's text was rendered with.

Written by training into every checkpoint folder (``shoparena-render.json``) and into the corpus card; read by
``eval run`` to evaluate a student under the rendering it was trained on.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

RENDER_STAMP_NAME = "shoparena-render.json"


class RenderStamp(BaseModel):
    """A profile name with the fingerprints of its fixed text and of the chat template."""

    model_config = ConfigDict(extra="forbid")

    profile: str = Field(description="Render profile name (upstream | compact).")
    profile_hash: str = Field(description="Fingerprint of the profile's fixed text.")
    template_hash: str = Field(default="", description="sha256 prefix of the tokenizer's chat template.")


__all__ = ["RENDER_STAMP_NAME", "RenderStamp"]
