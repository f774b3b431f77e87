"""The trusted arena proxy: the sandbox's only peer (arena spec §4, §5.3).

Routes:
- ``/search/find_product``, ``/search/view_product_information`` → the search engine, in process;
- ``/search/web_search`` → the offline knowledge pages (web problems; not a catalogue dispatch);
- ``/search/get_product_raw`` → 403 (scoring only);
- ``POST /inference/chat/completions`` → the configured :class:`~shoparena.llm.types.ChatBackend`, after
  ORO's checks (400 empty/non-JSON body, missing ``model``, ``stream: true``; 403 not allowlisted);
- anything else → 403 JSON.

Every request is attributed to one problem through the per-problem token the runner minted (sent as
``Authorization: Bearer`` or ``X-Arena-Token``) and written by the **proxy** to that problem's trusted log
(one §5.3 ``summary`` entry per call, a :class:`~shoparena.records.proxy_log.ProxyLogEntry`), a file outside
every sandbox. Inference responses get HMAC tool-call
nonces (:mod:`shoparena.arena.nonce`); catalogue dispatches carrying ``X-Tool-Nonce`` are verified and the
status logged (strict mode answers 403 to anything but ``valid``). Every catalogue dispatch also gets a
``proof`` (:class:`~shoparena.records.proxy_log.ProofKind`): ``nonce_valid``, else ``matched_emitted`` when it
equals (tool + normalised arguments) a call the model emitted earlier in the same problem and no dispatch has
claimed yet, else ``unmatched``; so agents that send no nonces are still credited for what the model asked.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, unquote_plus

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from shoparena.arena.config import ProxyConfig
from shoparena.arena.inference import CallAbandoned, complete_with_limits
from shoparena.arena.nonce import NonceStatus
from shoparena.arena.proxy_log import parse_response_tool_calls
from shoparena.arena.proxy_state import ClientIdentity, EmittedCall, ProxyState, TokenBucket
from shoparena.records.proxy_log import ParsedCall, ProofKind, ProxyLogEntry
from shoparena.records.tools import CATALOGUE_TOOLS, SEARCH_TOOLS, WEB_SEARCH
from shoparena.records.unicode import json_bytes
from shoparena.runs.stale import private_tempdir

logger = logging.getLogger(__name__)

#: Serialised responses longer than this are summarised instead of stored (§5.3).
RESPONSE_LOG_LIMIT = 2000
#: web_search is served from the offline knowledge pages (shoparena.env.knowledge), so web problems run.
WEB_MAX_RESULTS = 20
_CHAT_FIELDS = ("model", "messages", "tools", "temperature", "max_tokens", "stop")


async def read_capped_body(request: Request, limit: int) -> bytes | None:
    """The request body, or None as soon as it is known to be over ``limit`` bytes: a declared
    ``Content-Length`` over it is refused before reading, a chunked upload while it streams (the whole body
    was buffered first, so a 1.5 GiB upload took the runner to 1.5 GiB before the 413)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def _raw_params(query_string: bytes) -> dict[str, Any]:
    # Keep '+' as sent (upstream logs q already '+'-encoded); percent escapes are decoded.
    params: dict[str, Any] = {}
    for pair in query_string.decode("latin-1").split("&"):
        if not pair:
            continue
        key, _, value = pair.partition("=")
        text = unquote(value)
        params[unquote(key)] = int(text) if key == "page" and text.isdigit() else text
    return params


class _JSONResponse(JSONResponse):
    """Starlette's JSON response, a lone surrogate (a miner's request or the model's reply echoing one)
    written as its escape instead of failing the request with a 500 after its log line."""

    def render(self, content: Any) -> bytes:
        return json_bytes(content, allow_nan=False, indent=None, separators=(",", ":"))


def summarise_response(path: str, response: Any, entry: ProxyLogEntry) -> None:
    """Put ``response`` (≤ 2000 chars) or the truncation fields into a §5.3 summary entry."""
    text = json.dumps(response, ensure_ascii=False, default=str)
    if len(text) <= RESPONSE_LOG_LIMIT:
        entry.response = response
        return
    entry.response_truncated = True
    entry.response_length = len(text)
    if path.endswith("/find_product") and isinstance(response, list):
        entry.result_product_ids = [
            str(item["product_id"]) for item in response if isinstance(item, dict) and "product_id" in item
        ]


