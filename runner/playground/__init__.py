"""The playground: a web page where a domain author tries a pipeline, sees why, and keeps the
conversation as a test (`runner serve --playground`, `runner playground PIPELINE`).

Server-rendered HTML (Jinja, `templates/`) mounted at /playground in `runner serve`'s app and
calling the same service as the HTTP API; htmx and mermaid are vendored in `static/`. The pieces
are plain modules a reader finds by name: `why` (a round's task tree and LLM timeline),
`citations` (an answer's sources, the cited page highlighted), `keep` (a conversation as a
`runner test` case), `health` (`runner validate` and `runner explain` of the served file) and
`routes` (the pages).
"""

from __future__ import annotations

PREFIX = "/playground"
