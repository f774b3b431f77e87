"""Defaults of the HTTP environment server (light: the CLI reads them without importing the server)."""

from __future__ import annotations

from shoparena.formats.scan import MAX_CALLS_PER_STEP

DEFAULT_PORT = 5640
#: Open sessions at most; a reset beyond gets 503.
DEFAULT_MAX_SESSIONS = 256
#: A session unused for this long is closed (reaped on the next request).
DEFAULT_IDLE_TIMEOUT_S = 600.0
#: An ended episode's session (its verdict and trajectory still readable) is closed this long after its last
#: use: a finished episode's history is released in seconds, not at the idle expiry (issue 52).
DEFAULT_ENDED_TIMEOUT_S = 60.0
#: A step running longer gets 504 and its session is closed.
DEFAULT_STEP_TIMEOUT_S = 60.0
#: Largest request body; 413 above.
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
#: Tool calls run per step; calls past it are dropped (noted on the step), so one action is bounded. The
#: same cap as ``eval run``'s (:data:`shoparena.formats.scan.MAX_CALLS_PER_STEP`).
DEFAULT_MAX_CALLS_PER_STEP = MAX_CALLS_PER_STEP
#: Episodes started per problem; 0: no limit (a trainer plays many rollouts of one problem).
DEFAULT_MAX_EPISODES_PER_PROBLEM = 0

#: Host names a local server answers to (a request naming another host is a DNS-rebinding page's).
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def host_allowed(header: str | None, extra: frozenset[str] | set[str] = frozenset()) -> bool:
    """Whether a request's ``Host`` header names this machine (a local name, or one of ``extra``).

    The port is ignored; a missing header (HTTP/1.0) is refused, like any name not listed: a page on
    another site that rebinds its own name to 127.0.0.1 sends that name, never ``localhost``.
    """
    if not header:
        return False
    host = header.strip().lower()
    if host.startswith("["):  # [::1]:port, and nothing else after the bracket ([::1]evil is refused)
        close = host.find("]")
        rest = host[close + 1 :] if close > 0 else "x"
        if rest and not (rest.startswith(":") and rest[1:].isdigit()):
            return False
        host = host[1:close]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host in LOCAL_HOSTS or host in {h.lower() for h in extra}

__all__ = [
    "DEFAULT_ENDED_TIMEOUT_S",
    "DEFAULT_IDLE_TIMEOUT_S",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_CALLS_PER_STEP",
    "DEFAULT_MAX_EPISODES_PER_PROBLEM",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_PORT",
    "DEFAULT_STEP_TIMEOUT_S",
    "LOCAL_HOSTS",
    "host_allowed",
]
