"""Firehose recovery (spec §9 decision 10): sub-task trajectories rewritten as agentic conversations.

A sub-task miner's loop issued the catalogue calls in code and used the LLM only to pick or narrate. Its
envelope already lists every call and result per step, so the rewrite is structural: each step becomes an
assistant turn whose tool calls are the loop's calls (now the model's own action) and whose content is the
step's narration / the model's pick as reasoning; every assistant turn is trainable. Only sub-task records
that failed the structural filter alone (never forged or malformed ones) are recovered; the copy then passes
the judge, success, dedup and token gates like any record and is marked ``origin="recovered"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from shoparena.corpus.config import GateConfig
from shoparena.corpus.gates import gate_outcome
from shoparena.records.corpus import CorpusRecord, Outcome

#: Outcomes a sub-task trajectory may have for recovery: it failed only because code made the calls
#: (``nonce_invalid`` here means unstamped 'missing' dispatches: forged statuses make the record forged).
RECOVERABLE = frozenset({"nonce_invalid", "no_richness_proof", "low_richness", "code_injected_final"})


def recoverable(record: CorpusRecord) -> bool:
    return (
        record.origin == "agentic"
        and record.structural_label == "subtask"
        and record.outcome in RECOVERABLE
        and not record.evidence.forged
        and any(m.role == "assistant" for m in record.messages)
    )


def recover_record(record: CorpusRecord, gates: GateConfig) -> CorpusRecord:
    """The recovered copy of a sub-task record, classified by the judge and success gates."""
    run_id = f"{record.run_id}+recovered"
    messages = [m.model_copy(update={"trainable": m.role == "assistant"}) for m in record.messages]
    copy = record.model_copy(
        deep=True,
        update={
            "record_id": f"{run_id}:{record.problem_id}:{record.rollout_idx}",
            "run_id": run_id,
            "origin": "recovered",
            "recovered_from": record.record_id,
            "messages": messages,
            "trainable_tokens": None,
        },
    )
    copy.outcome = gate_outcome(copy, gates) or Outcome.KEPT
    return copy


def recover(records: Iterable[CorpusRecord], gates: GateConfig) -> Iterator[CorpusRecord]:
    """Recovered copies of every recoverable record, in input order."""
    for record in records:
        if recoverable(record):
            yield recover_record(record, gates)


__all__ = ["RECOVERABLE", "recover", "recover_record", "recoverable"]
