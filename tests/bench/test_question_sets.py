"""The retrieval question sets in bench/questions/ (see its README): well-formed rows, gold
sections that exist, and user-worded questions that do not borrow their gold heading's words
(the Perl FAQ's set: at most one of them).

The gold documents are checked against the corpora when they are here: the Python docs at
../shared/data/pydocs/docs, the PostgreSQL 15 manual (fetched with
../shared/data/fetch-pgdocs.sh) at $PGDOCS_HTML, /tmp/pgdocs/html or the bench's download
folder, the Perl manual (fetched with bench/fetch-perldocs.sh) at $PERLDOCS_HTML,
/tmp/perldocs/html or the bench's download folder, Git's manual (bench/fetch-gitdocs.sh) at
$GITDOCS_HTML, /tmp/gitdocs/html or the bench's download folder; a check whose corpus is absent
is skipped.
"""

from __future__ import annotations

import csv
import os
import re
import tempfile
from functools import cache
from pathlib import Path

import pytest

from bench.perlfaq_headings import heading_rows
from bench.wording import html_headings

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = ROOT / "bench" / "questions"
PYDOCS = ROOT.parent / "shared" / "data" / "pydocs" / "docs"
COLUMNS = ["id", "question", "sources", "tags"]
# the sets in users' words also say what a right answer holds (`runner eval`'s `answer` column)
ANSWERED_COLUMNS = ["id", "question", "sources", "answer", "tags"]

# set name -> (its corpus, the fewest questions it may hold, how many content words of its gold
# heading a question may share: None for the sets that ask the headings themselves)
SETS = {
    "pydocs-users": ("pydocs", 160, 0),
    "pgdocs-users": ("pgdocs", 65, 0),
    "pydocs-faq-headings": ("pydocs", 100, None),
    "perlfaq-users": ("perldocs", 100, 1),
    "perlfaq-headings": ("perldocs", 300, None),
    "gitdocs-users": ("gitdocs", 50, 1),
}
ANSWERED = {name for name, (*_, allowed) in SETS.items() if allowed is not None}
# a downloaded HTML corpus -> (its environment variable, the bench's download folder, the
# fewest HTML files a whole download holds)
DOWNLOADS = {
    "pgdocs": ("PGDOCS_HTML", "runner-bench-pgdocs", 1000),
    "perldocs": ("PERLDOCS_HTML", "runner-bench-perldocs", 200),
    "gitdocs": ("GITDOCS_HTML", "runner-bench-gitdocs", 150),
}


def corpus_folder(corpus: str) -> Path | None:
    if corpus == "pydocs":
        return PYDOCS if PYDOCS.is_dir() else None
    variable, download, fewest = DOWNLOADS[corpus]
    candidates = [
        os.environ.get(variable, ""),
        f"/tmp/{corpus}/html",
        str(Path(tempfile.gettempdir()) / download / "html"),
    ]
    for candidate in candidates:
        if candidate and len(list(Path(candidate).glob("*.html"))) >= fewest:
            return Path(candidate)
    return None


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


@cache
def headings(folder: Path, document: str) -> tuple[str, ...]:
    text = (folder / document).read_text(encoding="utf-8")
    if document.endswith(".html"):
        return tuple(heading for _, heading in html_headings(text))
    return tuple(rst_headings(text))


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
    assert html_headings(text) == [(2, "Index Types"), (3, "Trigram")]
    assert html_headings("<h1>Chapter 26. Backup and Restore</h1><h2>CREATE INDEX</h2>") == [
        (1, "Backup and Restore"),
        (2, "CREATE INDEX"),
    ]


def test_rst_headings_are_underlined_or_overlined_titles() -> None:
    text = "=====\nTitle\n=====\n\nText.\n\nSection\n-------\n\nNot a title\n---\n"
    assert rst_headings(text) == ["Title", "Section"]


@pytest.mark.parametrize("name", SETS)
def test_rows_are_well_formed(name: str) -> None:
    with (QUESTIONS / f"{name}.csv").open(encoding="utf-8", newline="") as file:
        header = next(csv.reader(file))
    assert header == (ANSWERED_COLUMNS if name in ANSWERED else COLUMNS)
    found = rows(name)
    assert len(found) >= SETS[name][1]
    for row in found:
        assert None not in row, f"{row['id']}: more cells than columns"
        assert all((row[column] or "").strip() for column in header), f"{row['id']}: a blank cell"
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


