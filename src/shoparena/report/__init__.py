"""The pipeline's HTML report: one self-contained file with matplotlib SVG charts (see ``render_report``)."""

from shoparena.report.html import render_report

__all__ = ["render_report"]
