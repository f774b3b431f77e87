"""``CorpusRecord.outcome`` is an :class:`Outcome`: an unknown reason is refused, the JSON value is plain."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from shoparena.records.corpus import OUTCOME_ORDER, CorpusRecord, Outcome, StructuralEvidence


def _record(**fields):
    return CorpusRecord(
        record_id="r:p:0",
        run_id="r",
        problem_id="p",
        evidence=StructuralEvidence(envelope_status="SUCCESS"),
        **fields,
    )


def test_outcome_is_typed_and_dumps_as_its_plain_value():
    record = _record(outcome="near_duplicate")
    assert record.outcome is Outcome.NEAR_DUPLICATE
    assert json.loads(record.model_dump_json())["outcome"] == "near_duplicate"
    assert CorpusRecord.model_validate_json(record.model_dump_json()).outcome is Outcome.NEAR_DUPLICATE
    assert _record().outcome is Outcome.KEPT


def test_an_unknown_outcome_is_refused():
    with pytest.raises(ValidationError, match="outcome"):
        _record(outcome="kept-ish")


def test_the_reason_order_lists_every_outcome_but_kept():
    assert set(OUTCOME_ORDER) == set(Outcome) - {Outcome.KEPT}
    assert OUTCOME_ORDER[0] is Outcome.NOT_SUCCESS_ENVELOPE and OUTCOME_ORDER[-1] is Outcome.TOO_FEW_TOKENS
