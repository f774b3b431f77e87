"""The judge and success gates have one home (``corpus.gates.gate_outcome``): the filter runs them after its
structural reasons and a recovered copy runs only them, so the two agree on every label combination."""

from __future__ import annotations

import itertools

import pytest

from shoparena.corpus.config import FilterConfig, GateConfig
from shoparena.corpus.filter import classify
from shoparena.corpus.gates import gate_outcome
from shoparena.corpus.recover import recover_record
from shoparena.records.corpus import CorpusLabels, CorpusMessage, CorpusRecord, Outcome, StructuralEvidence


def _record(labels: CorpusLabels) -> CorpusRecord:
    """A chat record that passes every structural reason, so only the gates decide."""
    evidence = StructuralEvidence(
        envelope_status="CHAT", dispatches=1, message_rule_ok=True, final_llm_emitted=True, format_ok=True
    )
    messages = [CorpusMessage(role="user", content="mug"), CorpusMessage(role="assistant", content="ok")]
    return CorpusRecord(
        record_id="r:p:0", run_id="r", problem_id="p", evidence=evidence, labels=labels, messages=messages
    )


JUDGE = (None, 0.2, 0.9)
SUCCESS = (None, False, True)


@pytest.mark.parametrize("success_profile", ["strict", "shoppingbench", "off"])
@pytest.mark.parametrize("judge_bar", [0.7, None])
def test_filter_and_recovery_agree_on_the_gates(judge_bar, success_profile) -> None:
    gates = GateConfig(judge_bar=judge_bar, success_profile=success_profile)
    for judge_q, strict, shoppingbench in itertools.product(JUDGE, SUCCESS, SUCCESS):
        labels = CorpusLabels(judge_q=judge_q, success=strict, success_shoppingbench=shoppingbench)
        expected = gate_outcome(_record(labels), gates) or Outcome.KEPT
        assert classify(_record(labels), FilterConfig(), gates).outcome == expected
        assert recover_record(_record(labels), gates).outcome == expected


def test_the_gates_in_order() -> None:
    gates = GateConfig(judge_bar=0.7, success_profile="strict")
    assert gate_outcome(_record(CorpusLabels(success=False)), gates) == Outcome.JUDGE_MISSING
    assert gate_outcome(_record(CorpusLabels(judge_q=0.2)), gates) == Outcome.JUDGE_BELOW_BAR
    assert gate_outcome(_record(CorpusLabels(judge_q=0.9)), gates) == Outcome.SUCCESS_UNSCORED
    assert gate_outcome(_record(CorpusLabels(judge_q=0.9, success=False)), gates) == Outcome.NOT_SUCCESSFUL
    assert gate_outcome(_record(CorpusLabels(judge_q=0.9, success=True)), gates) is None
