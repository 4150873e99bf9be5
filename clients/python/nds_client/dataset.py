"""WindowDataset: the windows of a window list as training examples, a torch IterableDataset when torch is installed.

Each DataLoader worker takes one contiguous share of the list (worker k of n: windows k*N/n up to
(k+1)*N/n), so an epoch yields every window exactly once. Consecutive windows of one recording that touch
(fixed windows, stride = length) are read with one request of up to `merge` windows and cut apart here,
which saves the per-request cost. The dataset holds plain data and opens nothing until iterated, so it is
safe with the `spawn` start method. Reads go ahead on a small thread pool (`prefetch` requests in flight),
are retried by the client, and windows are optionally kept in a local cache folder.
"""
from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterator, List, Optional, Sequence

import numpy as np

from .client import Client, NdsApiError

try:  # torch is optional
    from torch.utils.data import IterableDataset as _Base
    from torch.utils.data import get_worker_info as _worker_info
except ImportError:  # pragma: no cover - exercised where torch is absent
    _Base = object

    def _worker_info():
        return None


class WindowDataset(_Base):  # type: ignore[misc, valid-type]
    def __init__(self, windows: Sequence[dict], client: Optional[Client] = None, *, channels: Optional[Sequence[str]] = None,
                 channel_type: Optional[str] = None, rate: Optional[float] = None, prefetch: int = 8, retries: Optional[int] = None,
                 cache_dir: Optional[str] = None, labels: Optional[Dict[Any, int]] = None, merge: int = 32):
        """`windows`: the `windows` of `Client.list_windows`; `client`: the `Client` that listed them, whose server
        and key every read uses (left out: `Client()`, which finds them as the `nds` command does); `labels` maps
        a label to a class index (yielded as `y`; integer labels of the mapping are yielded as they are).
        Raises ValueError for an empty list: a loader over nothing would train on nothing without a word."""
        if isinstance(client, str):
            raise TypeError("WindowDataset(windows, client) takes the Client that listed the windows, not a URL: "
                            "WindowDataset(windows, Client(url, api_key=...))")
        self.windows = [dict(w) for w in windows]
        if not self.windows:
            raise ValueError("WindowDataset of no windows: the window list is empty (see the warnings of list_windows)")
        client = client if client is not None else Client()
        self.base_url = client.base_url
        self.api_key = client.api_key
        self.timeout = client.timeout
        self.channels = list(channels) if channels else None
        self.channel_type = channel_type
        self.rate = rate
        self.prefetch = max(1, prefetch)
        self.retries = client.retries if retries is None else retries
        self.cache_dir = cache_dir
        self.labels = labels
        self.merge = max(1, merge)

    def __len__(self) -> int:
        return len(self.windows)

    def _indices(self) -> List[int]:
        info = _worker_info()
        n = len(self.windows)
        if info is None:
            return list(range(n))
        return list(range(info.id * n // info.num_workers, (info.id + 1) * n // info.num_workers))

    def _runs(self, indices: List[int]) -> List[List[int]]:
        """Indices grouped into reads: consecutive windows of one recording and group that touch, at most `merge`."""
        runs: List[List[int]] = []
        for index in indices:
            w = self.windows[index]
            if runs and len(runs[-1]) < self.merge and not self.cache_dir:
                last = self.windows[runs[-1][-1]]
                if (last["dataset_id"], last["path"], last.get("group")) == (w["dataset_id"], w["path"], w.get("group")) \
                        and last["start_sample"] + last["n_samples"] == w["start_sample"] and last["n_samples"] == w["n_samples"]:
                    runs[-1].append(index)
                    continue
            runs.append([index])
        return runs

    def _read_run(self, client: Client, run: List[int]) -> List[np.ndarray]:
        if len(run) == 1 or self.rate is not None:
            return [self._read(client, i) for i in run]
        first = self.windows[run[0]]
        n = first["n_samples"]
        try:
            x = client.read_window(first["dataset_id"], first["path"], first["start_sample"], n * len(run), channels=self.channels,
                                   channel_type=self.channel_type, group=first.get("group"))
        except NdsApiError as err:
            if err.status != 400:
                raise
            # Too large for one request (the server's window limit): one request a window.
            return [self._read(client, i) for i in run]
        return [np.ascontiguousarray(x[:, k * n:(k + 1) * n]) for k in range(len(run))]

    def _read(self, client: Client, index: int) -> np.ndarray:
        w = self.windows[index]
        url = client.window_url(w["dataset_id"], w["path"], w["start_sample"], w["n_samples"], channels=self.channels,
                                channel_type=self.channel_type, group=w.get("group"), rate=self.rate)
        cached = None
        if self.cache_dir:
            cached = os.path.join(self.cache_dir, hashlib.sha256(f"{client.base_url}{url}".encode()).hexdigest() + ".npy")
            if os.path.exists(cached):
                return np.load(cached)
        x = client.read_window(w["dataset_id"], w["path"], w["start_sample"], w["n_samples"], channels=self.channels,
                               channel_type=self.channel_type, group=w.get("group"), rate=self.rate)
        if cached:
            os.makedirs(self.cache_dir, exist_ok=True)
            tmp = f"{cached}.{os.getpid()}.tmp.npy"
            np.save(tmp, x)
            os.replace(tmp, cached)
        return x

    def _example(self, index: int, x: np.ndarray) -> Dict[str, Any]:
        w = self.windows[index]
        label = w.get("label")
        example: Dict[str, Any] = {"x": x, "index": index, "label": label if label is not None else ""}
        if self.labels is not None:
            example["y"] = self.labels[label]
        elif isinstance(label, int) and not isinstance(label, bool):
            example["y"] = label
        return example

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        client = Client(self.base_url, self.api_key, timeout=self.timeout, retries=self.retries)
        runs = self._runs(self._indices())
        with ThreadPoolExecutor(max_workers=self.prefetch) as pool:
            pending = []
            position = 0
            while position < len(runs) or pending:
                while position < len(runs) and len(pending) < self.prefetch:
                    pending.append((runs[position], pool.submit(self._read_run, client, runs[position])))
                    position += 1
                run, future = pending.pop(0)
                for index, x in zip(run, future.result()):
                    yield self._example(index, x)
