"""The Python half of bench/ml.ts: times the nds routes and loader against MNE on the same files.

Usage: ml_bench.py <config.json>; prints one JSON object of figures.
config: {url, dataset, recordings: [{name, path, file, file_url, rate, n_samples, n_channels, labels}],
         windows_2s: [...], windows_events: [...], concurrent_seconds}
"""
import io
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import urllib.request

import mne
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "clients", "python"))
from nds_client import Client, WindowDataset  # noqa: E402

def main():
    with open(sys.argv[1]) as f:
        config = json.load(f)
    url, dataset = config["url"], config["dataset"]
    client = Client(url)
    out = {}
    readers = {"edf": mne.io.read_raw_edf, "bdf": mne.io.read_raw_bdf}


    def fetch(u):
        with urllib.request.urlopen(u, timeout=600) as r:
            return r.read()


    # 1. One random 4 s window of 8 channels: the route vs downloading the file and reading the window with MNE.
    for rec in config["recordings"]:
        rng = random.Random(1)
        length = int(4 * rec["rate"])
        route_times, route_bytes = [], []
        for _ in range(15):
            start = rng.randrange(0, rec["n_samples"] - length)
            labels = rng.sample(rec["labels"], 8)
            t = time.perf_counter()
            body = fetch(url + client.window_url(dataset, rec["path"], start, length, channels=labels))
            x = np.load(io.BytesIO(body))
            route_times.append(time.perf_counter() - t)
            route_bytes.append(len(body))
            assert x.shape == (8, length)
        base_times = []
        for run in range(2):
            start = rng.randrange(0, rec["n_samples"] - length)
            labels = rng.sample(rec["labels"], 8)
            t = time.perf_counter()
            with tempfile.NamedTemporaryFile(suffix="." + rec["file"].rsplit(".", 1)[-1], dir=config.get("tmp")) as f:
                with urllib.request.urlopen(rec["file_url"], timeout=600) as r:
                    while True:
                        block = r.read(1 << 22)
                        if not block:
                            break
                        f.write(block)
                f.flush()
                raw = readers[rec["file"].rsplit(".", 1)[-1]](f.name, preload=False, verbose="error")
                raw.get_data(picks=labels, start=start, stop=start + length)
            base_times.append(time.perf_counter() - t)
        out[f"window_{rec['name']}"] = {
            "route_s_median": statistics.median(route_times),
            "route_bytes": statistics.median(route_bytes),
            "baseline_s_median": statistics.median(base_times),
            "baseline_bytes": os.path.getsize(rec["file"]),
        }

    # 2. A full pass in 2 s windows of all channels: the loader vs MNE preload=True on the local file, sliced.
    rec = config["recordings"][0]
    windows = config["windows_2s"]
    t = time.perf_counter()
    n = 0
    try:
        import torch  # noqa: F401
        from torch.utils.data import DataLoader

        loader = DataLoader(WindowDataset(windows, url, prefetch=8), batch_size=None, num_workers=2, multiprocessing_context="spawn")
        for example in loader:
            n += 1
        how = "DataLoader, 2 spawned workers, prefetch 8"
    except ImportError:
        for example in WindowDataset(windows, url, prefetch=8):
            n += 1
        how = "WindowDataset, no torch, prefetch 8"
    loader_s = time.perf_counter() - t
    assert n == len(windows)
    t = time.perf_counter()
    raw = readers[rec["file"].rsplit(".", 1)[-1]](rec["file"], preload=True, verbose="error")
    data = raw.get_data()
    length = windows[0]["n_samples"]
    total = 0.0
    for w in windows:
        total += float(data[:, w["start_sample"]:w["start_sample"] + length][0, 0])
    mne_s = time.perf_counter() - t
    out["full_pass"] = {"windows": n, "loader_s": loader_s, "mne_preload_s": mne_s, "how": how}

    # 3. Event-locked 1 s windows through the loader with 2 workers: windows per second, bytes against the file.
    events = config["windows_events"]
    t = time.perf_counter()
    moved = 0
    try:
        from torch.utils.data import DataLoader

        for example in DataLoader(WindowDataset(events, url, prefetch=8), batch_size=None, num_workers=2, multiprocessing_context="spawn"):
            moved += example["x"].numel() * 4
    except ImportError:
        for example in WindowDataset(events, url, prefetch=8):
            moved += example["x"].size * 4
    events_s = time.perf_counter() - t
    out["events"] = {"windows": len(events), "seconds": events_s, "bytes": moved, "file_bytes": os.path.getsize(rec["file"])}

    # 4. Eight concurrent readers of float32 (random 4 s windows of all channels) vs eight downloading the file.
    def run_readers(make_url, seconds):
        stop = time.perf_counter() + seconds
        counts = [0] * 8

        def reader(i):
            rng = random.Random(i)
            while time.perf_counter() < stop:
                counts[i] += len(fetch(make_url(rng)))

        threads = [threading.Thread(target=reader, args=(i,)) for i in range(8)]
        t0 = time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        return sum(counts) / (time.perf_counter() - t0)


    length = int(4 * rec["rate"])
    route_rate = run_readers(lambda rng: url + f"/datasets/{dataset}/signal?path={rec['path']}&start_sample={rng.randrange(0, rec['n_samples'] - length)}&n_samples={length}&format=f32", config["concurrent_seconds"])
    file_rate = run_readers(lambda rng: rec["file_url"], config["concurrent_seconds"])
    out["concurrent"] = {"route_bytes_per_s": route_rate, "file_download_bytes_per_s": file_rate}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
