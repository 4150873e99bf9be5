"""HTTP calls to an nds server with the standard library only (urllib), retried on 5xx and network errors."""
from __future__ import annotations

import io
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
from typing import Any, Dict, Iterable, List, Optional, Sequence

import numpy as np

from .identity import resolve_identity


# C0 controls but the newline, DEL, C1 controls, and the BiDi embeddings, overrides and isolates.
_TERMINAL_CONTROL = re.compile("[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]")


def _terminal_safe(text: str) -> str:
    """The server's text with its terminal controls shown as escapes: Python prints an uncaught exception's text
    raw, and a terminal obeys ESC ] 52 (write the clipboard), ESC ] 8 (a link) and CR (overwrite the line)."""
    return _TERMINAL_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) <= 0xFF else f"\\u{ord(m.group()):04x}", text)


class NdsApiError(Exception):
    """A refusal from the server: HTTP status, error code and message (`code` exact; the text terminal-safe)."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(_terminal_safe(f"{message} ({code}, HTTP {status})"))
        self.status = status
        self.code = code


_KIB = 1024
_MIB = 1024 * _KIB
#: Most bytes read of an error answer: a refusal's JSON is a few hundred bytes.
ERROR_ANSWER_MAX_BYTES = 64 * _KIB
#: Most bytes read of one JSON answer: an object or a page (1,000 recordings of 300 channels are about 20 MB).
JSON_ANSWER_MAX_BYTES = 64 * _MIB
#: Most bytes read of an answer listing a whole window list or a recording's events: the server builds each as one
#: string, and V8 (the server's JavaScript engine) holds none longer than 2**29 - 24 characters.
LISTING_ANSWER_MAX_BYTES = 512 * _MIB
#: Most bytes read of a signal window: the server's most values (16 Mi) as float64, and the .npy header.
WINDOW_ANSWER_MAX_BYTES = 16 * _MIB * 8 + 64 * _KIB


def _bound_text(limit: int) -> str:
    if limit % _MIB == 0:
        return f"{limit // _MIB} MiB"
    if limit % _KIB == 0:
        return f"{limit // _KIB} KiB"
    return f"{limit} bytes"


def _read_bounded(response: Any, limit: int, status: int, path: str) -> bytes:
    """The body of ``response`` (an answer or an ``HTTPError``), at most ``limit`` bytes. A longer one, or a
    Content-Length announcing one, closes the response and its connection, and raises `NdsApiError`
    ``answer_too_large`` naming the bound: no real answer reaches it, so the URL is not an nds server, or a broken one."""

    def too_large() -> NdsApiError:
        response.close()
        return NdsApiError(status, "answer_too_large", f"the answer to {path} is larger than {_bound_text(limit)}, which no real answer reaches: reading stopped there")

    announced = (response.headers.get("content-length") or "").strip()
    if announced.isdigit() and int(announced) > limit:
        raise too_large()
    chunks = []
    total = 0
    while True:
        chunk = response.read(min(1 << 20, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise too_large()


class EmptyWindowListError(ValueError):
    """`list_windows` found no window; `warnings` says why (the event types the recordings do have, empty splits).
    Pass ``allow_empty=True`` to get the empty list instead."""

    def __init__(self, warnings: List[str]):
        super().__init__("the window list is empty: " + ("; ".join(warnings) if warnings else "no recording matched"))
        self.warnings = warnings


class WindowListWarning(UserWarning):
    """A warning of the server about a window list that is not empty (a split left empty, a label that matched nothing)."""


def _query(params: Dict[str, Any]) -> str:
    pairs = []
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            pairs.extend((key, str(v)) for v in value)
        else:
            pairs.append((key, str(value)))
    return urllib.parse.urlencode(pairs)


class Client:
    """One nds server. Holds no open connection, so it pickles (DataLoader workers, `spawn`).

    ``base_url`` left out: ``NDS_API_URL``, else the server ``nds auth login`` stored, else
    ``http://localhost:8080``. ``api_key`` left out: ``NDS_API_KEY``, else the key stored for that server, else
    none (public data only). ``url_source`` and ``key_source`` say where each came from.
    """

    def __init__(self, base_url: Optional[str] = None, api_key: Optional[str] = None, timeout: float = 60.0, retries: int = 3):
        identity = resolve_identity(base_url, api_key)
        self.base_url = identity.base_url
        self.api_key = identity.api_key
        self.url_source = identity.url_source
        self.key_source = identity.key_source
        self.timeout = timeout
        self.retries = retries

    def __repr__(self) -> str:
        return f"Client({self.base_url!r}, key from {self.key_source or 'nowhere'})"

    def _request(self, path: str, body: Optional[dict] = None, accept: str = "application/json", limit: int = JSON_ANSWER_MAX_BYTES):
        """(headers, body) of the answer, its body read up to ``limit`` bytes (an error answer: 64 KiB)."""
        headers = {"accept": accept}
        where = urllib.parse.urlsplit(self.base_url + path).path
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["content-type"] = "application/json"
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(self.base_url + path, data=data, headers=headers, method="POST" if body is not None else "GET")
            if self.api_key:
                # Not carried over to a redirect's request: urllib copies ordinary headers to whatever host a
                # redirect names, and the key belongs to this server alone.
                request.add_unredirected_header("Authorization", f"Bearer {self.api_key}")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return response.headers, _read_bounded(response, limit, response.status, where)
            except urllib.error.HTTPError as err:
                if err.code < 500 or attempt >= self.retries:
                    refusal = _read_bounded(err, ERROR_ANSWER_MAX_BYTES, err.code, where)
                    try:
                        payload = json.loads(refusal.decode("utf-8"))
                    except Exception:
                        payload = {}
                    if not isinstance(payload, dict):
                        payload = {}
                    raise NdsApiError(err.code, payload.get("error", f"http_{err.code}"), payload.get("message", str(err))) from None
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if attempt >= self.retries:
                    raise
            time.sleep(0.2 * 2 ** attempt)
        raise RuntimeError("unreachable")

    def list_recordings(self, **filters: Any) -> List[dict]:
        """Every recording matching the filters of `GET /recordings` (dataset, subject, task, rate, channel=[...])."""
        out: List[dict] = []
        cursor = None
        while True:
            _, body = self._request("/recordings?" + _query({**filters, "limit": 1000, "cursor": cursor}))
            page = json.loads(body)
            out.extend(page["recordings"])
            cursor = page.get("next_cursor")
            if not cursor:
                return out

    def window_url(self, dataset_id: str, path: str, start_sample: Optional[int] = None, n_samples: Optional[int] = None, *,
                   start: Optional[float] = None, duration: Optional[float] = None, channels: Optional[Sequence[str]] = None,
                   channel_type: Optional[str] = None, group: Optional[str] = None, rate: Optional[float] = None, dtype: str = "float32") -> str:
        params = {
            "path": path, "start_sample": start_sample, "n_samples": n_samples, "start": start, "duration": duration,
            "channels": ",".join(channels) if channels else None, "channel_type": channel_type, "group": group, "rate": rate,
            "format": "npy", "dtype": dtype,
        }
        return f"/datasets/{dataset_id}/signal?" + _query(params)

    def read_window(self, dataset_id: str, path: str, start_sample: Optional[int] = None, n_samples: Optional[int] = None, **options: Any) -> np.ndarray:
        """One window, [channels, samples], in the file's physical units (float32 unless dtype='float64')."""
        _, body = self._request(self.window_url(dataset_id, path, start_sample, n_samples, **options), accept="application/x-npy", limit=WINDOW_ANSWER_MAX_BYTES)
        return np.load(io.BytesIO(body), allow_pickle=False)

    def list_windows(self, body: dict, allow_empty: bool = False) -> dict:
        """`POST /windows`: {hash, source_commits, windows: [...], warnings: [...]}.

        An empty list raises `EmptyWindowListError` naming what the recordings do have (the event types of an
        events mapping that matched nothing), unless ``allow_empty``; the warnings of a list that is not empty
        (a split left empty, a mapping key that matched no event) are issued as `WindowListWarning`.
        """
        _, answer = self._request("/windows", body=body, limit=LISTING_ANSWER_MAX_BYTES)
        listed = json.loads(answer)
        notes = listed.get("warnings") or []
        if not listed["windows"] and not allow_empty:
            raise EmptyWindowListError(notes)
        for note in notes:
            warnings.warn(note, WindowListWarning, stacklevel=2)
        return listed

    def events(self, dataset_id: str, path: str) -> List[dict]:
        _, body = self._request(f"/datasets/{dataset_id}/events?" + _query({"path": path}), limit=LISTING_ANSWER_MAX_BYTES)
        return json.loads(body)["events"]
