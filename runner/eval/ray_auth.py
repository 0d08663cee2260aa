"""Ray's token authentication for `runner eval --ray ADDRESS`.

Ray 2.52 added token authentication, and Ray 2.59 turned it on by default for clusters it
starts on one machine (`ray start`, a local `ray.init()`): such a cluster refuses a driver that
sends no token ("InvalidAuthToken … Failed to connect to Ray cluster"). A driver sends one only
when `RAY_AUTH_MODE=token` is in its environment when Ray is imported; the token itself comes
from Ray's standard places, in Ray's order: `RAY_AUTH_TOKEN`, the file `RAY_AUTH_TOKEN_PATH`
names, or `~/.ray/auth_token` (where `ray start` and `ray get-auth-token --generate` put it).

So before Ray is imported, a run whose environment leaves `RAY_AUTH_MODE` unset but holds a
token in one of those places sets `RAY_AUTH_MODE=token`: a cluster without authentication takes
a driver that sends a token as well (it reads none), so nothing is lost. `RAY_AUTH_MODE` set by
the user — `disabled` included — is left as it is.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path

MODE = "RAY_AUTH_MODE"
TOKEN = "RAY_AUTH_TOKEN"
TOKEN_PATH = "RAY_AUTH_TOKEN_PATH"


def default_token_file() -> Path:
    return Path.home() / ".ray" / "auth_token"


def token_source(environ: MutableMapping[str, str] = os.environ) -> str | None:
    """Where Ray will read the token from, in Ray's order, or None when there is none."""
    if environ.get(TOKEN, "").strip():
        return TOKEN
    if environ.get(TOKEN_PATH, "").strip():
        return f"{TOKEN_PATH} ({environ[TOKEN_PATH]})"
    if default_token_file().is_file():
        return str(default_token_file())
    return None


def prepare(environ: MutableMapping[str, str] = os.environ) -> None:
    """Ask Ray for token authentication when a token is at hand and the user chose no mode.
    Call it before Ray is imported: Ray reads the mode then."""
    if environ.get(MODE, "").strip():
        return
    if token_source(environ) is not None:
        environ[MODE] = "token"


def refused_message(address: str, error: BaseException, environ: MutableMapping[str, str]) -> str:
    """Why a cluster could not be reached, with what to do about a token."""
    source = token_source(environ)
    mode = environ.get(MODE, "") or "unset"
    if source is None:
        about_token = (
            "no Ray token was found (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH, ~/.ray/auth_token): "
            "if the cluster uses token authentication (Ray 2.59+ turns it on for clusters "
            "`ray start` starts), give its token in RAY_AUTH_TOKEN — `ray get-auth-token` on "
            "the head node prints it"
        )
    else:
        about_token = (
            f"the token came from {source} (RAY_AUTH_MODE {mode}); if the cluster refused it, "
            "give the cluster's own token (`ray get-auth-token` on the head node prints it)"
        )
    return f"cannot connect to the Ray cluster at {address} ({error}): {about_token}"
