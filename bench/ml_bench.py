"""The Python half of bench/ml.ts: times the nds routes and loader against MNE on the same files.

Usage: ml_bench.py <config.json>; prints one JSON object of figures.
config: {url, dataset, recordings: [{name, path, file, file_url, rate, n_samples, n_channels, labels}],
         windows_2s: [...], windows_events: [...], concurrent_seconds}
"""
import http.client
import io
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
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
    out = {"phases": {}}
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
    phase_start = time.time()
    n = n2 = 0
    epoch2_s = None
    spawned_s = None
    try:
        import torch  # noqa: F401
        from torch.utils.data import DataLoader

        # Persistent workers, as a training loop over epochs keeps them: the first epoch pays for starting two
        # worker processes; the second is the loader's own speed. Batches of 32, as in docs/ml-quickstart.md: each
        # worker stacks its batch, and one tensor a batch crosses to this process (one a window, through shared
        # memory, costs more than reading the window). The start method is the platform's default (fork on Linux),
        # as a training script gets it; "spawn" is timed apart below.
        loader = DataLoader(WindowDataset(windows, client, prefetch=8), batch_size=32, num_workers=2, persistent_workers=True)
        for batch in loader:
            n += batch["x"].shape[0]
        epoch1_s = time.perf_counter() - t
        t2 = time.perf_counter()
        for batch in loader:
            n2 += batch["x"].shape[0]
        epoch2_s = time.perf_counter() - t2
        out["phases"]["full_pass_epoch2"] = (time.time() - epoch2_s, time.time())
        del loader
        # The same first epoch with workers started by "spawn" (macOS's and Windows' default): each worker is a
        # new Python that imports torch and the client before its first request.
        t3 = time.perf_counter()
        spawned = DataLoader(WindowDataset(windows, client, prefetch=8), batch_size=32, num_workers=2, multiprocessing_context="spawn")
        m3 = sum(batch["x"].shape[0] for batch in spawned)
        spawned_s = time.perf_counter() - t3
        assert m3 == len(windows)
        del spawned
        how = "DataLoader, batches of 32, 2 worker processes (fork), prefetch 8"
    except ImportError:
        for example in WindowDataset(windows, client, prefetch=8):
            n += 1
        epoch1_s = time.perf_counter() - t
        how = "WindowDataset, no torch, prefetch 8"
    loader_s = epoch1_s
    assert n == len(windows) and n2 in (0, len(windows))
    # The same pass through WindowDataset in this process (no workers to spawn): the loader's own reading.
    t = time.perf_counter()
    m = sum(1 for _ in WindowDataset(windows, client, prefetch=8))
    assert m == len(windows)
    inproc_s = time.perf_counter() - t
    t = time.perf_counter()
    raw = readers[rec["file"].rsplit(".", 1)[-1]](rec["file"], preload=True, verbose="error")
    data = raw.get_data()
    length = windows[0]["n_samples"]
    total = 0.0
    for w in windows:
        total += float(data[:, w["start_sample"]:w["start_sample"] + length][0, 0])
    mne_s = time.perf_counter() - t
    out["full_pass"] = {"windows": n, "loader_s": loader_s, "loader_epoch2_s": epoch2_s, "loader_spawned_s": spawned_s, "loader_inprocess_s": inproc_s, "mne_preload_s": mne_s, "how": how}
    out["phases"]["full_pass"] = (phase_start, time.time())

    # 3. Event-locked 1 s windows through the loader with 2 workers: windows per second, bytes against the file.
    events = config["windows_events"]
    t = time.perf_counter()
    moved = 0
    try:
        from torch.utils.data import DataLoader

        for batch in DataLoader(WindowDataset(events, client, prefetch=8), batch_size=32, num_workers=2, multiprocessing_context="spawn"):
            moved += batch["x"].numel() * 4
    except ImportError:
        for example in WindowDataset(events, client, prefetch=8):
            moved += example["x"].size * 4
    events_s = time.perf_counter() - t
    out["events"] = {"windows": len(events), "seconds": events_s, "bytes": moved, "file_bytes": os.path.getsize(rec["file"])}

    # 4. Eight concurrent readers of float32 (random 4 s windows of all channels) vs eight downloading the file.
    def run_readers(make_url, seconds):
        stop = time.perf_counter() + seconds
        counts = [0] * 8

        def reader(i):
            # One kept-alive connection a reader (as a loader's session keeps), for the route and the baselines alike.
            rng = random.Random(i)
            conns = {}
            while time.perf_counter() < stop:
                u = urllib.parse.urlsplit(make_url(rng))
                conn = conns.get(u.netloc) or conns.setdefault(u.netloc, http.client.HTTPConnection(u.netloc, timeout=600))
                conn.request("GET", u.path + ("?" + u.query if u.query else ""))
                response = conn.getresponse()
                body = response.read()
                assert response.status == 200, (response.status, body[:200])
                counts[i] += len(body)
            for conn in conns.values():
                conn.close()

        threads = [threading.Thread(target=reader, args=(i,)) for i in range(8)]
        t0 = time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        return sum(counts) / (time.perf_counter() - t0)


    length = int(4 * rec["rate"])
    phase_start = time.time()
    route_rate = run_readers(lambda rng: url + f"/datasets/{dataset}/signal?path={rec['path']}&start_sample={rng.randrange(0, rec['n_samples'] - length)}&n_samples={length}&format=f32", config["concurrent_seconds"])
    out["phases"]["concurrent"] = (phase_start, time.time())
    file_rate = run_readers(lambda rng: rec["file_url"], config["concurrent_seconds"])
    window_file_rate = run_readers(lambda rng: config["window_file_url"], config["concurrent_seconds"]) if config.get("window_file_url") else None
    out["concurrent"] = {"route_bytes_per_s": route_rate, "file_download_bytes_per_s": file_rate, "window_file_bytes_per_s": window_file_rate}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
