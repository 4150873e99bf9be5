import collections
import json
import os

import numpy as np
import pytest

from nds_client import Client, NdsApiError, WindowDataset

UNIT = {"uV": 1e-6, "µV": 1e-6, "μV": 1e-6, "mV": 1e-3, "V": 1.0, "nV": 1e-9}


def test_list_recordings_and_visibility(server):
    client = Client(server["url"])
    recordings = client.list_recordings(dataset=server["dataset"])
    assert sorted(r["path"] for r in recordings) == sorted(server["sources"])
    assert client.list_recordings(dataset=server["private_dataset"]) == []
    assert len(Client(server["url"], server["key"]).list_recordings(dataset=server["private_dataset"])) == 1
    with pytest.raises(NdsApiError) as refused:
        client.read_window(server["private_dataset"], "x.edf", 0, 1)
    assert refused.value.status == 404


def test_windows_equal_mne(server):
    mne = pytest.importorskip("mne")
    client = Client(server["url"])
    readers = {"edf": mne.io.read_raw_edf, "bdf": mne.io.read_raw_bdf, "vhdr": mne.io.read_raw_brainvision, "set": mne.io.read_raw_eeglab}
    for recording in client.list_recordings(dataset=server["dataset"]):
        source = server["sources"][recording["path"]]
        raw = readers[source.rsplit(".", 1)[-1]](source, preload=False, verbose="error")
        group = recording["groups"][0]
        picks = group["channels"][:8]
        start, count = 50, min(500, group["n_samples"] - 50)
        labels = [c["label"] for c in picks]
        x64 = client.read_window(server["dataset"], recording["path"], start, count, channels=labels, dtype="float64")
        x32 = client.read_window(server["dataset"], recording["path"], start, count, channels=labels)
        assert x64.dtype == np.float64 and x32.dtype == np.float32 and x64.shape == (len(labels), count)
        scale = np.array([UNIT.get(c["unit"], 1.0) for c in picks])[:, None]
        expected = raw.get_data(picks=labels, start=start, stop=start + count) / scale
        magnitude = np.max(np.abs(expected))
        assert np.max(np.abs(x64 - expected)) <= magnitude * 1e-9, recording["path"]
        assert np.allclose(x32, expected.astype(np.float32), rtol=2e-7, atol=magnitude * 1e-7), recording["path"]
        assert np.array_equal(x32, x64.astype(np.float32))


def test_list_windows_is_deterministic(server):
    client = Client(server["url"])
    body = {"recordings": {"dataset": server["dataset"]}, "fixed": {"length_s": 0.5}, "split": {"by": "subject", "fractions": {"train": 0.5, "valid": 0.25, "test": 0.25}, "seed": 3}}
    a, b = client.list_windows(body), client.list_windows(body)
    assert a["hash"] == b["hash"] and a["windows"] == b["windows"]
    splits = collections.defaultdict(set)
    for w in a["windows"]:
        splits[w["subject"]].add(w["split"])
    assert all(len(s) == 1 for s in splits.values())


def _windows(server):
    return Client(server["url"]).list_windows({"recordings": {"dataset": server["dataset"], "datatype": "eeg"}, "fixed": {"length_s": 0.25}, "modality": "eeg"})["windows"]


def test_dataset_without_workers_yields_every_window_in_order(server, tmp_path):
    windows = _windows(server)
    dataset = WindowDataset(windows, Client(server["url"]), channels=None, prefetch=4, cache_dir=str(tmp_path))
    seen = [example["index"] for example in dataset]
    assert seen == list(range(len(windows)))
    cached = len(os.listdir(tmp_path))
    assert cached == len(windows)
    first = next(iter(dataset))
    assert first["x"].shape == (first["x"].shape[0], windows[0]["n_samples"])


def test_merged_reads_equal_one_request_a_window(server):
    windows = _windows(server)
    merged = list(WindowDataset(windows, Client(server["url"]), channel_type="EEG", merge=32))
    single = list(WindowDataset(windows, Client(server["url"]), channel_type="EEG", merge=1))
    assert [e["index"] for e in merged] == [e["index"] for e in single] == list(range(len(windows)))
    for a, b in zip(merged, single):
        assert a["x"].shape == b["x"].shape and np.array_equal(a["x"], b["x"])


@pytest.mark.parametrize("start_method", ["spawn", "fork"])
def test_dataloader_with_two_workers_yields_every_window_once_per_epoch(server, start_method):
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    windows = _windows(server)
    assert len(windows) > 20
    # The recordings have different montages: read every EEG channel of each.
    dataset = WindowDataset(windows, Client(server["url"]), channel_type="EEG", prefetch=3)
    loader = DataLoader(dataset, batch_size=None, num_workers=2, multiprocessing_context=start_method, persistent_workers=True)
    for _epoch in range(2):
        counts = collections.Counter()
        for example in loader:
            counts[int(example["index"])] += 1
            assert isinstance(example["x"], torch.Tensor)
        assert sorted(counts) == list(range(len(windows)))
        assert set(counts.values()) == {1}


