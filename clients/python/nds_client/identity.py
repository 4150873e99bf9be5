"""Which nds server a client talks to, and with which key: the rule of the `nds` command (decision 0021 of nds;
the TypeScript twin is `src/client/server-identity.ts`).

The URL is the one given in code, else ``NDS_API_URL``, else the one ``nds auth login`` stored, else
``http://localhost:8080``. The key is the one given, else ``NDS_API_KEY``, else the stored one. A key goes only
to the server it belongs to: ``NDS_API_KEY`` not to a URL other than ``NDS_API_URL`` (when that is set), the
stored key only to the stored URL. The credentials file is ``$XDG_CONFIG_HOME/nds/credentials.json``, else
``~/.config/nds/credentials.json`` (written by ``nds auth login``, mode 0600).
"""
from __future__ import annotations

import json
import os
from typing import Mapping, NamedTuple, Optional

DEFAULT_API_URL = "http://localhost:8080"


class ServerIdentity(NamedTuple):
    base_url: str
    api_key: Optional[str]
    #: "given", "NDS_API_URL", "credentials" or "default"
    url_source: str
    #: "given", "NDS_API_KEY", "credentials" or None
    key_source: Optional[str]


def _present(value: Optional[str]) -> Optional[str]:
    return value.strip() if value is not None and value.strip() != "" else None


def _trim(url: str) -> str:
    return url.strip().rstrip("/")


def credentials_file(env: Mapping[str, str]) -> Optional[str]:
    """The credentials file's path; None when neither XDG_CONFIG_HOME nor HOME is set."""
    config_home = _present(env.get("XDG_CONFIG_HOME"))
    if config_home is None:
        home = _present(env.get("HOME"))
        if home is None:
            return None
        config_home = os.path.join(home, ".config")
    return os.path.join(config_home, "nds", "credentials.json")


def read_stored_credentials(path: Optional[str]) -> Optional[dict]:
    """What ``nds auth login`` stored, or None when the file is missing, unreadable or not credentials."""
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            stored = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or not isinstance(stored.get("api_key"), str) or not isinstance(stored.get("api_url"), str):
        return None
    return stored


def resolve_identity(base_url: Optional[str] = None, api_key: Optional[str] = None, env: Optional[Mapping[str, str]] = None) -> ServerIdentity:
    """The server and key by the rule above (``env`` defaults to ``os.environ``)."""
    env = os.environ if env is None else env
    given, env_url = _present(base_url), _present(env.get("NDS_API_URL"))
    given_key, env_key = _present(api_key), _present(env.get("NDS_API_KEY"))
    stored = None
    if (not given and not env_url) or (not given_key and not env_key):
        stored = read_stored_credentials(credentials_file(env))

    if given:
        url, url_source = _trim(given), "given"
    elif env_url:
        url, url_source = _trim(env_url), "NDS_API_URL"
    elif stored:
        url, url_source = _trim(stored["api_url"]), "credentials"
    else:
        url, url_source = DEFAULT_API_URL, "default"

    if given_key:
        return ServerIdentity(url, given_key, url_source, "given")
    if env_key and (not env_url or _trim(env_url) == url):
        return ServerIdentity(url, env_key, url_source, "NDS_API_KEY")
    if stored and _trim(stored["api_url"]) == url:
        return ServerIdentity(url, stored["api_key"], url_source, "credentials")
    return ServerIdentity(url, None, url_source, None)
