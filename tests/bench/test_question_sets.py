"""The retrieval question sets in bench/questions/ (see its README): well-formed rows, gold
sections that exist, and user-worded questions that do not borrow their gold heading's words.

The gold documents are checked against the corpora when they are here: the Python docs at
../shared/data/pydocs/docs, the PostgreSQL 15 manual (fetched with
../shared/data/fetch-pgdocs.sh) at $PGDOCS_HTML, /tmp/pgdocs/html or the bench's download
folder; a check whose corpus is absent is skipped.
"""

from __future__ import annotations

import csv
import os
import re
import tempfile
import unicodedata
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = ROOT / "bench" / "questions"
PYDOCS = ROOT.parent / "shared" / "data" / "pydocs" / "docs"
COLUMNS = ["id", "question", "sources", "tags"]

# set name -> (its corpus, the fewest questions it may hold, worded by users: no heading words)
SETS = {
    "pydocs-users": ("pydocs", 160, True),
    "pgdocs-users": ("pgdocs", 65, True),
    "pydocs-faq-headings": ("pydocs", 100, False),
}


def pgdocs_folder() -> Path | None:
    candidates = [
        os.environ.get("PGDOCS_HTML", ""),
        "/tmp/pgdocs/html",
        str(Path(tempfile.gettempdir()) / "runner-bench-pgdocs" / "html"),
    ]
    for candidate in candidates:
        if candidate and len(list(Path(candidate).glob("*.html"))) > 1000:
            return Path(candidate)
    return None


def corpus_folder(corpus: str) -> Path | None:
    if corpus == "pydocs":
        return PYDOCS if PYDOCS.is_dir() else None
    return pgdocs_folder()


def rows(name: str) -> list[dict[str, str]]:
    with (QUESTIONS / f"{name}.csv").open(encoding="utf-8", newline="") as file:
        return list(csv.DictReader(file))


def sources(row: dict[str, str]) -> list[tuple[str, str]]:
    """(document, heading) of each gold source: `DOCUMENT#HEADING`, several joined by `|`."""
    pairs = []
    for source in row["sources"].split("|"):
        document, _, heading = source.partition("#")
        pairs.append((document, heading))
    return pairs


# --- headings -------------------------------------------------------------------------------

_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")  # three or more of one mark


def rst_headings(text: str) -> list[str]:
    """reST section titles as runner reads them: a line that begins a paragraph, underlined by
    one punctuation character repeated (three times or more, and at least as long as the
    title), optionally overlined by the same."""
    lines = text.splitlines()
    found = []
    i = 0
    while i + 1 < len(lines):
        line, following = lines[i], lines[i + 1]
        starts = i == 0 or not lines[i - 1].strip()
        overlined = starts and _ADORNMENT.match(line) and i + 2 < len(lines)
        if overlined and lines[i + 2].strip() == line.strip() and following.strip():
            found.append(following.strip())
            i += 3
            continue
        if (
            starts
            and line.strip()
            and not line[0].isspace()
            and not _ADORNMENT.match(line)
            and _ADORNMENT.match(following)
            and len(following.rstrip()) >= len(line.rstrip())
        ):
            found.append(line.strip())
            i += 2
            continue
        i += 1
    return found


_INVISIBLE = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff]")  # soft hyphen, zero-width
_SECTION_NUMBER = re.compile(r"^(?:(?:Chapter|Appendix|Part)\s+)?[0-9A-Z]+(?:\.[0-9A-Z]+)*\.\s+")


