"""The one home for line-oriented file I/O: JSONL (optionally gzip), appends, hashing.

Records are split on ``\\n`` only: JSON written with ``ensure_ascii=False`` and upstream catalogs hold raw
U+0085 or U+2028 inside strings, which ``str.splitlines`` treats as line breaks and would silently cut
records. A ``.gz`` suffix means gzip; a gzip file that is not gzip, has a bad CRC or is truncated raises
:class:`JsonlReadError` naming the file and the line reached, never a ``BadGzipFile`` traceback.
"""

from __future__ import annotations

import gc
import gzip
import hashlib
import json
import logging
import os
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic_core import from_json

log = logging.getLogger(__name__)

#: Exit code of CLI commands when an input file cannot be read at the byte level (corrupt gzip, I/O error).
EXIT_UNREADABLE_INPUT = 3

# What the gzip module raises on a damaged stream: not gzip, bad CRC / length, truncated, bad deflate data.
_GZIP_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error)


class JsonlReadError(ValueError):
    """A file could not be read at the byte level; names the file and the (1-based) line reached."""

    def __init__(self, path: str | Path, detail: str, *, line_no: int | None = None) -> None:
        self.path = str(path)
        self.detail = detail
        self.line_no = line_no
        where = f"{self.path}:{line_no}" if line_no is not None else self.path
        super().__init__(f"{where}: {detail}")


