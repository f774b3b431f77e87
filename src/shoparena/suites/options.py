"""Synthesis options and intent names: a light module, so the CLI can take its defaults from the config
without importing the synthesiser (search and scoring stacks)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from shoparena.records.problem import Intent

#: CLI names of the intents (``knowledge`` is upstream's name of the web task).
INTENT_NAMES: dict[str, Intent] = {
    "product": Intent.PRODUCT,
    "shop": Intent.SHOP,
    "voucher": Intent.VOUCHER,
    "knowledge": Intent.WEB,
    "web": Intent.WEB,
}


def parse_intents(text: str) -> tuple[Intent, ...]:
    """``"product,shop"`` -> intents (de-duplicated, in the given order).

    Raises:
        ValueError: naming an unknown intent.
    """
    out: list[Intent] = []
    for name in (t.strip().lower() for t in text.split(",") if t.strip()):
        if name not in INTENT_NAMES:
            raise ValueError(f"--intents: unknown intent {name!r} (known: {', '.join(INTENT_NAMES)})")
        if INTENT_NAMES[name] not in out:
            out.append(INTENT_NAMES[name])
    if not out:
        raise ValueError("--intents: no intent given")
    return tuple(out)


class SynthOptions(BaseModel):
    """Knobs of problem synthesis; the bank depends on these and the catalog only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n: int = Field(100, ge=1, description="Problems to keep (split evenly over the intents).")
    seed: int = Field(42, description="RNG seed (upstream 42).")
    intents: tuple[Intent, ...] = Field(default=(Intent.PRODUCT, Intent.SHOP, Intent.VOUCHER, Intent.WEB))
    allow_less_than: bool = Field(
        False, description="Allow `less than` price bounds (upstream data hold none)."
    )
    attempts_per_problem: int = Field(
        6, ge=1, description="Candidates tried per kept problem before giving up."
    )
    discriminative: bool = Field(True, description="Run the discriminative check (needs a search engine).")
    hard: bool = Field(
        False, description="Also reject problems the no-LLM shortcut miner (first hit of the query) solves."
    )
    oro_labels: bool = Field(True, description="Set ORO category, difficulty and display title.")

    def quotas(self) -> dict[Intent, int]:
        base, extra = divmod(self.n, len(self.intents))
        return {intent: base + (1 if i < extra else 0) for i, intent in enumerate(self.intents)}


__all__ = ["INTENT_NAMES", "SynthOptions", "parse_intents"]
