"""`runner explain`, as plain functions that return data; `runner/cli/explain.py` only prints.

- `overview`: the tools as table rows, each coordinator's plan and the deep fallback;
- `calls`: the worst-case LLM calls per question along each path through the pipeline, over
  `paths` (the paths and what the count knows of the pipeline) and `walk` (the calls along one
  path, purpose by purpose);
- `mermaid`: the coordinators, their subtask templates and forced tools as a flowchart;
- `render`: all of it as rich text or as one JSON object;
- `session`: why a stored session did what it did, round by round.

Everything here reads the typed pipeline model only: no pipeline code is imported, no tool is
built, no LLM is called, and llama-index is never imported.
"""
