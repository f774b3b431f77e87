"""Charts as inline SVG strings, drawn with matplotlib.

Why matplotlib SVG: the report must be one self-contained file that opens offline; inline SVG needs no
JavaScript and no network (Plotly or Vega-Lite would have to embed a multi-megabyte JS bundle), scales on
screen, stays text-searchable, and matplotlib is the plotting library every reader of the paper already has.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence

#: One colour per series, fixed, so base / student / reference look the same in every chart.
PALETTE = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C")


def _figure(width: float = 7.0, height: float = 3.2):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = (
        "shoparena"  # deterministic element ids: the same run renders the same bytes
    )
    plt.rcParams["svg.fonttype"] = "none"  # text stays text (searchable, small)
    fig, ax = plt.subplots(figsize=(width, height))
    ax.spines[["top", "right"]].set_visible(False)
    return fig, ax


def _svg(fig) -> str:
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.tight_layout()
    fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")  # the legend is outside
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg") :]  # drop the XML prolog and doctype: the SVG is inlined in HTML
    return re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.S)  # RDF boilerplate with URLs


def funnel_chart(stages: Sequence[tuple[str, int]]) -> str:
    """Horizontal bars, first stage on top, counts printed at the bar ends."""
    fig, ax = _figure(7.0, 0.45 * len(stages) + 1.0)
    labels = [name for name, _ in stages][::-1]
    counts = [count for _, count in stages][::-1]
    bars = ax.barh(labels, counts, color=PALETTE[0])
    ax.bar_label(bars, labels=[f"{c:,}" for c in counts], padding=3, fontsize=8)
    ax.set_xlabel("trajectories")
    return _svg(fig)


def grouped_bars(
    groups: Sequence[str],
    series: Mapping[str, Sequence[float]],
    *,
    ylabel: str,
    errors: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
    ylim: tuple[float, float] | None = None,
) -> str:
    """Bars per group, one colour per series; ``errors[name] = (lows, highs)`` draws the interval."""
    fig, ax = _figure()
    width = 0.8 / max(1, len(series))
    for i, (name, values) in enumerate(series.items()):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        yerr = None
        if errors and name in errors:
            lows, highs = errors[name]
            yerr = [
                [max(0.0, v - lo) for v, lo in zip(values, lows, strict=True)],
                [max(0.0, hi - v) for v, hi in zip(values, highs, strict=True)],
            ]
        ax.bar(xs, values, width, label=name, color=PALETTE[i % len(PALETTE)], yerr=yerr, capsize=3)
    ax.set_xticks(range(len(groups)), groups, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    if ylim:
        ax.set_ylim(*ylim)
    _legend(ax)
    return _svg(fig)


def _legend(ax) -> None:
    """The legend right of the axes, never over the data."""
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def stacked_bars(groups: Sequence[str], series: Mapping[str, Sequence[float]], *, ylabel: str) -> str:
    fig, ax = _figure()
    bottoms = [0.0] * len(groups)
    for i, (name, values) in enumerate(series.items()):
        ax.bar(groups, values, bottom=bottoms, label=name, color=PALETTE[i % len(PALETTE)])
        bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
    ax.set_ylabel(ylabel)
    ax.tick_params(axis="x", labelrotation=20, labelsize=8)
    _legend(ax)
    return _svg(fig)


def curves(
    series: Mapping[str, Sequence[tuple[float, float, float, float]]], *, xlabel: str, ylabel: str
) -> str:
    """Lines with a shaded interval: each point is ``(x, y, low, high)``."""
    fig, ax = _figure()
    for i, (name, points) in enumerate(series.items()):
        xs = [p[0] for p in points]
        color = PALETTE[i % len(PALETTE)]
        ax.plot(xs, [p[1] for p in points], marker="o", label=name, color=color)
        ax.fill_between(xs, [p[2] for p in points], [p[3] for p in points], alpha=0.2, color=color)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1)
    _legend(ax)
    return _svg(fig)
