"""The one line-I/O layer: split on newline only, report what is skipped, typed gzip errors, torn tails."""

from __future__ import annotations

import gzip
import hashlib
import json
import logging

import pytest

from shoparena.jsonl import (
    EXIT_UNREADABLE_INPUT,
    JsonlReadError,
    LineWriter,
    iter_jsonl,
    iter_raw_lines,
    read_bytes,
    read_jsonl_dicts,
    repair_torn_tail,
    sha256_file,
    write_jsonl,
)


def test_records_with_unicode_line_separators_survive(tmp_path, caplog):
    records = [{"title": "a\u0085b"}, {"title": "c\u2028d"}, {"n": 3}]
    path = tmp_path / "out.jsonl"
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    path.write_text(body + "[1, 2]\n{torn", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        assert read_jsonl_dicts(path) == records
    assert "out.jsonl:4" in caplog.text and "out.jsonl:5" in caplog.text


def test_missing_file_reads_empty(tmp_path):
    assert read_jsonl_dicts(tmp_path / "absent.jsonl") == []


# --- gzip damage is a typed error naming the file and the line, never a BadGzipFile traceback ---
def _gz_lines(n: int) -> bytes:
    return gzip.compress(b"".join(json.dumps({"i": i, "pad": "x" * 40}).encode() + b"\n" for i in range(n)))


def _damaged(tmp_path, kind: str):
    data = _gz_lines(4000)
    path = tmp_path / f"{kind}.jsonl.gz"
    if kind == "not_gzip":
        path.write_bytes(b'{"i": 0}\n')
    elif kind == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:  # bad CRC: flip a byte of the trailer's CRC32
        bad = bytearray(data)
        bad[-6] ^= 0xFF
        path.write_bytes(bytes(bad))
    return path


@pytest.mark.parametrize(
    ("kind", "words"),
    [("not_gzip", "not a gzip file"), ("truncated", "truncated gzip"), ("bad_crc", "CRC check failed")],
)
def test_gzip_damage_is_a_typed_error_with_file_and_line(tmp_path, kind, words):
    path = _damaged(tmp_path, kind)
    seen = []
    with pytest.raises(JsonlReadError) as info:
        for line_no, _ in iter_raw_lines(path):
            seen.append(line_no)
    err = info.value
    assert err.path == str(path) and words in err.detail
    assert err.line_no == (seen[-1] + 1 if seen else 1)  # the first line that could not be read
    assert str(err).startswith(f"{path}:{err.line_no}: ")
    if kind == "bad_crc":
        assert seen == list(range(1, 4001))  # every line came through; the damage is found at the end
    with pytest.raises(JsonlReadError, match="gzip"):
        read_bytes(path)


def test_gzip_damage_through_a_cli_command_exits_3(tmp_path):
    from typer.testing import CliRunner

    from shoparena.cli.main import app

    for kind in ("not_gzip", "truncated", "bad_crc"):
        path = _damaged(tmp_path, kind)
        res = CliRunner().invoke(app, ["catalog", "validate", str(path)])
        assert res.exit_code == EXIT_UNREADABLE_INPUT == 3, res.output
        assert "Traceback" not in res.output and f"unreadable input: {path}:" in res.output


def test_write_then_read_gzip_and_plain_round_trip(tmp_path):
    records = [{"t": "a\u2028b"}, {"t": "c\u0085"}, [1, 2]]
    for name in ("r.jsonl", "r.jsonl.gz"):
        assert write_jsonl(tmp_path / name, records) == 3
        assert [v for _, v in iter_jsonl(tmp_path / name)] == records


def test_repair_torn_tail_cuts_only_the_partial_line(tmp_path):
    path = tmp_path / "o.jsonl"
    big = json.dumps({"problem_id": "p", "dialogue": "y" * 200_000})  # torn line longer than one scan block
    path.write_text('{"a": 1}\n' + big[:150_000])
    assert repair_torn_tail(path) == 150_000
    assert path.read_text() == '{"a": 1}\n'
    assert repair_torn_tail(path) == 0
    path.write_text('{"torn only')
    assert repair_torn_tail(path) == len('{"torn only') and path.read_bytes() == b""


def test_sha256_file_matches_hashlib(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 3_000_000)
    assert sha256_file(path) == hashlib.sha256(b"x" * 3_000_000).hexdigest()


def test_sha256_file_shares_one_buffer_across_files_of_any_size(tmp_path):
    """One buffer for many files (a fingerprint's walk): each digest covers only the bytes read into it, never
    what a longer file left there, whether the file fits one block, ends on a block or spans several."""
    import random

    rng = random.Random(7)
    for size in (7, 3):
        buffer = bytearray(size)
        for n in [13, 0, 1, 6, 7, 8, 14, 21, 2, 40, 5]:
            data = rng.randbytes(n)
            path = tmp_path / f"f{n}.bin"
            path.write_bytes(data)
            assert sha256_file(path, buffer) == hashlib.sha256(data).hexdigest(), (size, n)
    with pytest.raises(IsADirectoryError):
        sha256_file(tmp_path)
    with pytest.raises(FileNotFoundError):
        sha256_file(tmp_path / "missing")


def test_line_writer_writes_records_and_refuses_a_raw_newline(tmp_path):
    for name in ("w.jsonl", "w.jsonl.gz"):
        path = tmp_path / name
        with LineWriter(path) as out:
            out.write(b'{"a": 1}')
            out.write_json({"t": "x\u2028y"})
            with pytest.raises(ValueError, match=f"{name}: a JSONL record must not contain a raw newline"):
                out.write('{"b":\n2}')
        assert out.count == 2
        assert [v for _, v in iter_jsonl(path)] == [{"a": 1}, {"t": "x\u2028y"}]
    with LineWriter(tmp_path / "w.jsonl", append=True) as out:
        out.write("[3]")
    assert [v for _, v in iter_jsonl(tmp_path / "w.jsonl")][-1] == [3]
    with pytest.raises(ValueError, match="cannot append to a gzip file"):
        LineWriter(tmp_path / "w.jsonl.gz", append=True)


def test_dump_writes_one_line_per_value_whatever_its_strings_hold(tmp_path):
    import orjson

    values = [{"b": "x\ny\r\u2028\x00", "a": [1.5, None]}, "\n", {"z": {"y": 1, "x": 2}}]
    for name in ("d.jsonl", "d.jsonl.gz"):
        path = tmp_path / name
        with LineWriter(path) as out:
            lines = [out.dump(v) for v in values[:2]] + [out.dump(values[2], orjson.OPT_SORT_KEYS)]
        assert out.count == 3
        assert lines[0] == orjson.dumps(values[0]) + b"\n" and lines[2] == b'{"z":{"x":2,"y":1}}\n'
        assert [v for _, v in iter_jsonl(path)] == values
        assert read_bytes(path) == b"".join(lines)


def test_blank_lines_are_only_ascii_white_space(tmp_path):
    # iter_raw_lines skips a line when bytes.strip() would empty it (tested without copying the line).
    from shoparena.jsonl import iter_raw_lines

    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a":1}\r\n \t\x0b\x0c\r\n\n\xc2\xa0\n{"b":2}  \r\n\x00\n')
    assert list(iter_raw_lines(path)) == [(1, b'{"a":1}'), (4, b"\xc2\xa0"), (5, b'{"b":2}  '), (6, b"\x00")]


def test_loads_exact_reads_what_json_loads_reads():
    """Big integers, NaN, lone surrogates, long mantissas, subnormals, bad UTF-8, control characters and
    duplicate keys read (or fail) as ``json.loads`` reads them."""
    import json
    import random

    from shoparena.jsonl import loads_exact

    lines = [
        b'{"id": 123456789012345678901234567890}',
        b"[18446744073709551616, -9223372036854775809, 9223372036854775807]",
        b"[NaN, Infinity, -Infinity]",
        b'"\\ud800 lone"',
        b"0.1000000000000000055511151231257827021181583404541015625",
        b"1e400",
        b"-0",
        b"-0.0",
        b'{"a": 1, "a": 2}',
        b"[" * 300 + b"]" * 300,
        b'{"t": "caf\xc3\xa9 \\u00e9 \\ud83d\\ude00"}',
        b"  [1, 2.5, true, null]  ",
        b"[2.2250738585072011e-308, 1.5e-320, 1e-400, 1" + b"0" * 400 + b"]",
        b'"tab\\there"',
    ]
    rng = random.Random(4)
    for _ in range(500):
        value = {
            "i": rng.randint(-(10**25), 10**25),
            "f": rng.uniform(-1e6, 1e6),
            "e": rng.random() * 10 ** rng.randint(-300, 300),
            "s": "".join(chr(rng.randint(0, 0x2FF)) for _ in range(5)),
        }
        lines.append(json.dumps(value).encode())
    for raw in lines:
        assert json.dumps(loads_exact(raw)) == json.dumps(json.loads(raw)), raw[:80]
    for bad in (b'{"a": }', b"\xff\xfe", b"[1, 2", b'"a\x01b"', b"[1,]", b"'a'", b"01"):
        try:
            json.loads(bad)
        except ValueError as expected:
            with pytest.raises(type(expected)):
                loads_exact(bad)
