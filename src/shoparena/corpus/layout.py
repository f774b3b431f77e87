"""The layout of a corpus directory (``corpus build``): the one module that spells its names.

::

    identity.json  config.yaml  manifest.json  summary.json
    records.jsonl     one CorpusRecord per kept, rejected or recovered trajectory
    quarantine.jsonl  what could not be read, with the reason
    problems.json     the problems the records answer, with their split and leak cluster
    views/            <view>-<split>.parquet / .jsonl and views/<view>/ (the HF DatasetDict)
    report.json       funnel, richness, judge bins, diversity, the render profile
    diversity.json    ``corpus report --suite``'s comparison with one teacher
    README.md         the dataset card
    work/             ingest caches and pass 1 (classified.jsonl)

``corpus.build`` writes it through :class:`CorpusRun`'s paths; readers (train data, the viewer, the report,
``corpus report``) open it with :func:`shoparena.runs.layout.open_run` or :meth:`CorpusRun.at`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from shoparena.jsonl import iter_raw_lines
from shoparena.records.corpus import CorpusRecord, CorpusReport
from shoparena.runs.files import RunFileError, iter_json_lines, read_json_record, validation_detail
from shoparena.runs.layout import RunHandle, register_run_kind

RECORDS_NAME = "records.jsonl"
QUARANTINE_NAME = "quarantine.jsonl"
PROBLEMS_NAME = "problems.json"
VIEWS_DIR = "views"
REPORT_NAME = "report.json"
DIVERSITY_NAME = "diversity.json"
CARD_NAME = "README.md"
WORK_DIR = "work"
CLASSIFIED_NAME = "classified.jsonl"
#: The HF ``DatasetDict`` marker in a saved view folder.
DATASET_DICT_NAME = "dataset_dict.json"

#: What a corpus directory holds at its top (``restart`` clears these and nothing else).
OWN_OUTPUTS = (WORK_DIR, RECORDS_NAME, QUARANTINE_NAME, PROBLEMS_NAME, VIEWS_DIR, REPORT_NAME, CARD_NAME)


@register_run_kind
class CorpusRun(RunHandle):
    """A corpus directory."""

    kinds = ("corpus",)

    @property
    def records_path(self) -> Path:
        return self.path / RECORDS_NAME

    @property
    def quarantine_path(self) -> Path:
        return self.path / QUARANTINE_NAME

    @property
    def problems_path(self) -> Path:
        return self.path / PROBLEMS_NAME

    @property
    def report_path(self) -> Path:
        return self.path / REPORT_NAME

    @property
    def diversity_path(self) -> Path:
        return self.path / DIVERSITY_NAME

    @property
    def card_path(self) -> Path:
        return self.path / CARD_NAME

    @property
    def work_dir(self) -> Path:
        return self.path / WORK_DIR

    @property
    def classified_path(self) -> Path:
        """Pass 1's output (filter, recovery, gates), in ingest order."""
        return self.work_dir / CLASSIFIED_NAME

    @property
    def views_dir(self) -> Path:
        return self.path / VIEWS_DIR

    def view_file(self, view: str, split: str, ext: str) -> Path:
        """One split of one view as ``parquet`` or ``jsonl``."""
        return view_file(self.views_dir, view, split, ext)

    def view_dataset_dir(self, view: str) -> Path:
        """The view saved as an HF ``DatasetDict`` (``datasets.load_from_disk``)."""
        return self.views_dir / view

    def records(self) -> Iterator[tuple[int, CorpusRecord]]:
        """``(line_no, record)`` per line of ``records.jsonl``; a line that is not a record is an error."""
        path = self.need(self.records_path, f"no {RECORDS_NAME}; run `shoparena corpus build` first")
        for line_no, raw in iter_raw_lines(path):
            try:
                yield line_no, CorpusRecord.model_validate_json(raw)
            except ValidationError as exc:
                raise RunFileError(
                    f"{path}:{line_no}: not a CorpusRecord: {validation_detail(exc)}"
                ) from None

    def unrendered_envelopes(self) -> dict[str, int]:
        """Input envelopes of the firehose that no view holds, by reason: the quarantined ones (an envelope
        the parser cannot read as a trajectory at all: ``quarantined: <field>``) and the records without an
        assistant turn (``no_assistant_turn``: nothing to render as chat). Recovery copies are not envelopes
        and are not counted. Missing files count nothing (a corpus written by hand)."""
        counts: dict[str, int] = {}
        if self.quarantine_path.is_file():
            for _, entry in iter_json_lines(self.quarantine_path):
                key = f"quarantined: {entry.get('field') or '(record)'}"
                counts[key] = counts.get(key, 0) + 1
        if self.records_path.is_file():
            for _, record in iter_json_lines(self.records_path):
                if record.get("origin") == "recovered":
                    continue
                if not any(m.get("role") == "assistant" for m in record.get("messages") or []):
                    counts["no_assistant_turn"] = counts.get("no_assistant_turn", 0) + 1
        return counts

    def has_report(self) -> bool:
        return self.report_path.is_file()

    def report(self) -> CorpusReport:
        """``report.json`` (funnel, richness, diversity, render profile) as its record.

        Raises:
            RunFileError: missing, torn, or not a :class:`CorpusReport` (names the field).
        """
        return read_json_record(self.report_path, CorpusReport)

    def render_profile(self, default: str) -> str:
        """The render profile the views were built with (``default`` for a corpus from before it was
        recorded, or without a report)."""
        return self.report().render_profile(default) if self.has_report() else default


def view_file(views_dir: str | Path, view: str, split: str, ext: str) -> Path:
    """``views_dir/<view>-<split>.<ext>``."""
    return Path(views_dir) / f"{view}-{split}.{ext}"


__all__ = [
    "CARD_NAME",
    "DATASET_DICT_NAME",
    "OWN_OUTPUTS",
    "CorpusRun",
    "view_file",
]
