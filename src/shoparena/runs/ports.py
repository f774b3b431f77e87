"""A port a server is asked to listen on, checked before it starts (one line, exit 2 at the CLI).

uvicorn reports a port in use as a logged error and exits 3 (its "startup failure", which this toolkit's
exit codes reserve for an unreadable input file), and the viewer's ``http.server`` raises ``OSError``.
Every serving command (``env serve``, ``eval serve``, ``search serve``, ``view``) calls
:func:`check_port_free` first, so a port held by another process, or an address this machine does not
have, is a usage error naming the address. (Another process can still take the port between the check
and the bind; the server's own report then stands.)
"""

from __future__ import annotations

import socket


class PortInUseError(ValueError):
    """The address a server was asked to listen on cannot be bound (in use, or not this machine's)."""


def check_port_free(host: str, port: int) -> None:
    """Raise :class:`PortInUseError` when ``host:port`` cannot be bound now (port 0: any free port).

    The check binds as the servers do (``SO_REUSEADDR``: a port in ``TIME_WAIT`` is free) and closes at
    once.
    """
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as exc:
        raise PortInUseError(f"--host {host!r}: not an address this machine can listen on ({exc})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            reason = "already in use" if "in use" in str(exc).lower() else exc.strerror or str(exc)
            raise PortInUseError(
                f"--port {port} on {host or '*'}: {reason}; stop the other server or choose another --port"
            ) from None


__all__ = ["PortInUseError", "check_port_free"]