def _gzip_detail(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return "truncated gzip file (the compressed stream ends early)"
    if isinstance(exc, gzip.BadGzipFile):
        text = str(exc)
        if text.startswith("Not a gzipped file"):
            return "not a gzip file (bad magic number) although the name ends in .gz"
        return f"corrupt gzip file ({text})"  # CRC check failed / incorrect length
    return f"corrupt gzip data ({exc})"


class _OwningGzipWriter(gzip.GzipFile):
    """A gzip writer with a fixed header (mtime 0, no name) that closes the file it opened."""

    def __init__(self, path: Path, mode: str) -> None:
        self._raw = open(path, mode)  # noqa: SIM115 - closed in close()
        super().__init__(filename="", mode=mode, fileobj=self._raw, compresslevel=3, mtime=0)

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw.close()


#: The buffers of :func:`iter_raw_lines`' and :class:`LineWriter`'s plain files: records of tens of kilobytes
#: (a corpus record, a view row) each cost a read or a write call with the default 8 KiB buffer.
READ_BUFFER = WRITE_BUFFER = 1 << 20


def temp_sibling(path: str | Path) -> Path:
    """A temporary name beside ``path`` (same folder, so the rename is atomic; the suffix kept, so a ``.gz``
    temporary file is compressed too): ``.NAME.<pid>.tmp<suffix>``."""
    path = Path(path)
    return path.with_name(f".{path.name}.{os.getpid()}.tmp{path.suffix}")


def open_binary(path: str | Path, mode: str = "rb", buffering: int = -1) -> IO[bytes]:
    """Open a file for binary reading or writing; ``.gz`` is gzip (written reproducibly: mtime 0, no name).
    ``buffering``: the plain file's buffer size (``open``'s; -1: the default)."""
    path = Path(path)
    if path.suffix == ".gz":
        if "w" in mode or "a" in mode:
            return _OwningGzipWriter(path, mode.replace("b", "") + "b")
        return gzip.open(path, mode)
    return open(path, mode, buffering=buffering)


def read_bytes(path: str | Path) -> bytes:
    """The whole (decompressed) content of a file.

    Raises:
        JsonlReadError: a damaged gzip file (names the file; line unknown for a whole-file read).
    """
    try:
        with open_binary(path) as fh:
            return fh.read()
    except _GZIP_ERRORS as exc:
        raise JsonlReadError(path, _gzip_detail(exc)) from None


def iter_raw_lines(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_no, bytes)`` for non-blank lines, split on ``b"\\n"`` only (1-based numbering).

    A trailing ``\\r`` is removed. Streams: the whole file is never held in memory.

    Raises:
        JsonlReadError: a damaged gzip file, naming the line at which reading failed; or a UTF-16/32 file
            (its lines cannot be split on ``\\n`` bytes), instead of one "invalid JSON" per line.
    """
    line_no = 0
    try:
        # A large buffer: a line of tens of kB cost several read calls with the default 8 KiB one.
        with open_binary(path, buffering=READ_BUFFER) as fh:
            head = fh.peek(4)[:4]
            if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in head:
                raise JsonlReadError(
                    path, "UTF-16/32 text; JSONL files must be UTF-8 (convert with iconv)", line_no=1
                )
            for line_no, raw in enumerate(fh, start=1):
                # Blank: only ASCII white space (``bytes.strip``'s), without copying the line to say so.
                if not raw.isspace():
                    yield line_no, raw.rstrip(b"\r\n")
    except _GZIP_ERRORS as exc:
        raise JsonlReadError(path, _gzip_detail(exc), line_no=line_no + 1) from None


def loads_exact(raw: bytes) -> Any:
    """The value ``json.loads(raw)`` reads, through pydantic-core's parser (as fast as orjson, and unlike it
    exact for integers beyond 64 bits; ``NaN`` and ``Infinity`` allowed, as the stdlib does); what it
    refuses (lone surrogates, bad UTF-8, what is not JSON) goes to ``json.loads``, which reads it or raises
    its own ``ValueError``."""
    try:
        return from_json(raw, allow_inf_nan=True)
    except ValueError:
        return json.loads(raw)


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any | ValueError]]:
    """Yield ``(line_no, value)`` per non-blank line; ``(line_no, ValueError)`` for a line that is not JSON.

    The caller decides whether a bad line is quarantined, skipped or fatal; byte-level damage raises
    :class:`JsonlReadError`.
    """
    for line_no, raw in iter_raw_lines(path):
        try:
            yield line_no, loads_exact(raw)
        except ValueError as exc:
            yield line_no, ValueError(f"invalid JSON: {exc}")


def read_jsonl_dicts(path: str | Path) -> list[dict[str, Any]]:
    """Every JSON-object line of ``path`` (missing file → []); other lines are skipped with a warning.

    For side files we write ourselves (envelopes, proxy logs, verdicts): a skipped line is only ever a torn
    final write or foreign content, so it is reported (file and line number) rather than raised.
    """
    path = Path(path)
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    for line_no, record in iter_jsonl(path):
        if isinstance(record, ValueError):
            log.warning("%s:%d: skipped a line that is not JSON (%s)", path, line_no, record)
        elif isinstance(record, dict):
            out.append(record)
        else:
            log.warning("%s:%d: skipped a %s line (expected an object)", path, line_no, type(record).__name__)
    return out


class LineWriter:
    """Write a JSONL file one record at a time (``.gz``: gzip, reproducible); a context manager.

    ``write`` takes one serialised record (``str`` or ``bytes``, without its ``\\n``) and refuses one that
    holds a raw newline, which readers would split into two records; ``write_json`` serialises a value with
    ``json.dumps``. ``count`` is the number of lines written.

    A new file is written under a temporary name beside ``path`` (:func:`temp_sibling`) and renamed over it
    by ``close`` (or a ``with`` block that ends without an exception; one that raises removes the temporary
    file): a failed or killed writer never leaves ``path`` truncated or torn, and never truncates a file
    it has not finished replacing.

    Args:
        path: The file; ``.gz`` means gzip.
        append: Append to the file instead of replacing it (plain files only; written in place).
    """

    def __init__(self, path: str | Path, *, append: bool = False) -> None:
        self.path = Path(path)
        if append and self.path.suffix == ".gz":
            raise ValueError(f"{self.path}: cannot append to a gzip file")
        self.count = 0
        self._tmp = None if append else temp_sibling(self.path)
        target = self.path if self._tmp is None else self._tmp
        self._fh = open_binary(target, "ab" if append else "wb", buffering=WRITE_BUFFER)

    def write(self, line: str | bytes) -> None:
        data = line.encode("utf-8") if isinstance(line, str) else line
        if b"\n" in data:
            raise ValueError(f"{self.path}: a JSONL record must not contain a raw newline")
        self._fh.write(data + b"\n")
        self.count += 1

    def write_json(self, value: Any, *, ensure_ascii: bool = False, default: Any = None) -> None:
        self.write(json.dumps(value, ensure_ascii=ensure_ascii, default=default))

    def dump(self, value: Any, option: int = 0) -> bytes:
        """Write ``value`` as orjson serialises it (``option``: orjson's flags) and return the line, its
        ``\n`` included. orjson escapes every control character in a string, so no check for a raw newline
        and no copy to append one (orjson writes it): the large lines of a corpus build pass once."""
        data = orjson.dumps(value, option=option | orjson.OPT_APPEND_NEWLINE)
        self._fh.write(data)
        self.count += 1
        return data

    def close(self) -> None:
        """Finish the file (a new one is renamed over ``path`` now)."""
        self._fh.close()
        if self._tmp is not None:
            os.replace(self._tmp, self.path)
            self._tmp = None

    def discard(self) -> None:
        """Stop without replacing ``path`` (the temporary file is removed)."""
        self._fh.close()
        if self._tmp is not None:
            self._tmp.unlink(missing_ok=True)
            self._tmp = None

    def __enter__(self) -> LineWriter:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.discard()


def write_jsonl(path: str | Path, records: Iterable[Any], *, ensure_ascii: bool = False) -> int:
    """Write ``records`` one JSON value per line (``.gz``: gzip); returns the number of lines."""
    with LineWriter(path) as out:
        for record in records:
            out.write_json(record, ensure_ascii=ensure_ascii)
    return out.count


def repair_torn_tail(path: str | Path) -> int:
    """Cut a torn last line (no final ``\\n``: a writer killed mid-line) off a plain file; bytes removed."""
    path = Path(path)
    if not path.exists():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    with open(path, "r+b") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        # Scan back in blocks for the last newline; a torn line can be large (whole dialogues).
        pos, cut = size, 0
        while pos > 0:
            start = max(0, pos - 65536)
            fh.seek(start)
            block = fh.read(pos - start)
            nl = block.rfind(b"\n")
            if nl >= 0:
                cut = start + nl + 1
                break
            pos = start
        fh.truncate(cut)
    log.warning("%s: cut a torn last line (%d bytes) left by an interrupted write", path, size - cut)
    return size - cut


def append_line(path: str | Path, line: str, *, fsync: bool = True) -> None:
    """Append one line (``\\n`` added) and, by default, flush it to disk before returning."""
    if "\n" in line:
        raise ValueError("append_line: a JSONL record must not contain a raw newline")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")
        fh.flush()
        if fsync:
            os.fsync(fh.fileno())


#: Bytes read into one buffer at a time by :func:`sha256_file`.
HASH_BLOCK = 1 << 20


def update_from_file(digest: Any, path: str | Path, buffer: bytearray | None = None) -> None:
    """Feed a file's bytes to ``digest`` (a ``hashlib`` object), streamed through ``buffer`` (default: a new
    one of :data:`HASH_BLOCK` bytes). A caller hashing many files passes one buffer for all of them: a fresh
    block per read costs an allocation and its page faults, more than hashing a small file (a firehose holds
    tens of thousands)."""
    block = memoryview(buffer if buffer is not None else bytearray(HASH_BLOCK))
    with open(path, "rb", buffering=0) as fh:
        while n := fh.readinto(block):
            digest.update(block[:n])


def sha256_file(path: str | Path, buffer: bytearray | None = None) -> str:
    """Hex sha256 of a file's bytes (``buffer``: see :func:`update_from_file`)."""
    digest = hashlib.sha256()
    update_from_file(digest, path, buffer)
    return digest.hexdigest()


@contextmanager
def fewer_gc_passes() -> Iterator[None]:
    """For a pass that allocates millions of short-lived, acyclic containers (parsed JSON lines, models,
    rows, token lists) that reference counting frees: the cyclic collector's passes over every live object
    (imported modules included) are wasted work (a quarter of a corpus build, docs/benchmarks.md). Freeze
    what exists and collect less often; both are undone afterwards."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


__all__ = [
    "EXIT_UNREADABLE_INPUT",
    "HASH_BLOCK",
    "JsonlReadError",
    "LineWriter",
    "append_line",
    "fewer_gc_passes",
    "iter_jsonl",
    "iter_raw_lines",
    "loads_exact",
    "open_binary",
    "read_bytes",
    "read_jsonl_dicts",
    "repair_torn_tail",
    "sha256_file",
    "temp_sibling",
    "update_from_file",
    "write_jsonl",
]
