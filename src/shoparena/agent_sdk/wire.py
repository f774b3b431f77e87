"""The SDK's HTTP transport: one HTTP/1.1 request per connection over a plain ``socket`` (stdlib only).

Why not ``urllib.request``: it imports ``http.client``, ``email``, ``ssl``, ``tempfile`` and ``shutil``,
about 50 ms of CPU in every sandbox process that imports the SDK; a firehose starts one such process per
episode, so that import was a fifth of an episode's CPU (docs/benchmarks.md, "Issue 35: no flags").
Inside the sandbox the only peer is the proxy on ``http://127.0.0.1``, so plain ``http://`` is all the hot
path needs; any other URL (``https://``) goes through ``urllib.request``, imported only then.

Semantics follow urllib's as the SDK used them: ``Connection: close`` on every request, a status code
for every answer (4xx/5xx are answers, not exceptions), and ``OSError`` for everything else: a refused or
reset connection, a timeout (``TimeoutError``), an answer that is not HTTP (:class:`WireError`).
"""

from __future__ import annotations

import socket

_CHUNK = 65536
_MAX_HEAD = 65536


class WireError(OSError):
    """The peer's answer was not a well-formed HTTP/1.x response."""


def _split_url(url: str) -> tuple[str, int, str, str]:
    """(host, port, Host header, request target) of an ``http://`` URL."""
    rest = url[len("http://") :]
    authority, slash, target = rest.partition("/")
    target = slash + target if slash else "/"
    if "?" in authority:  # "http://host?x=1"
        authority, _, query = authority.partition("?")
        target = "/?" + query
    host, port = authority, 80
    if authority.startswith("["):  # [::1]:8080
        end = authority.find("]")
        host, tail = authority[1:end], authority[end + 1 :]
        port = int(tail[1:]) if tail.startswith(":") else 80
    elif ":" in authority:
        host, _, number = authority.rpartition(":")
        port = int(number)
    if not host:
        raise WireError(f"no host in {url!r}")
    return host, port, authority, target


def _read_head(sock: socket.socket) -> tuple[bytes, bytes]:
    """The status line and headers (without the blank line) and whatever body bytes came with them."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = sock.recv(_CHUNK)
        if not piece:
            raise WireError("connection closed before the response headers ended")
        data += piece
        if len(data) > _MAX_HEAD and b"\r\n\r\n" not in data[: _MAX_HEAD + 4]:
            raise WireError("response headers too long")
    head, _, body = data.partition(b"\r\n\r\n")
    return head, body


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise WireError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise WireError(f"malformed header line: {line[:80]!r}")
        headers[name.strip()] = value.strip()
    return int(parts[1]), headers


def _read_rest(sock: socket.socket, body: bytes, length: int | None) -> bytes:
    """The body: ``length`` bytes when the peer said how many, else everything until it closes."""
    chunks = [body]
    received = len(body)
    while length is None or received < length:
        piece = sock.recv(_CHUNK)
        if not piece:
            if length is not None:
                raise WireError(f"connection closed after {received} of {length} body bytes")
            break
        chunks.append(piece)
        received += len(piece)
    data = b"".join(chunks)
    return data if length is None else data[:length]


def _dechunk(data: bytes) -> bytes:
    """A ``Transfer-Encoding: chunked`` body decoded (trailers ignored)."""
    out = []
    pos = 0
    while True:
        end = data.find(b"\r\n", pos)
        if end < 0:
            raise WireError("chunked body ended inside a chunk size line")
        try:
            size = int(data[pos:end].split(b";", 1)[0].strip() or b"x", 16)
        except ValueError:
            raise WireError(f"bad chunk size {data[pos:end][:20]!r}") from None
        if size == 0:
            return b"".join(out)
        start = end + 2
        if len(data) < start + size:
            raise WireError("chunked body shorter than its chunk sizes")
        out.append(data[start : start + size])
        pos = start + size + 2


def _header(headers: dict[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def request(
    method: str, url: str, *, body: bytes | None = None, headers: dict[str, str] | None = None, timeout: float
) -> tuple[int, dict[str, str], bytes]:
    """Send one request; return (status, response headers, body). Raises ``OSError`` when no HTTP answer
    came (refused, reset, timed out, not HTTP)."""
    if not url.startswith("http://"):
        return _urllib_request(method, url, body=body, headers=headers, timeout=timeout)
    host, port, authority, target = _split_url(url)
    lines = [f"{method} {target} HTTP/1.1", f"Host: {authority}", "Connection: close"]
    given = {k.lower() for k in headers or {}}
    if body is not None or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(body or b'')}")
    if "user-agent" not in given:
        lines.append("User-Agent: shoparena-agent-sdk")
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    payload = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(payload)
        head, rest = _read_head(sock)
        status, response_headers = _parse_head(head)
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            return status, response_headers, b""
        chunked = "chunked" in (_header(response_headers, "transfer-encoding") or "").lower()
        length = _header(response_headers, "content-length")
        if chunked:
            return status, response_headers, _dechunk(_read_rest(sock, rest, None))
        if length is not None and length.strip().isdigit():
            return status, response_headers, _read_rest(sock, rest, int(length))
        return status, response_headers, _read_rest(sock, rest, None)


def _urllib_request(
    method: str, url: str, *, body: bytes | None, headers: dict[str, str] | None, timeout: float
) -> tuple[int, dict[str, str], bytes]:
    """Any URL but plain ``http://``, through urllib (no proxy handler: ``*_proxy`` variables never
    reroute agent traffic)."""
    import urllib.error
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with opener.open(req, timeout=timeout) as response:
            return response.status, dict(response.headers.items()), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers.items()) if err.headers else {}, err.read() or b""
