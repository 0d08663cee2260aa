"""The playground's view of `runner eval` runs: a served pipeline's runs (those written to its
`.runner/eval/`), each run's report as `runner eval` wrote it, and the traces it links to.

    /playground/{domain}/evals/                   the runs, newest first, with their metrics
    /playground/{domain}/evals/{run}/             the run's report.html
    /playground/{domain}/evals/{run}/traces/{f}   a question's trace (JSON Lines)

Names in the path are hostile: a run or a trace is found by listing the folder, never by
joining what the request says onto a path. The report is served with a policy that lets it load
nothing (it needs nothing: its styles and plots are inline).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from runner.playground import PREFIX
from runner.service.errors import ServiceError

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.routing import BaseRoute

    from runner.service.pipelines import Service

# the report's styles are inline, its plots inline SVG: it may load nothing else
REPORT_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
MAX_LISTED = 200


class Evals:
    def __init__(self, service: Service) -> None:
        self.service = service

    def routes(self) -> list[BaseRoute]:
        base = f"{PREFIX}/{{domain}}/evals"
        return [
            Route(base + "/", self.index),
            Route(base + "/{run}/", self.report),
            Route(base + "/{run}/traces/{name}", self.trace),
        ]

    def _runs(self, domain: str) -> dict[str, Path]:
        """The domain's run folders by name (ServiceError for an unknown domain)."""
        root = self.service.runtime(domain).pipeline.state_folder / "eval"
        if not root.is_dir():
            return {}
        return {folder.name: folder for folder in root.iterdir() if folder.is_dir()}

    def _run(self, request: Request) -> Path | Response:
        domain = str(request.path_params["domain"])
        try:
            runs = self._runs(domain)
        except ServiceError as error:
            return PlainTextResponse(error.message, status_code=error.status)
        folder = runs.get(str(request.path_params["run"]))
        if folder is None:
            return PlainTextResponse(f"no evaluation run of {domain} by that name", 404)
        return folder

    async def index(self, request: Request) -> Response:
        domain = str(request.path_params["domain"])
        try:
            runs = self._runs(domain)
        except ServiceError as error:
            return PlainTextResponse(error.message, status_code=error.status)
        rows = [_row(name, folder) for name, folder in sorted(runs.items(), reverse=True)]
        return HTMLResponse(_index_page(domain, rows[:MAX_LISTED]))

    async def report(self, request: Request) -> Response:
        folder = self._run(request)
        if isinstance(folder, Response):
            return folder
        report = folder / "report.html"
        if not report.is_file():
            return PlainTextResponse("this run has no report (it ran with --no-report)", 404)
        headers = {"Content-Security-Policy": REPORT_POLICY}
        return HTMLResponse(report.read_text(encoding="utf-8"), headers=headers)

    async def trace(self, request: Request) -> Response:
        folder = self._run(request)
        if isinstance(folder, Response):
            return folder
        traces = folder / "traces"
        wanted = str(request.path_params["name"])
        found = {path.name: path for path in traces.glob("*.jsonl")} if traces.is_dir() else {}
        if wanted not in found:
            return PlainTextResponse("no trace by that name in this run", 404)
        return PlainTextResponse(found[wanted].read_text(encoding="utf-8"))


def _row(name: str, folder: Path) -> dict[str, Any]:
    try:
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"name": name, "finished": False, "metrics": {}}
    metrics = summary.get("metrics") if isinstance(summary, dict) else None
    return {"name": name, "finished": True, "metrics": metrics if isinstance(metrics, dict) else {}}


def _index_page(domain: str, rows: list[dict[str, Any]]) -> str:
    shown = ("questions", "hit@1", "hit@k", "mrr", "sourced", "checks", "groundedness", "relevance")
    head = "".join(f"<th>{name}</th>" for name in shown) + "<th>errors</th>"
    body = []
    for row in rows:
        name = html.escape(row["name"])
        link = f'<a href="{name}/">{name}</a>' if row["finished"] else f"{name} (unfinished)"
        cells = "".join(f"<td>{_cell(row['metrics'].get(key))}</td>" for key in shown)
        body.append(f"<tr><td>{link}</td>{cells}<td>{_errors(row['metrics'])}</td></tr>")
    table = "".join(body) or f'<tr><td colspan="{len(shown) + 2}">no run yet</td></tr>'
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Evaluations · {html.escape(domain)}</title>"
        "<style>body{font:14px system-ui,sans-serif;margin:2rem}td,th{padding:.2rem .6rem;"
        "text-align:right}td:first-child,th:first-child{text-align:left}</style></head><body>"
        f"<h1>Evaluations of {html.escape(domain)}</h1>"
        f"<p>Runs of <code>runner eval</code> on this pipeline, newest first. "
        f'<a href="../">Back to the chat</a></p>'
        f"<table><tr><th>run</th>{head}</tr>{table}</table></body></html>"
    )


def _errors(metrics: dict[str, Any]) -> str:
    """How many questions ended in an error (a run with crashed questions must not look
    ordinary): the share times the questions asked."""
    share, questions = metrics.get("errors"), metrics.get("questions")
    if not isinstance(share, (int, float)) or not isinstance(questions, int):
        return "–"
    count = round(share * questions)
    return f'<b class="errors">{count}</b>' if count else "0"


def _cell(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "–"
    return f"{value:g}" if isinstance(value, int) else f"{value:.3f}"


def eval_routes(service: Service) -> list[BaseRoute]:
    """The routes, to put before the playground's own (whose mount would answer 404 first)."""
    return Evals(service).routes()
