"""Proxy client for miner files: search and inference through the arena proxy (stdlib only: the
socket transport of :mod:`shoparena.agent_sdk.wire`).

Method names follow ORO's ``proxy_client.ProxyClient`` (``get``, ``post``, ``parse_nonces``,
``dispatch_tool``), plus typed shortcuts. Failures return None after the retries, as upstream does.

Deviation from ORO (documented in docs/security.md): the ``Authorization: Bearer`` token is sent on
**every** request, not only on inference POSTs, because the arena proxy identifies the calling problem by
that per-problem token when it writes the trusted call log.
"""

from __future__ import annotations

import json
import os
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

from shoparena.agent_sdk import wire
from shoparena.agent_sdk.logs import InferenceStats, RequestLog

DEFAULT_PROXY_URL = "http://proxy:80"
INFERENCE_PATH = "/inference/chat/completions"
#: ORO's client defaults (seconds, attempts).
DEFAULT_TIMEOUT = 120
DEFAULT_MAX_RETRIES = 3
DEFAULT_RETRY_DELAY = 2
DEFAULT_RATE_LIMIT_RETRY_DELAY = 5
#: Retry delays double from the base up to this cap (seconds), as upstream.
MAX_RETRY_DELAY = 10.0


def default_timeout() -> float:
    """ORO's 120 s, raised to the arena's per-call limit plus a margin when that is longer."""
    try:
        announced = float(os.environ.get("SHOPARENA_CALL_TIMEOUT_S") or 0)
    except ValueError:
        announced = 0.0
    return max(float(DEFAULT_TIMEOUT), announced + 10.0 if announced else 0.0)


def _warn(message: str, *args: Any) -> None:
    """A warning on this module's logger; :mod:`logging` is imported on the first one only (a sandbox
    process that never fails never pays for it)."""
    import logging

    logging.getLogger(__name__).warning(message, *args)


def parse_nonces(response_json: Any) -> dict[str, str]:
    """The proxy-minted ``{call_id: nonce}`` map of an inference response ({} when absent)."""
    if not isinstance(response_json, dict):
        return {}
    meta = response_json.get("oro_metadata") or {}
    nonces = meta.get("tool_nonces") if isinstance(meta, dict) else None
    if not isinstance(nonces, dict):
        return {}
    return {str(k): v for k, v in nonces.items() if isinstance(v, str)}


