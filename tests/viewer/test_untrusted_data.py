"""No string in a run can change the viewer's page; a changed suite is named; errors are JSON lines; only
local Host names are served (issue 31, findings 5 and 8)."""

from __future__ import annotations

import json
import re
import shutil
import urllib.request

import pytest

from shoparena.records.corpus import CorpusLabels, CorpusMessage, CorpusRecord, StructuralEvidence
from shoparena.runs.manifest import RunManifest, write_manifest
from shoparena.viewer import ViewerServer, episode_detail, load_runs
from shoparena.viewer.server import inline_json

HOSTILE = [
    "<!--<script>",
    "</script><script>alert(1)</script>",
    "<!-- -->",
    "<script>",
    "]]></x>",
    "\u2028\u2029",
    "&lt;&amp;",
    "<img src=x onerror=alert(1)>",
]


def _hostile_corpus(root, text: str):
    out = root / "corpus"
    out.mkdir(parents=True)
    record = CorpusRecord(
        record_id="r:p:0",
        run_id="r",
        problem_id=text,
        query=text,
        category=text,
        messages=[CorpusMessage(role="user", content=text)],
        evidence=StructuralEvidence(envelope_status="SUCCESS", log_source="trusted_proxy"),
        labels=CorpusLabels(success=False),
        structural_label="agentic",
        outcome="kept",
        miner_kind=text,
    )
    (out / "records.jsonl").write_text(record.model_dump_json() + "\n")
    write_manifest(RunManifest(kind="corpus"), out)  # the viewer opens a run by its manifest's kind
    return out


@pytest.mark.parametrize("text", HOSTILE)
def test_inline_json_has_no_angle_bracket_and_parses_back(text) -> None:
    data = {"rows": [{"query": text, text: [text]}]}
    inlined = inline_json(data)
    assert "<" not in inlined and ">" not in inlined and "\u2028" not in inlined
    assert json.loads(inlined) == data


def test_the_page_script_stays_one_element_whatever_the_rows_hold(tmp_path) -> None:
    runs = [_hostile_corpus(tmp_path / str(i), text) for i, text in enumerate(HOSTILE)]
    with ViewerServer(runs) as server:
        page = urllib.request.urlopen(server.url, timeout=10).read().decode()
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", page, flags=re.S)
    assert len(scripts) == 1 and "<!--" not in scripts[0]
    data = json.loads(re.search(r"const DATA = (.*?);\n", scripts[0]).group(1))
    assert sorted(r["query"] for r in data["rows"]) == sorted(HOSTILE)


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed")
def test_a_comment_opening_string_does_not_blank_the_page_in_a_browser(tmp_path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    runs = [_hostile_corpus(tmp_path / str(i), text) for i, text in enumerate(HOSTILE[:2])]
    errors: list[str] = []
    with ViewerServer(runs) as server, playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: errors.append(f"dialog {d.message}"))
        page.goto(server.url)
        page.wait_for_load_state("load")
        assert page.locator("tr.row").count() == 2
        assert "<!--<script>" in page.inner_text("body")
        browser.close()
    assert errors == []


def test_a_changed_suite_is_named_and_an_unreadable_one_is_a_json_line(
    eval_runs, tmp_path, capfd, monkeypatch
) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(eval_runs[0], run_dir)
    config = (run_dir / "config.yaml").read_text()
    suite = tmp_path / "suite.json"
    original = re.search(r"^suite: (.*)$", config, flags=re.M).group(1).strip("'\"")
    shutil.copyfile(original, suite)
    problems = json.loads(suite.read_text())
    (run_dir / "config.yaml").write_text(config.replace(original, str(suite)))
    (run,) = load_runs([run_dir])
    assert "suite_changed" not in episode_detail(run.items[0])["checks"]  # same content, other path
    suite.write_text(json.dumps(problems, indent=1))  # the same problems, other bytes: a changed suite
    (run,) = load_runs([run_dir])
    assert "changed since the run" in episode_detail(run.items[0])["checks"]["suite_changed"]
    import shoparena.suites.loaders as loaders

    def unreadable(path, *args, **kwargs):  # chmod 0 does not stop root: the error it would give
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(loaders, "load_suite", unreadable)
    with ViewerServer([run_dir]) as server:  # the request is answered (it used to hang), in JSON
        try:
            response = urllib.request.urlopen(server.url + "api/episode/0-0", timeout=10)
            status, body = response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            status, body = exc.code, json.loads(exc.read())
    if status == 500:  # the detail could not be built: one line naming the row
        assert body["status"] == 500 and "row 0-0" in body["error"]
        assert len([line for line in capfd.readouterr().err.splitlines() if "shoparena view" in line]) == 1
    else:  # the unreadable suite reads as "no verdict" for the pane
        assert status == 200 and body["checks"] is None
    assert "Traceback" not in capfd.readouterr().err


def test_only_local_host_names_are_served(corpus_run) -> None:
    with ViewerServer([corpus_run]) as server:
        for host, status in [("evil.example", 403), ("localhost:1", 200), ("127.0.0.1", 200)]:
            request = urllib.request.Request(server.url, headers={"host": host})
            try:
                code = urllib.request.urlopen(request, timeout=10).status
            except urllib.error.HTTPError as exc:
                code = exc.code
            assert code == status, host


def test_a_detail_that_cannot_be_built_is_a_json_500_and_one_stderr_line(
    corpus_run, monkeypatch, capfd
) -> None:
    import shoparena.viewer.server as viewer_server

    def broken(item):
        raise PermissionError(13, "Permission denied", "suite.json")

    monkeypatch.setattr(viewer_server, "episode_detail", broken)
    with ViewerServer([corpus_run]) as server:
        with pytest.raises(urllib.error.HTTPError) as failed:
            urllib.request.urlopen(server.url + "api/episode/0-0", timeout=10)
        body = json.loads(failed.value.read())
    assert failed.value.code == 500 and body["status"] == 500 and "row 0-0: PermissionError" in body["error"]
    err = capfd.readouterr().err
    assert "Traceback" not in err and len([x for x in err.splitlines() if "shoparena view" in x]) == 1
