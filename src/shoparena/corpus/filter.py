"""Structural label and per-record outcome (the filter + judge/success gates), pure functions of a record.

Order of reasons: :data:`shoparena.records.corpus.OUTCOME_ORDER`. The corpus-level gates (duplicates, tokens)
run afterwards in :mod:`shoparena.corpus.gates` on the records still ``kept``.
"""

from __future__ import annotations

from shoparena.corpus.config import FilterConfig, GateConfig
from shoparena.corpus.gates import gate_outcome
from shoparena.records.corpus import CorpusRecord, Outcome, StructuralLabel


def uses_proofs(record: CorpusRecord, cfg: FilterConfig) -> bool:
    """The 'proof' variant applies: configured, and the trusted log carries per-dispatch proofs."""
    return cfg.richness_variant == "proof" and record.evidence.richness_proof is not None


def richness(record: CorpusRecord, cfg: FilterConfig) -> float | None:
    """The richness the filter thresholds: the proxy's proofs, Variant B, or A (configured / no proof)."""
    ev = record.evidence
    if uses_proofs(record, cfg):
        return ev.richness_proof
    if cfg.richness_variant == "pending":
        return ev.richness_pending
    if ev.richness_nonce is None and cfg.none_richness == "fallback_pending":
        return ev.richness_pending
    return ev.richness_nonce


def structural_label(record: CorpusRecord, cfg: FilterConfig) -> StructuralLabel:
    """agentic / subtask / no_llm / forged / malformed, from evidence only (never the harness truth)."""
    ev = record.evidence
    if ev.envelope_status not in ("SUCCESS", "CHAT") or not ev.has_dialogue:
        return "malformed"
    if cfg.trusted_teacher:
        return "agentic"
    if ev.proxy_log_problem:
        return "malformed"  # no evidence to classify by: lost, not forged
    if ev.forged:
        return "forged"
    if ev.envelope_status == "CHAT":
        return "agentic" if ev.message_rule_ok else "malformed"
    if ev.inference_calls == 0:
        return "no_llm"
    value = richness(record, cfg)
    if value is None or value < cfg.tau:
        return "subtask"
    return "agentic"


def first_failure(record: CorpusRecord, fcfg: FilterConfig, gcfg: GateConfig) -> str | None:
    """The first failing filter/gate reason in the fixed order, or None (the record passes so far)."""
    ev = record.evidence
    if ev.envelope_status not in ("SUCCESS", "CHAT") or not ev.has_dialogue:
        return "not_success_envelope"
    if fcfg.trusted_teacher:
        return _gates(record, fcfg, gcfg)
    if ev.proxy_log_problem:
        return "proxy_log_missing"
    if ev.forged:
        return "forged_log"
    if ev.dispatches == 0:
        return "no_dispatch"
    if ev.envelope_status != "CHAT":
        stamped = sum(ev.nonce_counts.values())
        # A proved dispatch needs no nonce (an honest tagged ORO miner sends none); forged stamps fail above.
        nonce_rule = fcfg.require_all_nonces_valid and not uses_proofs(record, fcfg)
        if nonce_rule and stamped and ev.nonce_counts.get("valid", 0) != ev.dispatches:
            return "nonce_invalid"
        value = richness(record, fcfg)
        if value is None:
            return "no_richness_proof"
        if value < fcfg.tau:
            return "low_richness"
    elif not ev.message_rule_ok:
        return "message_rule_failed"
    if fcfg.require_llm_final and not ev.final_llm_emitted:
        return "code_injected_final"
    return _gates(record, fcfg, gcfg)


def _gates(record: CorpusRecord, fcfg: FilterConfig, gcfg: GateConfig) -> str | None:
    """The checks after the structural ones: format, judge bar, success."""
    ev = record.evidence
    if fcfg.require_format and ev.format_ok is False:
        return "format_invalid"
    return gate_outcome(record, gcfg)


def classify(record: CorpusRecord, fcfg: FilterConfig, gcfg: GateConfig) -> CorpusRecord:
    """Set ``structural_label`` and ``outcome`` (kept or the first failing reason) in place."""
    record.structural_label = structural_label(record, fcfg)
    record.outcome = Outcome(first_failure(record, fcfg, gcfg) or Outcome.KEPT)
    if fcfg.trusted_teacher:  # the teacher wrote every turn; no log was there to prove it turn by turn
        for message in record.messages:
            if message.role == "assistant":
                message.trainable = True
    return record


__all__ = ["classify", "first_failure", "richness", "structural_label", "uses_proofs"]
