"""WindowDataset: the windows of a window list as training examples, a torch IterableDataset when torch is installed.

Each DataLoader worker takes every `num_workers`-th window (window i goes to worker i % num_workers), so an
epoch yields every window exactly once. The dataset holds plain data and opens nothing until iterated, so it
is safe with the `spawn` start method. Windows are read ahead by a small thread pool (`prefetch` in flight),
retried by the client, and optionally kept in a local cache folder.
"""
from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterator, List, Optional, Sequence

import numpy as np

from .client import Client

try:  # torch is optional
    from torch.utils.data import IterableDataset as _Base
    from torch.utils.data import get_worker_info as _worker_info
except ImportError:  # pragma: no cover - exercised where torch is absent
    _Base = object

    def _worker_info():
        return None


class WindowDataset(_Base):  # type: ignore[misc, valid-type]
    def __init__(self, windows: Sequence[dict], base_url: str, api_key: Optional[str] = None, *, channels: Optional[Sequence[str]] = None,
                 channel_type: Optional[str] = None, rate: Optional[float] = None, prefetch: int = 8, retries: int = 3,
                 cache_dir: Optional[str] = None, labels: Optional[Dict[str, int]] = None):
        """`windows`: the `windows` of `Client.list_windows`; `labels` maps a label to a class index (yielded as `y`)."""
        self.windows = [dict(w) for w in windows]
        self.base_url = base_url
        self.api_key = api_key
        self.channels = list(channels) if channels else None
        self.channel_type = channel_type
        self.rate = rate
        self.prefetch = max(1, prefetch)
        self.retries = retries
        self.cache_dir = cache_dir
        self.labels = labels

    def __len__(self) -> int:
        return len(self.windows)

    def _indices(self) -> List[int]:
        info = _worker_info()
        if info is None:
            return list(range(len(self.windows)))
        return list(range(info.id, len(self.windows), info.num_workers))

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
        return example

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        client = Client(self.base_url, self.api_key, retries=self.retries)
        indices = self._indices()
        with ThreadPoolExecutor(max_workers=self.prefetch) as pool:
            pending = []
            position = 0
            while position < len(indices) or pending:
                while position < len(indices) and len(pending) < self.prefetch:
                    index = indices[position]
                    pending.append((index, pool.submit(self._read, client, index)))
                    position += 1
                index, future = pending.pop(0)
                yield self._example(index, future.result())
