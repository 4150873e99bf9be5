"""Compares a window nds answered (.npy, physical units of the file) with MNE's reading of the same source file.

Usage: mne_compare.py <source file> <nds.npy> <start_sample> <comma-separated labels> <comma-separated units>
Prints JSON: the shapes, the largest difference relative to the largest magnitude, and whether every value
equals MNE's rounded to float32.
"""
import json
import sys

import mne
import numpy as np

source, nds_path, start, labels, units = sys.argv[1:6]
start = int(start)
labels = labels.split(',')
units = units.split(',')
ext = source.rsplit('.', 1)[-1].lower()
reader = {'edf': mne.io.read_raw_edf, 'bdf': mne.io.read_raw_bdf, 'vhdr': mne.io.read_raw_brainvision, 'set': mne.io.read_raw_eeglab}[ext]
raw = reader(source, preload=False, verbose='error')
nds = np.load(nds_path)
stop = start + nds.shape[1]
mne_volts = raw.get_data(picks=labels, start=start, stop=stop)
factor = {'uV': 1e-6, 'µV': 1e-6, 'μV': 1e-6, 'mV': 1e-3, 'V': 1.0, 'nV': 1e-9}
scale = np.array([factor.get(u, 1.0) for u in units])[:, None]
expected = mne_volts / scale
magnitude = max(float(np.max(np.abs(expected))), 1e-30)
difference = float(np.max(np.abs(nds.astype(np.float64) - expected)))
print(json.dumps({
    'nds_shape': list(nds.shape),
    'mne_shape': list(expected.shape),
    'relative_difference': difference / magnitude,
    'equal_at_float32': bool(np.array_equal(nds.astype(np.float32), expected.astype(np.float32))),
    'close_at_float32': bool(np.allclose(nds.astype(np.float32), expected.astype(np.float32), rtol=2e-7, atol=magnitude * 1e-7)),
}))
