"""Client for nds (Neuro Dataset Service): recordings, exact signal windows, window lists, WindowDataset."""
from .client import Client, EmptyWindowListError, NdsApiError, WindowListWarning
from .dataset import WindowDataset
from .identity import DEFAULT_API_URL, resolve_identity

__all__ = ["Client", "DEFAULT_API_URL", "EmptyWindowListError", "NdsApiError", "WindowDataset", "WindowListWarning", "resolve_identity"]
__version__ = "0.1.0"
