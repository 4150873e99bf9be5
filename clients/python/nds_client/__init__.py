"""Client for nds (Neuro Dataset Service): recordings, exact signal windows, window lists, WindowDataset."""
from .client import Client, NdsApiError
from .dataset import WindowDataset

__all__ = ["Client", "NdsApiError", "WindowDataset"]
__version__ = "0.1.0"
