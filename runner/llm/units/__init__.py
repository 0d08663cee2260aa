"""Passages as units — sentences, list items, table rows with their header, records, code with
the sentence that introduces it — and what each means beside a question: the one reading that
the offline answerer (runner.llm.providers), the gatekeeper and a retrieval's excerpts
(runner.retrieval.excerpts) share, apart from any provider.

- `reading`: passage text -> `Unit`s (page labels and citations, headings, code, tables, records);
- `code`, `inline`, `rows`: what `reading` makes of code blocks, inline markup and table rows;
- `meaning`: each unit's cosine with the question, by the corpus's embedding model.
"""