def chat_response_dict(resp: Any, model: str) -> dict[str, Any]:
    """An OpenAI ``chat.completion`` object from a :class:`ChatResponse`."""
    message: dict[str, Any] = {"role": "assistant", "content": resp.content}
    if resp.tool_calls:
        message["tool_calls"] = resp.tool_calls
    if resp.reasoning_content:
        message["reasoning_content"] = resp.reasoning_content
    prompt, completion = resp.usage.prompt_tokens, resp.usage.completion_tokens
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": resp.model or model,
        "choices": [{"index": 0, "message": message, "finish_reason": resp.finish_reason or "stop"}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


class _ProxyRoutes:
    """What the proxy answers: the catalogue tools, ``web_search`` and inference, each call logged."""

    def __init__(self, search: Any, backend: Any, state: ProxyState, knowledge: Any) -> None:
        self.search, self.backend, self.state, self.knowledge = search, backend, state, knowledge

    @staticmethod
    def token_of(request: Request) -> str | None:
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip()
        return request.headers.get("x-arena-token")

    async def search_call(
        self, tool: str, request: Request, body: bytes, entry: ProxyLogEntry, ident: ClientIdentity
    ) -> tuple[int, Any, dict[str, str]]:
        headers: dict[str, str] = {}
        status = self.state.nonces.verify(
            request.headers.get("x-tool-nonce"),
            run=ident.run,
            tool=tool,
            body=body,
            call_id=request.headers.get("x-tool-call-id"),
        )
        entry.nonce_status = status.value
        headers["X-Nonce-Status"] = status.value
        if (
            self.state.config.strict_nonces
            and status is not NonceStatus.VALID
            and (status is not NonceStatus.MISSING or self.state.config.require_nonces)
        ):
            entry.proof = ProofKind.UNMATCHED
            return 403, {"error": f"tool nonce {status.value}", "nonce_status": status.value}, headers
        if request.method == "GET":
            params = dict(request.query_params)
            entry.params = _raw_params(request.scope.get("query_string", b""))
        else:
            try:
                parsed = json.loads(body) if body.strip() else {}
            except ValueError:
                return 400, {"error": "search body must be a JSON object"}, headers
            if not isinstance(parsed, dict):
                return 400, {"error": "search body must be a JSON object"}, headers
            entry.json_data = parsed
            params = parsed
        variants = [params]
        if request.method == "GET" and "+" in str(params.get("q", "")):
            variants.append({**params, "q": unquote_plus(str(params["q"]))})
        call_id = request.headers.get("x-tool-call-id")
        proof = ident.claim(tool, variants, call_id, status is NonceStatus.VALID)
        entry.proof = proof
        try:
            if tool == "find_product":
                q = params.get("q", params.get("query"))
                if q is None:
                    return 400, {"error": "find_product needs q"}, headers
                result = await run_in_threadpool(
                    self.search.find_product,
                    str(q),
                    params.get("page", 1),
                    params.get("shop_id"),
                    params.get("price"),
                    params.get("sort"),
                    params.get("service"),
                )
            else:
                ids = params.get("product_ids", params.get("product_id"))
                if ids is None:
                    return 400, {"error": "view_product_information needs product_ids"}, headers
                ids = ",".join(map(str, ids)) if isinstance(ids, list) else str(ids)
                result = await run_in_threadpool(self.search.view_product_information, ids)
        except Exception as err:  # engine failures are the server's, reported like upstream's 500
            logger.exception("search %s failed", tool)
            return 500, {"error": f"{type(err).__name__}: {err}"}, headers
        return 200, _jsonable(result), headers

    async def web_call(self, request: Request, body: bytes, entry: ProxyLogEntry) -> tuple[int, Any]:
        if request.method == "GET":
            params: Any = dict(request.query_params)
            entry.params = _raw_params(request.scope.get("query_string", b""))
        else:
            try:
                params = json.loads(body) if body.strip() else {}
            except ValueError:
                params = None
            if not isinstance(params, dict):
                return 400, {"error": "web_search body must be a JSON object"}
            entry.json_data = params
        q = params.get("q", params.get("query"))
        if not q:
            return 400, {"error": "web_search needs q"}
        try:
            limit = max(1, min(WEB_MAX_RESULTS, int(params.get("max_results", 10))))
        except (TypeError, ValueError):
            return 400, {"error": "web_search max_results must be an integer"}
        if self.knowledge is None:
            return 200, {"observation": [], "success": False}
        pages = await run_in_threadpool(self.knowledge.search, str(q), limit)
        return 200, {"observation": [p.model_dump(mode="json") for p in pages], "success": True}

    async def inference_call(
        self, request: Request, body: bytes, entry: ProxyLogEntry, ident: ClientIdentity
    ) -> tuple[int, Any]:
        if not body.strip():
            return 400, {"error": "empty request body"}
        try:
            payload = json.loads(body)
        except ValueError:
            return 400, {"error": "request body is not JSON"}
        if not isinstance(payload, dict) or not payload.get("model"):
            return 400, {"error": "missing 'model'"}
        json_data = {k: v for k, v in payload.items() if k != "messages"}
        entry.json_data = json_data
        model = self.state.config.served_model or str(payload["model"])
        entry.model = model
        if model != payload["model"]:
            entry.requested_model = str(payload["model"])
        payload = {**payload, "model": model}
        if payload.get("stream") is True:
            return 400, {"error": "streaming is not supported"}
        allowed = self.state.config.allowed_models
        if allowed is not None and model not in allowed:
            return 403, {"error": f"model {model!r} is not allowed", "allowed_models": allowed}
        if self.backend is None:
            return 503, {"error": "no inference backend configured"}
        from shoparena.llm.types import BackendError, ChatRequest

        limits = self.state.config.inference
        payload = limits.apply(payload)
        entry.json_data = {**json_data, **{k: payload[k] for k in ("max_tokens", "stop") if k in payload}}
        known = {k: payload[k] for k in _CHAT_FIELDS if k in payload}
        extra = {k: v for k, v in payload.items() if k not in _CHAT_FIELDS and k != "stream"}
        try:
            chat = ChatRequest(**known, extra_body=extra, timeout_s=limits.call_timeout_s)
        except Exception as err:
            return 400, {"error": f"invalid chat request: {err}"}

        async def gone() -> bool:
            return ident.closed.is_set() or await request.is_disconnected()

        try:
            resp = await complete_with_limits(
                self.backend, chat, timeout_s=limits.call_timeout_s, gone=gone, cancels=ident.cancels
            )
        except CallAbandoned as err:
            # 504: the run's per-call limit passed; 499 (nginx's "client closed request"): nobody waits.
            code = 504 if err.reason == "timeout" else 499
            return code, {
                "error": {
                    "type": "InferenceTimeout" if code == 504 else "InferenceAbandoned",
                    "message": f"{err} (generation cancelled)",
                }
            }
        except BackendError as err:
            code = err.status_code if err.status_code and err.status_code >= 400 else 502
            return code, {"error": {"type": type(err).__name__, "message": str(err)}}
        except Exception as err:
            logger.exception("inference backend failed")
            return 502, {"error": {"type": type(err).__name__, "message": str(err)}}
        out = chat_response_dict(resp, payload["model"])
        try:
            self.state.nonces.enrich(ident.run, out)
        except Exception:  # enrichment fails open, as upstream: the reply still goes out
            logger.exception("nonce enrichment failed")
        entry.usage = out["usage"]
        calls = parse_response_tool_calls(out)
        entry.parsed_tool_names = [call.name for call in calls]
        # Kept whole (not cut at 2000 chars like `response`), so richness can be audited offline.
        entry.parsed_tool_calls = [
            ParsedCall(id=call.call_id, name=call.name, arguments=call.arguments) for call in calls
        ]
        ident.remember_emitted(calls)
        return 200, out

    async def answer(
        self, route: str, request: Request, started: float, ident: ClientIdentity | None
    ) -> JSONResponse:
        entry = ProxyLogEntry(kind="summary", method=request.method, path=route)
        headers: dict[str, str] = {}
        body = b""
        if ident is None:
            status, payload = 401, {"error": "missing or unknown arena token"}
        elif not self.state.allow(ident.token):
            status, payload = 429, {"error": "rate limit exceeded"}
        else:
            capped = await read_capped_body(request, self.state.config.max_body_bytes)
            body = capped or b""
            if capped is None:
                status, payload = 413, {"error": "request body too large"}
            elif route.startswith("/search/"):
                tool = route[len("/search/") :]
                if tool in SEARCH_TOOLS and request.method in ("GET", "POST"):
                    status, payload, headers = await self.search_call(tool, request, body, entry, ident)
                elif tool == WEB_SEARCH and request.method in ("GET", "POST"):
                    status, payload = await self.web_call(request, body, entry)
                elif tool in CATALOGUE_TOOLS and request.method in ("GET", "POST"):
                    status, payload = 403, {"error": f"/search/{tool} is not served by this proxy"}
                else:
                    status, payload = 403, {"error": f"{route} is forbidden"}
            elif route == "/inference/chat/completions" and request.method == "POST":
                status, payload = await self.inference_call(request, body, entry, ident)
            elif route.startswith("/inference/"):
                status, payload = 403, {"error": "only POST /inference/chat/completions is served"}
            else:
                status, payload = 403, {"error": f"{route} is forbidden"}
        entry.timestamp = int(time.time() * 1000)
        entry.duration_ms = round((time.monotonic() - started) * 1000, 1)
        entry.status_code = status
        if ident is not None:
            entry.problem_id = ident.problem_id
        if status == 200:
            summarise_response(route, payload, entry)
        else:
            entry.error = payload
        self.state.write(ident, entry)
        return _JSONResponse(payload, status_code=status, headers=headers)

    async def handle(self, path: str, request: Request) -> JSONResponse:
        """Every route: the identity, the rate limit and the log entry around :meth:`answer`."""
        started = time.monotonic()
        route = "/" + path
        ident = self.state.lookup(self.token_of(request))
        if ident is None:
            return await self.answer(route, request, started, None)
        self.state.begin_request(ident)
        try:
            return await self.answer(route, request, started, ident)
        finally:
            self.state.end_request(ident)


def create_proxy_app(search: Any, backend: Any, state: ProxyState, knowledge: Any = None) -> FastAPI:
    """Build the FastAPI app.

    Args:
        search: A :class:`shoparena.search.SearchEngine` (``find_product``, ``view_product_information``).
        backend: A :class:`shoparena.llm.types.ChatBackend`, or None (inference answers 503).
        state: Shared :class:`ProxyState`.
        knowledge: A :class:`~shoparena.env.knowledge.KnowledgeBase` behind ``/search/web_search``; None
            answers ``{"observation": [], "success": false}`` (as the offline environment does).

    Returns:
        The ASGI application.
    """
    app = FastAPI(title="shoparena proxy", docs_url=None, redoc_url=None, openapi_url=None)
    routes = _ProxyRoutes(search, backend, state, knowledge)
    app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"])(
        routes.handle
    )
    return app


