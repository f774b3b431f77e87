"""Defaults of the HTTP environment server (light: the CLI reads them without importing the server)."""

from __future__ import annotations

DEFAULT_PORT = 5640
#: Open sessions at most; a reset beyond gets 503.
DEFAULT_MAX_SESSIONS = 256
#: A session unused for this long is closed (reaped on the next request).
DEFAULT_IDLE_TIMEOUT_S = 600.0
#: A step running longer gets 504 and its session is closed.
DEFAULT_STEP_TIMEOUT_S = 60.0
#: Largest request body; 413 above.
DEFAULT_MAX_BODY_BYTES = 1024 * 1024

__all__ = [
    "DEFAULT_IDLE_TIMEOUT_S",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_PORT",
    "DEFAULT_STEP_TIMEOUT_S",
]