class ProxyClient:
    """HTTP client for the sandbox proxy.

    Args:
        proxy_url: Base URL; defaults to ``$SANDBOX_PROXY_URL`` (then ``http://proxy:80``).
        timeout: Per-attempt timeout in seconds; by default ORO's 120 s, or longer when the arena announces
            a longer per-call inference limit (``$SHOPARENA_CALL_TIMEOUT_S``), so the proxy answers first.
        max_retries: Total attempts per call (ORO semantics: 3 means three tries).
        retry_delay: Base delay before a retry, doubled per attempt, capped at 10 s.
        rate_limit_retry_delay: Base delay after a 429.
        api_key: Bearer token; defaults to ``$CHUTES_ACCESS_TOKEN`` (the arena's per-problem token).
        sleep: Sleep function (injectable for tests).
    """

    def __init__(
        self,
        proxy_url: str | None = None,
        timeout: float | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        retry_delay: float = DEFAULT_RETRY_DELAY,
        rate_limit_retry_delay: float = DEFAULT_RATE_LIMIT_RETRY_DELAY,
        api_key: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.proxy_url = (proxy_url or os.environ.get("SANDBOX_PROXY_URL") or DEFAULT_PROXY_URL).rstrip("/")
        self.timeout = timeout if timeout is not None else default_timeout()
        self.max_retries = max(1, max_retries)
        self.retry_delay = retry_delay
        self.rate_limit_retry_delay = rate_limit_retry_delay
        self.api_key = api_key if api_key is not None else os.environ.get("CHUTES_ACCESS_TOKEN")
        self._sleep = sleep
        self.last_status: int | None = None
        self.last_headers: dict[str, str] = {}
        # The agent's own (untrusted) logs, under ORO's attribute names.
        self.inference_stats = InferenceStats(os.environ.get("INFERENCE_STATS_FILE"))
        self.request_log = RequestLog(os.environ.get("REQUEST_LOG_FILE"))

    # -- transport -------------------------------------------------------------------------------
    def _build_url(self, path: str, params: dict[str, Any] | None = None) -> str:
        """ORO's name for the URL builder."""
        return self._url(path, params)

    def _url(self, path: str, params: dict[str, Any] | None = None) -> str:
        url = self.proxy_url + path
        if params:
            kept = {k: v for k, v in params.items() if v is not None}
            if kept:
                url += "?" + urllib.parse.urlencode(kept, doseq=True)
        return url

    def _once(self, method: str, url: str, body: bytes | None, headers: dict[str, str]) -> tuple[int, bytes]:
        # Never through a proxy from the environment: http_proxy variables cannot reroute sandbox traffic.
        status, self.last_headers, payload = wire.request(
            method, url, body=body, headers=headers, timeout=self.timeout
        )
        return status, payload

    def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """Send one call with retries; return the decoded JSON of the first HTTP 200, else None."""
        url = self._url(path, params)
        all_headers = {"Accept": "application/json", **(headers or {})}
        if body is not None:
            all_headers.setdefault("Content-Type", "application/json")
        if self.api_key:
            all_headers["Authorization"] = f"Bearer {self.api_key}"
        self.last_status = None
        started = time.monotonic()
        result = self._with_retries(method, path, url, body, all_headers)
        if path == INFERENCE_PATH:
            (
                self.inference_stats.record_success
                if result is not None
                else self.inference_stats.record_failure
            )()
        self.request_log.record(
            method,
            path,
            params=params,
            status_code=self.last_status,
            response_body=result,
            duration_ms=(time.monotonic() - started) * 1000,
        )
        return result

    def _with_retries(
        self, method: str, path: str, url: str, body: bytes | None, headers: dict[str, str]
    ) -> Any:
        for attempt in range(self.max_retries):
            status: int | None = None
            error_class = None
            attempt_started = time.monotonic()
            try:
                status, payload = self._once(method, url, body, headers)
            except OSError as err:  # refused, reset, timed out (TimeoutError), not HTTP (wire.WireError)
                error_class = type(err).__name__
                _warn("%s %s failed (attempt %d): %s", method, path, attempt + 1, err)
            self.last_status = status
            self.request_log.record_attempt(
                method, path, attempt, (time.monotonic() - attempt_started) * 1000, status, error_class
            )
            if status == 200:
                try:
                    return json.loads(payload)
                except ValueError:
                    _warn("%s %s returned non-JSON", method, path)
                    return None
            # 4xx other than 429 will not change on retry: give up at once.
            if status is not None and 400 <= status < 500 and status != 429:
                return None
            if attempt < self.max_retries - 1:
                base = self.rate_limit_retry_delay if status == 429 else self.retry_delay
                self._sleep(min(base * (2**attempt), MAX_RETRY_DELAY))
        return None

    # -- ORO-compatible surface -------------------------------------------------------------------
    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        """GET ``path`` with query ``params`` (None values dropped)."""
        return self.request("GET", path, params=params)

    def post(self, path: str, json_data: dict[str, Any] | None = None) -> Any:
        """POST ``json_data`` as JSON to ``path``."""
        body = json.dumps(json_data if json_data is not None else {}).encode()
        return self.request("POST", path, body=body)

    parse_nonces = staticmethod(parse_nonces)

    def dispatch_tool(self, tool_name: str, arguments_raw: str, nonce: str | None, call_id: str) -> Any:
        """POST a catalogue call with its proxy nonce; the body is the LLM's raw ``arguments`` string.

        The body must be byte-identical to what the model emitted: the nonce signs its SHA-256.
        """
        headers = {"X-Tool-Call-Id": call_id}
        if nonce:
            headers["X-Tool-Nonce"] = nonce
        return self.request("POST", f"/search/{tool_name}", body=arguments_raw.encode(), headers=headers)

    # -- typed shortcuts --------------------------------------------------------------------------
    def find_product(
        self,
        q: str,
        page: int = 1,
        shop_id: str | None = None,
        price: str | None = None,
        sort: str | None = None,
        service: str | None = None,
    ) -> list[dict[str, Any]] | None:
        """Search the catalogue (10 hits per page, pages 1-5)."""
        params = {
            "q": q,
            "page": page,
            "shop_id": shop_id or None,
            "price": price or None,
            "sort": sort or None,
            "service": service or None,
        }
        return self.get("/search/find_product", params)

    def view_product_information(self, product_ids: str | list[str]) -> list[dict[str, Any]] | None:
        """Details for comma-separated ``product_ids``."""
        ids = ",".join(product_ids) if isinstance(product_ids, list) else product_ids
        return self.get("/search/view_product_information", {"product_ids": ids})

    def chat_completion(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """POST an OpenAI chat-completions body (non-streaming) to the proxy's inference route."""
        return self.post(INFERENCE_PATH, body)
