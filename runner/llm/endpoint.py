"""Where a provider's requests go: the host and port of its model server, for the GenAI
conventions' `server.address` and `server.port` (runner.observability.spans)."""

from __future__ import annotations

from urllib.parse import urlsplit

# the servers a provider talks to when `llm.api_base` is not given
DEFAULT_BASES = {"openai_like": "https://api.openai.com/v1", "ollama": "http://localhost:11434"}
REMOTE = frozenset(DEFAULT_BASES)
_PORTS = {"http": 80, "https": 443}


def model_server(provider: str, api_base: str | None) -> tuple[str, int | None] | None:
    """(host, port) of the provider's server; None for a provider that runs in process."""
    if provider not in REMOTE:
        return None
    parts = urlsplit(api_base or DEFAULT_BASES[provider])
    if not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:  # a port that is no number: say the host alone
        port = None
    return parts.hostname, port if port is not None else _PORTS.get(parts.scheme)
