"""Writes bench/questions/perlfaq-headings.csv: every entry of the Perl FAQ (each `=head2` of
perlfaq1-perlfaq9, an `h2` once converted by bench/fetch-perldocs.sh) asked in its own words,
its gold that same section.

    bash bench/fetch-perldocs.sh /tmp/perldocs
    python -m bench.perlfaq_headings /tmp/perldocs/html
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from bench.wording import QUESTIONS, html_headings

NAME = "perlfaq-headings"
# the topic of each FAQ file (its NAME line), as the row's tags
TOPICS = {
    1: "general",
    2: "obtaining",
    3: "tools",
    4: "data",
    5: "files",
    6: "regexes",
    7: "language",
    8: "system",
    9: "web",
}


def heading_rows(html: Path) -> list[dict[str, str]]:
    """The set's rows, in file order: id, question, sources, tags."""
    rows: list[dict[str, str]] = []
    for number, topic in TOPICS.items():
        document = f"perlfaq{number}.html"
        text = (html / document).read_text(encoding="utf-8")
        for level, heading in html_headings(text):
            if level == 2:
                rows.append(
                    {
                        "id": f"plfaq-{len(rows) + 1:03d}",
                        "question": heading,
                        "sources": f"{document}#{heading}",
                        "tags": f"faq|{topic}",
                    }
                )
    return rows


def write(rows: list[dict[str, str]], path: Path) -> None:
    with path.open("w", encoding="utf-8", newline="") as file:
        writer = csv.DictWriter(file, ["id", "question", "sources", "tags"], lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        raise SystemExit(f"usage: python -m bench.perlfaq_headings HTML_DIR\n{__doc__}")
    html = Path(argv[0])
    if not (html / "perlfaq1.html").is_file():
        raise SystemExit(f"{html}: no perlfaq1.html; run bash bench/fetch-perldocs.sh DIR first")
    rows = heading_rows(html)
    write(rows, QUESTIONS / f"{NAME}.csv")
    print(f"{QUESTIONS / NAME}.csv: {len(rows)} questions")


if __name__ == "__main__":
    main(sys.argv[1:])
