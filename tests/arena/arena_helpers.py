"""Helpers for the arena tests: a fake search engine, proxy and sandbox factories, an agent runner."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from miner_helpers import read_jsonl

from sandbox_marks import needs_bwrap  # noqa: F401 - arena tests import the mark from here
from shoparena.arena.agent_runner import AgentRunner, ArenaProblem
from shoparena.arena.proxy import ProxyConfig, ProxyServer, ProxyState, create_proxy_app
from shoparena.arena.sandbox import Sandbox, SandboxConfig, peer_gid_for
from shoparena.records.catalog import ProductHit, ProductView

AGENTS = Path(__file__).parent / "agents"


class FakeSearch:
    """Deterministic stand-in for SearchIndex: ``n_hits`` hits per query, ids derived from the page."""

    def __init__(self, n_hits: int = 3) -> None:
        self.n_hits = n_hits
        self.calls: list[tuple[str, Any]] = []

    def find_product(self, q, page=1, shop_id=None, price=None, sort=None, service=None) -> list[ProductHit]:
        self.calls.append(("find_product", (q, page, shop_id, price, sort, service)))
        return [
            ProductHit(
                product_id=f"{int(page) * 100 + i}",
                shop_id="7",
                title=f"{q} item {i} " + "x" * 40,
                price=10.0 + i,
                service=["COD"],
                sold_count=i,
            )
            for i in range(self.n_hits)
        ]

    def view_product_information(self, product_ids: str) -> list[ProductView]:
        self.calls.append(("view_product_information", product_ids))
        return [
            ProductView(product_id=pid, short_description="", description="d", sku_options={}, attributes={})
            for pid in product_ids.split(",")
        ]


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    box = Sandbox(
        SandboxConfig(
            timeout_s=5,
            grace_s=1,
            memory_bytes=768 * 1024**2,
            nproc=48,
            output_cap_bytes=64 * 1024,
            tmp_bytes=16 * 1024**2,
        )
    )
    yield box
    box.close()


class ProxyHarness:
    def __init__(self, state: ProxyState, server: ProxyServer, search: FakeSearch) -> None:
        self.state, self.server, self.search = state, server, search


@pytest.fixture
def make_proxy(tmp_path: Path) -> Iterator[Any]:
    servers: list[ProxyServer] = []

    def make(backend: Any = None, config: ProxyConfig | None = None, search: FakeSearch | None = None):
        search = search or FakeSearch()
        state = ProxyState(config or ProxyConfig(), unattributed_log=tmp_path / "unattributed.jsonl")
        peer_gid = peer_gid_for(SandboxConfig())
        server = ProxyServer(create_proxy_app(search, backend, state), peer_gid=peer_gid).start()
        servers.append(server)
        return ProxyHarness(state, server, search)

    yield make
    for server in servers:
        server.stop()


def run_agent(
    agent: str,
    problems: list[dict[str, Any]],
    out: Path,
    sandbox: Sandbox,
    proxy: Any = None,
    workers: int = 2,
    timeout_s: float = 5.0,
) -> dict[str, dict[str, Any]]:
    """Run a miner file from tests/arena/agents on problems; envelopes keyed by problem id."""
    runner = AgentRunner(
        Path(agent).stem,
        AGENTS / agent,
        out / "agents" / Path(agent).stem,
        sandbox,
        proxy_state=proxy.state if proxy else None,
        proxy_socket=proxy.server.socket_path if proxy else None,
        proxy_log_dir=out / "proxy",
        workers=workers,
        timeout_s=timeout_s,
    )
    arena_problems = [ArenaProblem(p["problem_id"], p) for p in problems]
    return {e["problem_id"]: e for e in runner.run(arena_problems)}


class ScoringSearch(FakeSearch):
    """FakeSearch that also resolves ids to full products (a ProductLookup) titled by ``titles``."""

    def __init__(self, titles: dict[str, str]) -> None:
        super().__init__(n_hits=1)
        self.titles = titles

    def get_product(self, product_id: str):
        from shoparena.records.catalog import Product

        title = self.titles.get(product_id)
        if title is None:
            return None
        return Product(
            product_id=product_id, shop_id="7", category="A > B", title=title, price=10.0, sold_count=1
        )


def race_outcomes(out: Path) -> dict[tuple[str, str, str], tuple]:
    """Per race, agent and problem: status, error type, every step's calls and text (no ids or timings)."""
    result = {}
    for path in sorted(out.glob("race-*/agents/*/output.jsonl")):
        race, agent = path.parts[-4], path.parts[-2]
        for env in read_jsonl(path):
            steps = []
            for step in env.get("dialogue") or []:
                message = step.get("completion", {}).get("message", {})
                calls = tuple(
                    (c["name"], json.dumps(c.get("parameters"), sort_keys=True))
                    for c in message.get("tool_call") or []
                )
                steps.append((calls, step.get("completion", {}).get("content")))
            error = (env.get("error") or {}).get("type")
            result[(race, agent, env["problem_id"])] = (env["status"], error, tuple(steps))
    return result


#: Every outcome kind: judged agentic runs, a wrong-pick teacher, sub-task, forged, crash.
FIREHOSE_POPULATION = [
    ("agentic-careful", "agentic", "careful"),
    ("agentic-sloppy", "agentic", "sloppy"),
    ("subtask-careful", "subtask", "careful"),
    ("forger", "forger", "careful"),
    ("crash", "faulty", ""),
]


def compared_firehose(shop_world: Any, out: Path, **settings: Any) -> Any:
    """A small firehose over the shared world, for races compared outcome by outcome with another run's."""
    from shoparena.arena.firehose import FirehoseConfig

    settings.setdefault("workers", 1)
    return FirehoseConfig(
        suites=[shop_world.product_only, shop_world.mixed],
        index=shop_world.index,
        out=out,
        problems_per_race=2,
        # Generous: a sandbox limit hit only because a loaded 2-core host was slow (CI beside a training run)
        # would differ between the two runs compared.
        timeout_s=120,
        population=FIREHOSE_POPULATION,
        **settings,
    )