def borrowed_words(name: str, allowed: int) -> list[str]:
    """The set's questions that share more than `allowed` content words with a gold heading."""
    offenders = []
    for row in rows(name):
        asked = content_words(row["question"])
        for _, heading in sources(row):
            shared = asked & content_words(heading)
            if len(shared) > allowed:
                offenders.append(f"{row['id']}: {sorted(shared)} from {heading!r}")
    return offenders


@pytest.mark.parametrize("name", [name for name, (*_, allowed) in SETS.items() if allowed == 0])
def test_questions_avoid_the_words_of_their_gold_headings(name: str) -> None:
    assert borrowed_words(name, 0) == []


@pytest.mark.parametrize("name", [name for name, (*_, allowed) in SETS.items() if allowed == 1])
def test_held_out_questions_share_at_most_one_word_with_their_gold_heading(name: str) -> None:
    assert borrowed_words(name, 1) == []


# --- answer checks ----------------------------------------------------------------------------

_SECTION_NUMBER = re.compile(r"^(?:(?:Chapter|Appendix|Part)\s+)?[0-9A-Z]+(?:\.[0-9A-Z]+)*\.\s+")


def squeezed(text: str) -> str:
    return " ".join(text.split()).casefold()


@cache
def section_texts(folder: Path, document: str) -> dict[str, str]:
    """Each heading of a document (as the sets write it) -> its section's text as runner's
    reader gives it: the heading's blocks up to the next heading of the same or a higher
    level, its subsections included."""
    from runner.retrieval.readers import read_document

    blocks = read_document(folder, folder / document).blocks()
    texts: dict[str, str] = {}
    for at, block in enumerate(blocks):
        if block.heading is None:
            continue
        parts = [block.heading]
        for later in blocks[at + 1 :]:
            if later.heading is not None and later.level <= block.level:
                break
            parts.append(later.heading if later.heading is not None else later.text)
        heading = squeezed(_SECTION_NUMBER.sub("", block.heading))
        texts.setdefault(heading, squeezed("\n".join(parts)))
    return texts


def unanswerable(name: str, folder: Path) -> list[str]:
    """The set's rows whose answer check no gold section holds: no answer drawn from the gold
    could pass such a check."""
    offenders = []
    for row in rows(name):
        wanted = squeezed(row["answer"])
        texts = [
            section_texts(folder, document).get(squeezed(heading), "")
            for document, heading in sources(row)
        ]
        if not any(wanted in text for text in texts):
            offenders.append(f"{row['id']}: {row['answer']!r} is in no gold section")
    return offenders


def test_a_sections_text_holds_its_subsections_up_to_the_next_heading_of_its_level(
    tmp_path: Path,
) -> None:
    (tmp_path / "guide.md").write_text(
        "# Queues\n\nA deque.\n\n## Bounded\n\nmaxlen.\n\n# Stacks\n"
    )
    assert section_texts(tmp_path, "guide.md") == {
        "queues": "queues a deque. bounded maxlen.",
        "bounded": "bounded maxlen.",
        "stacks": "stacks",
    }


@pytest.mark.parametrize("name", sorted(ANSWERED))
def test_every_answer_check_is_held_by_a_gold_section(name: str) -> None:
    folder = corpus_folder(SETS[name][0])
    if folder is None:
        pytest.skip(f"the {SETS[name][0]} corpus is not downloaded")
    assert unanswerable(name, folder) == []


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


def test_the_perlfaq_heading_set_is_every_entry_of_perlfaq1_to_9() -> None:
    folder = corpus_folder("perldocs")
    if folder is None:
        pytest.skip("the perldocs corpus is not downloaded")
    assert rows("perlfaq-headings") == heading_rows(folder)


def test_perlfaq_user_questions_are_about_every_faq_file() -> None:
    documents = {document for row in rows("perlfaq-users") for document, _ in sources(row)}
    assert documents == {f"perlfaq{number}.html" for number in range(1, 10)}
