"""``shoparena view``: a local page over run directories (corpus, eval, arena), read through typed records."""

from shoparena.viewer.runs import LoadedRun, ViewerError, ViewerRow, episode_detail, load_runs
from shoparena.viewer.server import ViewerServer, page_html

__all__ = [
    "LoadedRun",
    "ViewerError",
    "ViewerRow",
    "ViewerServer",
    "episode_detail",
    "load_runs",
    "page_html",
]
