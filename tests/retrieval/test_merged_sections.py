"""A small section merged with the next keeps its heading findable (runner.retrieval.pages):
the page lists every section it holds in `headings`, search counts them as headings, and the
answer's sources, the retrieval records, an eval's gold `doc#heading` and a test's expected
source heading find the page by any of them."""

from __future__ import annotations

from pathlib import Path

from runner.eval.model import Gold
from runner.retrieval import open_corpus
from runner.retrieval.pages import Document, paginate
from runner.retrieval.seen import ranked
from runner.sources import Source
from runner.testing.expect import _same_source
from runner.testing.model import SourceExpect

from .conftest import folder_pipeline

PROSE = " ".join(["The relay forwards each frame to the upstream host unchanged."] * 3)
# a heading and one line of code, then a section of its own: the two share a page
GUIDE = f"""# Relay guide

## Tunnel upgrade (version 3 and later)

```
RelayTunnel on
```

## Forwarding frames

{PROSE}
"""


def guide_pages(text: str = GUIDE) -> list:
    return paginate(Document("relay.md", text), max_words=250)


def test_a_small_section_merged_with_the_next_lists_both_headings() -> None:
    (page,) = guide_pages()
    assert page.heading == "Forwarding frames"
    assert page.headings == ("Tunnel upgrade (version 3 and later)", "Forwarding frames")


def test_a_heading_right_above_another_encloses_it_and_is_not_listed() -> None:
    (page,) = guide_pages(f"# Relay guide\n\n## Forwarding frames\n\n{PROSE}")
    assert page.headings == ()
    assert page.path == ("Relay guide", "Forwarding frames")


def test_a_page_of_one_section_lists_no_headings() -> None:
    pages = guide_pages(f"# Guide\n\n## One\n\n{PROSE}\n\n## Two\n\n{PROSE}")
    assert [page.headings for page in pages] == [(), ()]


def test_the_tail_of_a_long_section_merged_with_the_next_names_both() -> None:
    # three pages' worth, and a tail of two words left for a page of its own
    long_section = "\n\n".join(" ".join([f"w{i}"] * 50) for i in range(3)) + "\n\nShort tail."
    pages = paginate(
        Document("m.md", f"# A\n\n## Long\n\n{long_section}\n\n## Next\n\n{PROSE}"), 100
    )
    last = pages[-1]
    assert last.text.startswith("Short tail.")
    assert last.heading == "Next" and last.headings == ("Long", "Next")


def test_a_merged_page_s_source_carries_its_headings() -> None:
    (page,) = guide_pages()
    source = page.source.to_json()
    assert source["heading"] == "Forwarding frames"
    assert source["headings"] == ["Tunnel upgrade (version 3 and later)", "Forwarding frames"]
    assert Source.from_json(source) == page.source  # and stays hashable
    assert hash(Source.from_json(source))


def test_a_page_of_one_section_has_no_headings_in_its_source() -> None:
    page = guide_pages(f"# Guide\n\n## One\n\n{PROSE}")[0]
    assert "headings" not in page.source.to_json()


def test_the_retrieval_record_of_a_merged_page_lists_its_headings() -> None:
    (page,) = guide_pages()
    (row,) = ranked([page])
    assert row["headings"] == list(page.headings)
    single = guide_pages(f"# Guide\n\n## One\n\n{PROSE}")[0]
    assert "headings" not in ranked([single])[0]


def test_an_eval_gold_heading_matches_the_small_section_on_a_merged_page() -> None:
    (page,) = guide_pages()
    row = ranked([page])[0]
    assert Gold("relay.md", "Tunnel upgrade (version 3 and later)").matches(row)
    assert Gold("relay.md", "Forwarding frames").matches(row)
    assert not Gold("relay.md", "Relay guide").matches(row)
    assert Gold("relay.md", "Tunnel upgrade (version 3 and later)").matches(page.source.to_json())


def test_a_test_s_expected_source_heading_matches_the_small_section() -> None:
    (page,) = guide_pages()
    wanted = SourceExpect("relay.md", None, "tunnel upgrade (version 3 and later)")
    assert _same_source(wanted, page.source.to_json())


def test_search_counts_the_small_section_s_heading_as_a_heading(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "relay.md").write_text(GUIDE, "utf-8")
    # the same words on one page of one section, the small heading written as a line of its
    # text: only a heading counts once more
    plain = GUIDE.replace("## Tunnel upgrade", "## Forwarding frames\n\nTunnel upgrade", 1)
    plain = plain.replace("\n\n## Forwarding frames\n\n" + PROSE, "\n\n" + PROSE)
    (folder / "plain.md").write_text(plain, "utf-8")
    index = open_corpus(folder_pipeline(tmp_path, folder), "docs")
    hits = index.search("tunnel upgrade version 3", 2)
    assert [hit.page.document for hit in hits] == ["relay.md", "plain.md"]
    assert hits[0].score > hits[1].score * 1.2
    assert hits[0].page.headings[0] == "Tunnel upgrade (version 3 and later)"  # as stored


RELAY_HTML = """<html><head><title>Relay guide</title></head><body>
<div id="page-header"><p class="menu"><a href="m.html">Modules</a> |
<a href="d.html">Directives</a></p></div>
<div id="page-content"><h1>Relay guide</h1>
<div class="section"><h2><a id="tunnel">Tunnel upgrade (version 3 and later)</a>
<a class="permalink" href="#tunnel">&para;</a></h2><pre>RelayTunnel on</pre></div>
<div class="section"><h2><a id="fwd">Forwarding frames</a>
<a class="permalink" href="#fwd">&para;</a></h2>
<p>The relay forwards each frame to the upstream host unchanged, and it keeps the frame order
that the client sent.</p></div></div>
<div id="footer"><p class="menu"><a href="m.html">Modules</a></p></div>
</body></html>"""


def test_a_run_over_an_html_manual_cites_the_merged_page_by_both_headings(tmp_path: Path) -> None:
    import json

    import yaml
    from click.testing import CliRunner

    from runner.cli import main
    from runner.trace import schema_problems, validate_events

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "relay.html").write_text(RELAY_HTML, "utf-8")
    pipeline = {
        "version": 1,
        "domain": "relay",
        "corpora": {"manual": {"path": "docs"}},
        "retrieval_tool": "manual_rag",
        "tools": [{"name": "manual_rag", "kind": "retrieve", "corpus": "manual", "top_k": 2}],
    }
    path = tmp_path / "relay.yaml"
    path.write_text(yaml.safe_dump(pipeline), "utf-8")
    trace = tmp_path / "trace.jsonl"
    question = "How do I turn on the tunnel upgrade?"
    result = CliRunner().invoke(main, ["run", str(path), question, "--json", "--trace", str(trace)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert schema_problems("result", data, "result") == []
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert validate_events(events) == []
    (page,) = data["retrieval"][0]["pages"]
    assert page["heading"] == "Forwarding frames"
    assert page["headings"] == ["Tunnel upgrade (version 3 and later)", "Forwarding frames"]
    assert Gold("relay.html", "Tunnel upgrade (version 3 and later)").matches(page)
    (source,) = data["sources"]
    assert source["headings"] == page["headings"]
    assert "Modules" not in result.stdout and "¶" not in result.stdout