def _private_windows(client, server):
    return client.list_windows({"recordings": {"dataset": server["private_dataset"]}, "fixed": {"length_s": 0.25}})["windows"]


def test_window_dataset_reads_a_private_dataset_with_the_key_of_its_client_in_every_worker(server):
    # The loader once took its own api_key: a worker then read a private dataset without one (404).
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    client = Client(server["url"], api_key=server["key"])
    windows = _private_windows(client, server)
    assert len(windows) > 0
    loader = DataLoader(WindowDataset(windows, client, channel_type="EEG"), batch_size=8, num_workers=2, multiprocessing_context="spawn")
    batches = list(loader)
    assert len(batches) > 0 and sum(int(b["x"].shape[0]) for b in batches) == len(windows)
    assert all(isinstance(b["x"], torch.Tensor) for b in batches)


def _clean_env(monkeypatch, tmp_path):
    for name in ("NDS_API_URL", "NDS_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))


def _store_credentials(tmp_path, url, key):
    folder = tmp_path / "nds"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "credentials.json").write_text(json.dumps({"api_url": url + "/", "api_key": key, "saved_at": "2026-11-27T00:00:00Z"}))


def test_client_takes_url_and_key_from_the_environment_then_the_stored_credentials(server, monkeypatch, tmp_path):
    _clean_env(monkeypatch, tmp_path)
    bare = Client()
    assert (bare.base_url, bare.api_key, bare.url_source, bare.key_source) == ("http://localhost:8080", None, "default", None)

    _store_credentials(tmp_path, server["url"], server["key"])
    stored = Client()
    assert (stored.base_url, stored.url_source, stored.key_source) == (server["url"], "credentials", "credentials")
    assert len(stored.list_recordings(dataset=server["private_dataset"])) == 1
    assert len(_private_windows(stored, server)) > 0

    monkeypatch.setenv("NDS_API_URL", server["url"])
    monkeypatch.setenv("NDS_API_KEY", "nds_wrong")
    env = Client()
    assert (env.url_source, env.key_source, env.api_key) == ("NDS_API_URL", "NDS_API_KEY", "nds_wrong")
    given = Client(server["url"], api_key=server["key"])
    assert given.key_source == "given" and len(given.list_recordings(dataset=server["private_dataset"])) == 1

    # A key goes only to its own server: neither NDS_API_KEY nor the stored key to another URL.
    other = Client("http://127.0.0.1:9")
    assert other.api_key is None


def test_window_dataset_without_a_client_finds_the_stored_credentials(server, monkeypatch, tmp_path):
    _clean_env(monkeypatch, tmp_path)
    _store_credentials(tmp_path, server["url"], server["key"])
    windows = _private_windows(Client(), server)
    assert len(list(WindowDataset(windows, channel_type="EEG"))) == len(windows)
    with pytest.raises(TypeError):
        WindowDataset(windows, server["url"])


def test_an_empty_window_list_raises_with_the_event_types_the_recordings_have(server):
    from nds_client import EmptyWindowListError, WindowListWarning

    client = Client(server["url"])
    body = {"recordings": {"dataset": server["dataset"]}, "events": {"mapping": {"standard": 0, "target": 1}, "length_s": 0.5}}
    with pytest.raises(EmptyWindowListError) as empty:
        client.list_windows(body)
    assert '"left"' in str(empty.value) and '"right"' in str(empty.value)
    assert client.list_windows(body, allow_empty=True)["windows"] == []
    with pytest.raises(ValueError):
        WindowDataset([], client)
    # One subject split three ways by subject: a warning for each empty split.
    with pytest.warns(WindowListWarning, match='Split "'):
        client.list_windows({"recordings": {"dataset": server["dataset"], "subject": "01"}, "fixed": {"length_s": 0.5},
                             "split": {"by": "subject", "fractions": {"train": 0.7, "valid": 0.15, "test": 0.15}}})


def test_integer_labels_stay_integers_and_become_y(server):
    client = Client(server["url"])
    windows = client.list_windows({"recordings": {"dataset": server["dataset"], "subject": "01"}, "events": {"mapping": {"left": 0, "right": 1}, "length_s": 0.25}})["windows"]
    assert [w["label"] for w in windows] == [0, 1]
    examples = list(WindowDataset(windows, client, channel_type="EEG"))
    assert [e["y"] for e in examples] == [0, 1] and all(isinstance(e["y"], int) for e in examples)
