"""The playground's HTML: a Jinja environment over `templates/`, and the small helpers the
templates call (links, labels). Every page is complete server-rendered HTML; htmx (vendored in
`static/`) only boosts links and forms so that a conversation does not reload the page."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape

from runner.playground import PREFIX
from runner.playground.why import REASON_TEXT
from runner.render import source_label

HERE = Path(__file__).parent
STATIC = HERE / "static"


def url(*parts: object, **query: object) -> str:
    """A playground path: `url("support", "sessions", sid)`; None-valued query keys left out."""
    path = "/".join([PREFIX, *(str(part).strip("/") for part in parts)])
    shown = {key: value for key, value in query.items() if value is not None}
    return path + (("?" + urlencode(shown)) if shown else "")


def source_url(domain: str, source: Mapping[str, Any], session: str, round_no: int) -> str:
    return url(
        domain,
        "source",
        document=source["document"],
        page=source.get("page"),
        heading=source.get("heading"),
        session=session,
        round=round_no,
    )


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        url=url,
        source_url=source_url,
        source_label=source_label,
        reason_text=REASON_TEXT,
    )
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