class ProxyServer:
    """Serves the proxy app on a Unix socket from a background thread (uvicorn).

    The socket lives in a fresh private directory: mode 0700 with a 0600 socket, or, when sandboxes run under
    their own host uids, 0710/0660 for the group ``peer_gid`` they carry; no other local user can connect.
    The directory (``shoparena-proxy-<pid>-*``) is removed on stop or exit, and by the next run if killed.

    Args:
        app: The ASGI app (see :func:`create_proxy_app`).
        socket_dir: Directory for the socket; a new temp dir when None.
        peer_gid: Group of the sandbox processes allowed to connect (see ``Sandbox.peer_gid``); ``"auto"``:
            the group of sandboxes with the default ``SandboxConfig`` (none unless the runner is root).
    """

    def __init__(
        self, app: Any, socket_dir: Path | None = None, peer_gid: int | Literal["auto"] | None = "auto"
    ) -> None:
        self.app = app
        self._own_dir = socket_dir is None
        if peer_gid == "auto":
            from shoparena.arena.sandbox import SandboxConfig, peer_gid_for

            peer_gid = peer_gid_for(SandboxConfig())
        self.peer_gid = peer_gid
        self.socket_dir = Path(socket_dir or private_tempdir("proxy", owner=self))
        self.socket_path = self.socket_dir / "proxy.sock"
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def start(self, timeout: float = 15.0) -> ProxyServer:
        import uvicorn

        self.socket_dir.mkdir(parents=True, exist_ok=True)
        self._restrict(self.socket_dir, 0o700, 0o710)
        config = uvicorn.Config(
            self.app,
            uds=str(self.socket_path),
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_keep_alive=30,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="arena-proxy", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError(f"proxy did not start on {self.socket_path}")
            time.sleep(0.01)
        self._restrict(self.socket_path, 0o600, 0o660)
        return self

    def _restrict(self, path: Path, private: int, shared: int) -> None:
        if self.peer_gid is None:
            os.chmod(path, private)
        else:
            os.chown(path, -1, self.peer_gid)
            os.chmod(path, shared)

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._own_dir:
            import shutil

            shutil.rmtree(self.socket_dir, ignore_errors=True)

    def __enter__(self) -> ProxyServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = [
    "ClientIdentity",
    "EmittedCall",
    "ProxyConfig",
    "ProxyServer",
    "ProxyState",
    "TokenBucket",
    "chat_response_dict",
    "create_proxy_app",
    "summarise_response",
]
