"""What a page's vector is of, on the real model: a directive's page embedded by its heading and
lead prose (runner/retrieval/lead.py) lands nearer to questions about its subject than the same
page embedded from its first line, a "See also" list and a summary table included. The page is
written for this test in the shape of a server manual's directive pages."""

from __future__ import annotations

import numpy as np

from runner.retrieval.pages import Page
from runner.retrieval.vectors import embedded_text

DIRECTIVE = """### See also

- `BannerFooter`
- `BannerLanguage`
- `HeaderCase`
- [Hardening the gateway](hardening.html)
- [Response headers](headers.html)

## BannerDetail Directive

| Description: | Chooses how much the gateway tells clients about itself in its reply header |
| Syntax: | `BannerDetail Least/Some/Most/Full` |
| Default: | `BannerDetail Full` |
| Context: | gateway config |
| Status: | Core |
| Module: | core |

This directive decides whether the identification header the gateway sends back with every \
reply names only the product, or also its version, its operating system and the add-ons built \
into it. Reveal less to give attackers less to go on.

```
BannerDetail Least
```"""

QUESTIONS = [
    "how do I stop the gateway from revealing its version number to clients",
    "hide the operating system and version in the reply header",
    "what does BannerDetail do",
]


def test_a_directive_page_s_vector_is_nearer_its_subject_than_its_whole_opening(embedder) -> None:
    page = Page(
        "gateway.html#3", "gateway.html", 3, "Gateway core", "BannerDetail Directive", DIRECTIVE
    )
    whole = f"{page.title} › {page.heading}\n{page.text}"  # what a vector was of before
    lead = embedded_text(page)
    assert "BannerFooter" not in lead and "Syntax" not in lead  # the boilerplate is left out
    before, after = embedder.embed([whole, lead])
    questions = embedder.embed(QUESTIONS)
    gains = questions @ after - questions @ before
    assert np.all(gains > 0), gains
    assert float(np.mean(gains)) > 0.02, gains