class _HtmlHeadings(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.open: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if re.fullmatch(r"h[1-6]", tag):
            self.open = []

    def handle_endtag(self, tag: str) -> None:
        if re.fullmatch(r"h[1-6]", tag) and self.open is not None:
            title = unicodedata.normalize("NFKC", "".join(self.open))
            title = " ".join(_INVISIBLE.sub("", title).split())
            if title:
                self.found.append(_SECTION_NUMBER.sub("", title))
            self.open = None

    def handle_data(self, data: str) -> None:
        if self.open is not None:
            self.open.append(data)


def html_headings(text: str) -> list[str]:
    """The text of each h1-h6 element: NFKC-normalised, zero-width characters dropped,
    whitespace collapsed, a leading section number ("11.2.", "Chapter 26.", "F.35.1.") removed."""
    parser = _HtmlHeadings()
    parser.feed(text)
    return parser.found


@cache
def headings(folder: Path, document: str) -> tuple[str, ...]:
    text = (folder / document).read_text(encoding="utf-8")
    return tuple(html_headings(text) if document.endswith(".html") else rst_headings(text))


# --- heading words --------------------------------------------------------------------------

_STOP = """a an the and or not no nor of to in on at by for from with without into onto as about
    than then vs versus via per is are was were be been being do does did done can cant could
    should would will wont shall may might must i me my we our you your it its this that these
    those there here what whats which who whom whose why how when where while if else so but
    just also only too very all any some each every other another one own same such up out off
    over under again isnt arent dont doesnt didnt e g etc"""
STOP_WORDS = frozenset(_STOP.split())
_ROLE = re.compile(r":[a-z]+(?::[a-z]+)*:")  # reST roles: :mod:, :class:, :keyword:, ...


def stem(word: str) -> str:
    """Crude suffix stripping, so that "indexes" meets "index" and "files" meets "file"."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def content_words(text: str) -> set[str]:
    text = _ROLE.sub(" ", text).lower().replace("'", "").replace("\u2019", "")
    return {stem(word) for word in re.findall(r"[a-z0-9]+", text) if word not in STOP_WORDS}


# --- the tests ------------------------------------------------------------------------------


def test_the_stemmer_meets_plural_and_verb_forms() -> None:
    assert content_words("Building Indexes") == content_words("build index")
    assert content_words("files, classes and queries") == content_words("file class query")
    assert content_words(":mod:`json` --- JSON encoder") == {"json", "encoder"}
    assert content_words("How do I strip it?") == {"strip"}


def test_html_headings_drop_section_numbers() -> None:
    text = '<h2 class="title">11.2. Index <span>Types</span></h2><h3>F.35.1.  Trigram\n</h3>'
    assert html_headings(text) == ["Index Types", "Trigram"]
    assert html_headings("<h1>Chapter 26. Backup and Restore</h1><h2>CREATE INDEX</h2>") == [
        "Backup and Restore",
        "CREATE INDEX",
    ]


def test_rst_headings_are_underlined_or_overlined_titles() -> None:
    text = "=====\nTitle\n=====\n\nText.\n\nSection\n-------\n\nNot a title\n---\n"
    assert rst_headings(text) == ["Title", "Section"]


@pytest.mark.parametrize("name", SETS)
def test_rows_are_well_formed(name: str) -> None:
    with (QUESTIONS / f"{name}.csv").open(encoding="utf-8", newline="") as file:
        header = next(csv.reader(file))
    assert header == COLUMNS
    found = rows(name)
    assert len(found) >= SETS[name][1]
    for row in found:
        assert None not in row, f"{row['id']}: more cells than columns"
        assert all((row[column] or "").strip() for column in COLUMNS), f"{row['id']}: a blank cell"
        for document, heading in sources(row):
            assert document and heading, f"{row['id']}: {row['sources']!r} is not DOC#HEADING"
        assert all(tag.strip() for tag in row["tags"].split("|")), f"{row['id']}: a blank tag"
    ids = [row["id"] for row in found]
    assert len(ids) == len(set(ids)), "duplicate ids"


def test_ids_are_unique_across_the_sets() -> None:
    ids = [row["id"] for name in SETS for row in rows(name)]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("name", SETS)
def test_gold_sections_exist(name: str) -> None:
    corpus = SETS[name][0]
    folder = corpus_folder(corpus)
    if folder is None:
        pytest.skip(f"the {corpus} corpus is not downloaded")
    for row in rows(name):
        for document, heading in sources(row):
            assert (folder / document).is_file(), f"{row['id']}: no document {document}"
            assert heading in headings(folder, document), (
                f"{row['id']}: {heading!r} is not a heading of {document}"
            )


@pytest.mark.parametrize("name", [name for name, (_, _, users) in SETS.items() if users])
def test_questions_avoid_the_words_of_their_gold_headings(name: str) -> None:
    offenders = []
    for row in rows(name):
        asked = content_words(row["question"])
        for _, heading in sources(row):
            shared = asked & content_words(heading)
            if shared:
                offenders.append(f"{row['id']}: {sorted(shared)} from {heading!r}")
    assert offenders == []


def test_the_faq_set_is_every_faq_question_heading() -> None:
    if corpus_folder("pydocs") is None:
        pytest.skip("the pydocs corpus is not downloaded")
    wanted = {
        (f"faq/{path.name}", heading)
        for path in (PYDOCS / "faq").glob("*.rst.txt")
        for heading in headings(PYDOCS, f"faq/{path.name}")
        if heading.endswith("?")
    }
    found = rows("pydocs-faq-headings")
    assert {pair for row in found for pair in sources(row)} == wanted
    assert all(sources(row) == [(sources(row)[0][0], row["question"])] for row in found)
