"""Inline markup read as plain text, for quoting: reStructuredText roles and links, Markdown
links and emphasis keep their words; inline code keeps its backticks (reST ``literals`` become
`literals`) and is never cleaned inside (docs/offline.md, "Code")."""

from __future__ import annotations

import re

from runner.llm.units.code import outside_code

_ROLE = re.compile(r":[\w:+-]+:`(?P<tilde>~?)(?P<body>[^`]*?)`")
_LINK_TARGET = re.compile(r"\s*<[^<>`]*>$")
_MD_LINK = re.compile(r"\[(?P<text>[^\[\]\n]+)\]\((?P<url>[^)\s]+)\)")
_DOUBLE_BACKTICK = re.compile(r"``(?P<body>[^`]+)``")
_RST_LINK = re.compile(r"`(?P<body>[^`<]+?)\s*<[^`>]+>`_{1,2}")
_EMPHASIS = re.compile(r"(?<![\w*])(\*\*|\*)(?P<body>[^\s*](?:[^*]*?[^\s*])?)\1(?![\w*])")
_SPACES = re.compile(r"\s+")
_MARKUP = re.compile(r"[`*]|\]\(")  # cheap test: is there any inline markup to clean?


def plain_text(text: str) -> str:
    """Inline markup as plain text: roles, literals, links and emphasis keep their words."""
    if not _MARKUP.search(text):
        return _SPACES.sub(" ", text).strip()
    text = _ROLE.sub(_role_text, text)
    text = _RST_LINK.sub(lambda m: m["body"], text)
    text = _MD_LINK.sub(lambda m: m["text"], text)
    text = _DOUBLE_BACKTICK.sub(lambda m: f"`{m['body']}`", text)
    text = outside_code(text, lambda plain: _EMPHASIS.sub(lambda m: m["body"], plain))
    return _SPACES.sub(" ", text).strip()


def _role_text(match: re.Match[str]) -> str:
    """A role reads as its text: `~object.__new__` as `__new__`, `the FAQ <faq>` as `the FAQ`."""
    body = _LINK_TARGET.sub("", match["body"])
    return body.rsplit(".", 1)[-1] if match["tilde"] else body
