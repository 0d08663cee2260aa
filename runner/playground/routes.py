"""The playground's routes, mounted at /playground in `runner serve`'s ASGI app.

Every page reads and runs rounds through the same `Service` as the HTTP API: a round asked here
is a round of the service's session store, visible to `GET /v1/sessions/{id}` and `runner
explain --session`. Forms post and redirect (so reloading never re-sends a message), and every
page reads without JavaScript.

    GET  /playground/                                  the served pipelines
    GET  /playground/{domain}/?session=ID              the chat (a new session without `session`)
    POST /playground/{domain}/say                      one round; back to the chat
    POST /playground/{domain}/say/stream               … its answer streamed (streaming.py)
    GET  /playground/{domain}/sessions/{id}/rounds/{n} why the round did what it did
    GET  /playground/{domain}/source?document=…&page=… the cited page, highlighted
    GET  /playground/{domain}/sessions/{id}/keep       the conversation as a test case, to review
    POST /playground/{domain}/sessions/{id}/keep       … written beside the pipeline
    GET  /playground/{domain}/sessions/{id}/kept?name= … as written, and run by `runner test`
    GET  /playground/{domain}/health                   `runner validate` and `runner explain`
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from runner.playground import health, keep
from runner.playground.citations import SourceNotFoundError, cited_segments, quote_of, source_page
from runner.playground.pages import PREFIX, STATIC, render, url
from runner.playground.recording import ReplyLog, install, provider_name
from runner.playground.streaming import recorded_round, round_location, streamed_say
from runner.playground.why import round_view
from runner.serve.errors import ServiceError

if TYPE_CHECKING:
    from runner.serve.service import Service


class Playground:
    """The handlers, over one service."""

    def __init__(self, service: Service) -> None:
        self.service = service
        # a real model's replies, recorded for keeping a conversation as a test
        self.replies = ReplyLog()
        self.recorded = {domain: install(rt) for domain, rt in service.runtimes.items()}

    def routes(self) -> list[BaseRoute]:
        return [
            Mount(
                PREFIX,
                routes=[
                    Route("/", self.index),
                    Mount("/static", StaticFiles(directory=STATIC), name="static"),
                    Route("/{domain}/", self.chat),
                    Route("/{domain}/say", self.say, methods=["POST"]),
                    Route("/{domain}/say/stream", self.say_streamed, methods=["POST"]),
                    Route("/{domain}/sessions/{session}/rounds/{number:int}", self.why),
                    Route("/{domain}/source", self.source),
                    Route("/{domain}/sessions/{session}/keep", self.keep),
                    Route("/{domain}/sessions/{session}/keep", self.save, methods=["POST"]),
                    Route("/{domain}/sessions/{session}/kept", self.kept),
                    Route("/{domain}/health", self.health),
                ],
            ),
            Route(PREFIX, lambda _request: RedirectResponse(PREFIX + "/", 308)),
        ]

    # --- pages ---------------------------------------------------------------------------

    async def index(self, request: Request) -> Response:
        pipelines = self.service.pipelines()
        if len(pipelines) == 1:
            return RedirectResponse(url(pipelines[0]["domain"], ""), 303)
        return page("index.html", pipelines=pipelines)

    async def chat(self, request: Request) -> Response:
        domain = request.path_params["domain"]
        session = request.query_params.get("session") or None
        return await self._chat(domain, session)

    async def _chat(
        self, domain: str, session: str | None, error: ServiceError | None = None, draft: str = ""
    ) -> Response:
        try:
            pipeline = self.service.runtime(domain).pipeline
            summary = self.service.session(session) if session else None
            owner = summary.get("domain") if summary else None
            if owner not in (None, domain):  # a session of another served pipeline
                return RedirectResponse(url(owner, "", session=session), 303)
            numbers = [r["round"] for r in summary["rounds"]] if summary else []
            rounds = [self._round(domain, session, number) for number in numbers]
        except ServiceError as exc:
            return problem(exc.message, exc.status, domain)
        return page(
            "chat.html",
            status=error.status if error else 200,
            domain=domain,
            pipeline=pipeline,
            session=session,
            summary=summary,
            rounds=rounds,
            error=error.message if error else None,
            draft=draft,
        )

    def _round(self, domain: str, session: str | None, number: int) -> dict[str, Any]:
        stored = self.service.round(str(session), number)
        result = stored["result"]
        return {
            "number": number,
            "message": stored["message"],
            "result": result,
            "segments": cited_segments(result.get("answer") or "", result.get("sources") or []),
            "view": round_view(result, stored["trace"]),
        }

    async def say(self, request: Request) -> Response:
        domain = request.path_params["domain"]
        refused = cross_site(request)
        if refused is not None:
            return refused
        form = await read_form(request)
        try:
            result = await recorded_round(self.service, self._log(domain), domain, form)
        except ServiceError as exc:
            session = str(form.get("session") or "") or None
            return await self._chat(domain, session, error=exc, draft=form.get("message", ""))
        return RedirectResponse(round_location(domain, result), 303)

    async def say_streamed(self, request: Request) -> Response:
        refused = cross_site(request)
        if refused is not None:
            return refused
        domain = request.path_params["domain"]
        form = await read_form(request)
        return streamed_say(self.service, self._log(domain), domain, form)

    def _log(self, domain: str) -> ReplyLog | None:
        """Where a round's replies are kept: a real model's only."""
        return self.replies if self.recorded.get(domain) else None

    async def why(self, request: Request) -> Response:
        domain = request.path_params["domain"]
        session = request.path_params["session"]
        try:
            self.service.runtime(domain)
            shown = self._round(domain, session, request.path_params["number"])
        except ServiceError as exc:
            return problem(exc.message, exc.status, domain)
        return page("why.html", domain=domain, session=session, round=shown)

    async def source(self, request: Request) -> Response:
        domain = request.path_params["domain"]
        query = request.query_params
        document = query.get("document") or ""
        page_no = int(query["page"]) if query.get("page", "").isdigit() else None
        quote, back = "", None
        try:
            pipeline = self.service.runtime(domain).pipeline
            if query.get("session") and query.get("round", "").isdigit():
                session, number = query["session"], int(query["round"])
                result = self.service.round(session, number)["result"]
                sources = result.get("sources") or []
                index = _source_index(sources, document, page_no, query.get("heading"))
                if index is not None:
                    quote = quote_of(result.get("answer") or "", sources, index)
                back = url(domain, "", session=session) + f"#round-{number}"
            shown = source_page(pipeline, document, page_no, query.get("heading"), quote)
        except ServiceError as exc:
            return problem(exc.message, exc.status, domain)
        except SourceNotFoundError as exc:
            return problem(str(exc), 404, domain)
        return page("source.html", domain=domain, source=shown, quote=quote, back=back)

    async def keep(self, request: Request) -> Response:
        case = self._case(request)
        if not isinstance(case, keep.KeptCase):
            return case
        domain, session = request.path_params["domain"], request.path_params["session"]
        return page("keep.html", domain=domain, session=session, kept=case)

    async def save(self, request: Request) -> Response:
        refused = cross_site(request)
        if refused is not None:
            return refused
        form = await read_form(request)
        case = self._case(request)
        if not isinstance(case, keep.KeptCase):
            return case
        domain, session = request.path_params["domain"], request.path_params["session"]
        try:
            if form.get("case", "").strip():
                case = keep.edited(case, form["case"])
            _path, name = keep.save(case, schema_path=health.schema_link(case.path))
        except (keep.KeepError, OSError) as exc:
            return page(
                "keep.html",
                status=400,
                domain=domain,
                session=session,
                kept=case,
                draft=form.get("case"),
                error=str(exc),
            )
        # post, redirect, get: a reload shows the kept case again and never writes it twice
        return RedirectResponse(url(domain, "sessions", session, "kept", name=name), 303)

    async def kept(self, request: Request) -> Response:
        """The case just kept, as the test file holds it, and the file run as `runner test`
        runs it."""
        domain, session = request.path_params["domain"], request.path_params["session"]
        name = request.query_params.get("name", "")
        try:
            path = self.service.runtime(domain).pipeline.path.parent / keep.DEFAULT_FILE
        except ServiceError as exc:
            return problem(exc.message, exc.status, domain)
        case = keep.written_case(path, name)
        if case is None:
            return problem(f"{health.display_path(path)} has no case named {name!r}", 404, domain)
        report = await asyncio.to_thread(health.run_case_file, path, name)
        return page(
            "kept.html",
            domain=domain,
            session=session,
            name=name,
            text=keep.case_yaml(case),
            display_path=health.display_path(path),
            report=report,
        )

    def _case(self, request: Request) -> keep.KeptCase | Response:
        domain = request.path_params["domain"]
        session = request.path_params["session"]
        try:
            runtime = self.service.runtime(domain)
            summary = self.service.session(session)
            rounds = [self._kept_round(session, r["round"]) for r in summary["rounds"]]
            return keep.keep(
                rounds,
                pipeline_path=runtime.pipeline.path,
                provider=provider_name(runtime),
            )
        except ServiceError as exc:
            return problem(exc.message, exc.status, domain)
        except keep.KeepError as exc:
            return problem(str(exc), 409, domain)

    def _kept_round(self, session: str, number: int) -> keep.KeptRound:
        stored = self.service.round(session, number)
        return keep.KeptRound(
            stored["message"],
            stored["result"],
            stored.get("trace") or (),
            self.replies.get(session, number),
        )

    async def health(self, request: Request) -> Response:
        domain = request.path_params["domain"]
        try:
            pipeline = self.service.runtime(domain).pipeline
        except ServiceError as exc:
            return problem(exc.message, exc.status, domain)
        return page("health.html", domain=domain, report=health.report(pipeline.path))


def routes(service: Service) -> list[BaseRoute]:
    """The playground's routes over `service`, for `create_app(extra_routes=...)`."""
    return Playground(service).routes()


MAX_FORM_BYTES = 64 * 1024


def cross_site(request: Request) -> Response | None:
    """A refusal for a form posted from another site's page (the playground has no login: a
    page elsewhere must not run rounds, or write tests, through a browser on this machine)."""
    origin = request.headers.get("origin")
    fetched_from = request.headers.get("sec-fetch-site")
    foreign = fetched_from == "cross-site" or (
        origin is not None and urlsplit(origin).netloc != request.headers.get("host")
    )
    if not foreign:
        return None
    return problem(
        f"refused a form sent from another site ({origin or 'cross-site'}): the playground "
        "takes forms from its own pages only",
        403,
    )


async def read_form(request: Request) -> dict[str, str]:
    """A posted form's fields (`application/x-www-form-urlencoded`, all the pages send), each
    its last value; a body past `MAX_FORM_BYTES` is cut off there."""
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > MAX_FORM_BYTES:
            break
    fields = parse_qs(body[:MAX_FORM_BYTES].decode("utf-8", "replace"), keep_blank_values=True)
    return {name: values[-1] for name, values in fields.items()}


def page(template: str, *, status: int = 200, **context: Any) -> HTMLResponse:
    return HTMLResponse(render(template, **context), status_code=status)


def problem(message: str, status: int, domain: str | None = None) -> HTMLResponse:
    return page("problem.html", status=status, message=message, domain=domain)


def _source_index(
    sources: list[dict[str, Any]], document: str, page_no: int | None, heading: str | None
) -> int | None:
    for index, source in enumerate(sources):
        same = source.get("document") == document and source.get("page") == page_no
        if same and (page_no is not None or source.get("heading") == heading):
            return index
    return None


__all__ = ["Playground", "routes"]
