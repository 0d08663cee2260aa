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
    GET  /playground/login, POST /playground/login     a token login (a service with tokens)

Each page shows the client its own sessions only (runner.service.principals); on a service with
tokens the login sets an HttpOnly, SameSite=Strict cookie holding the token. Every form
carries a CSRF token (an HMAC of the client under the app's secret) and is refused without
it; the chat reads a window of the session's newest rounds (`?before=N`: the earlier ones),
and the store and the files are read off the event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from runner.playground import health, keep
from runner.playground.citations import SourceNotFoundError, cited_segments, quote_of, source_page
from runner.playground.keep import KeptCase, KeptRound  # by name: Playground.keep hides the module
from runner.playground.pages import PREFIX, STATIC, render, url
from runner.playground.recording import ReplyLog, install, provider_name
from runner.playground.streaming import recorded_round, round_location, streamed_say
from runner.playground.why import round_view
from runner.service.errors import ServiceError
from runner.service.principals import COOKIE, NOBODY, Client, client_of
from runner.text.redact import ERRORS

if TYPE_CHECKING:
    from runner.service.pipelines import Service

# a token the login form was given -> its client, or None when the service does not take it
TokenCheck = Callable[[str], Client | None]


class Playground:
    """The handlers, over one service. `login`: the service's token check, when it has
    tokens; `secret` signs the forms' CSRF tokens."""

    def __init__(self, service: Service, *, secret: bytes, login: TokenCheck | None = None) -> None:
        self.service = service
        self.secret = secret
        self.login_check = login
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
                    Route("/login", self.login_page),
                    Route("/login", self.login, methods=["POST"]),
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
        before = request.query_params.get("before", "")
        return await self._chat(
            request, domain, session, before=int(before) if before.isdigit() else None
        )

    async def _chat(
        self,
        request: Request,
        domain: str,
        session: str | None,
        error: ServiceError | None = None,
        draft: str = "",
        before: int | None = None,
    ) -> Response:
        client = client_of(request)
        try:
            pipeline = self.service.runtime(domain).pipeline
            summary = None
            if session:
                summary = await self.service.off_loop(
                    lambda: self.service.session(session, client, before=before)
                )
            owner = summary.get("domain") if summary else None
            if owner not in (None, domain):  # a session of another served pipeline
                return RedirectResponse(url(owner, "", session=session), 303)
            numbers = [r["round"] for r in summary["rounds"]] if summary else []
            rounds = await self.service.off_loop(
                lambda: [self._round(domain, session, number, client) for number in numbers]
            )
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
            before=before,
            error=ERRORS.error(error.message) if error else None,
            draft=draft,
            csrf=self.csrf(client),
        )

    def _round(
        self, domain: str, session: str | None, number: int, client: Client
    ) -> dict[str, Any]:
        stored = self.service.round(str(session), number, client)
        result = stored["result"]
        return {
            "number": number,
            "message": stored["message"],
            "result": result,
            "segments": cited_segments(result.get("answer") or "", result.get("sources") or []),
            "view": round_view(result, stored["trace"]),
        }

    async def say(self, request: Request) -> Response:
        domain, client = request.path_params["domain"], client_of(request)
        form = await self.posted(request)
        if isinstance(form, Response):
            return form
        try:
            result = await recorded_round(self.service, self._log(domain), domain, form, client)
        except ServiceError as exc:
            session = str(form.get("session") or "") or None
            draft = str(form.get("message") or "")
            return await self._chat(request, domain, session, error=exc, draft=draft)
        return RedirectResponse(round_location(domain, result), 303)

    async def say_streamed(self, request: Request) -> Response:
        domain, client = request.path_params["domain"], client_of(request)
        form = await self.posted(request)
        if isinstance(form, Response):
            return form
        return streamed_say(self.service, self._log(domain), domain, form, client)

    def _log(self, domain: str) -> ReplyLog | None:
        """Where a round's replies are kept: a real model's only."""
        return self.replies if self.recorded.get(domain) else None

    async def why(self, request: Request) -> Response:
        domain = request.path_params["domain"]
        session = request.path_params["session"]
        client = client_of(request)
        try:
            self.service.runtime(domain)
            number = request.path_params["number"]
            shown = await self.service.off_loop(
                lambda: self._round(domain, session, number, client)
            )
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
                client = client_of(request)
                stored = await self.service.off_loop(
                    lambda: self.service.round(session, number, client)
                )
                result = stored["result"]
                sources = result.get("sources") or []
                index = _source_index(sources, document, page_no, query.get("heading"))
                if index is not None:
                    quote = quote_of(result.get("answer") or "", sources, index)
                back = url(domain, "", session=session) + f"#round-{number}"
            heading = query.get("heading")
            shown = await asyncio.to_thread(
                source_page, pipeline, document, page_no, heading, quote
            )
        except ServiceError as exc:
            return problem(exc.message, exc.status, domain)
        except SourceNotFoundError as exc:
            return problem(str(exc), 404, domain)
        return page("source.html", domain=domain, source=shown, quote=quote, back=back)

    async def keep(self, request: Request) -> Response:
        case = await self._case(request)
        if not isinstance(case, keep.KeptCase):
            return case
        domain, session = request.path_params["domain"], request.path_params["session"]
        csrf = self.csrf(client_of(request))
        return page("keep.html", domain=domain, session=session, kept=case, csrf=csrf)

    async def save(self, request: Request) -> Response:
        form = await self.posted(request)
        if isinstance(form, Response):
            return form
        case = await self._case(request)
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
                error=ERRORS.error(str(exc)),
                csrf=self.csrf(client_of(request)),
            )
        # post, redirect, get: a reload shows the kept case again and never writes it twice
        return RedirectResponse(url(domain, "sessions", session, "kept", name=name), 303)

    async def kept(self, request: Request) -> Response:
        """The case just kept, as the test file holds it, and the file run as `runner test`
        runs it."""
        domain, session = request.path_params["domain"], request.path_params["session"]
        name = request.query_params.get("name", "")
        if request.headers.get("sec-fetch-site") == "cross-site":  # it runs the test file
            return problem("open the kept case from the playground's own pages", 403, domain)
        try:
            client_of(request).check_owns(session)
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
            report=replace(report, text=self.service.redactor.text(report.text)),
        )

    async def _case(self, request: Request) -> KeptCase | Response:
        domain = request.path_params["domain"]
        session = request.path_params["session"]
        client = client_of(request)
        try:
            runtime = self.service.runtime(domain)
            summary = await self.service.off_loop(lambda: self.service.session(session, client))
            if summary["earlier"]:
                raise keep.KeepError(
                    f"the session has {summary['rounds_total']} rounds, more than a case keeps "
                    f"({len(summary['rounds'])}): keep a shorter conversation"
                )
            rounds = await self.service.off_loop(
                lambda: [self._kept_round(session, r["round"], client) for r in summary["rounds"]]
            )
            return keep.keep(
                rounds,
                pipeline_path=runtime.pipeline.path,
                provider=provider_name(runtime),
            )
        except ServiceError as exc:
            return problem(exc.message, exc.status, domain)
        except keep.KeepError as exc:
            return problem(str(exc), 409, domain)

    def _kept_round(self, session: str, number: int, client: Client) -> KeptRound:
        stored = self.service.round(session, number, client)
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
        report = await asyncio.to_thread(health.report, pipeline.path)
        return page("health.html", domain=domain, report=report)

    # --- the login and the forms' CSRF tokens ----------------------------------------------

    async def login_page(self, request: Request) -> Response:
        if self.login_check is None:  # no tokens: nothing to sign in to
            return RedirectResponse(url(""), 303)
        return page("login.html", csrf=self.csrf(NOBODY))

    async def login(self, request: Request) -> Response:
        form = await read_form(request)
        # the login form's CSRF token is the one of the client nobody is yet
        refused = cross_site(request, csrf_ok=self.csrf_ok(form, NOBODY))
        if refused is not None or self.login_check is None:
            return refused or RedirectResponse(url(""), 303)
        token = form.get("token", "").strip()
        if not token or self.login_check(token) is None:
            return page(
                "login.html",
                status=401,
                error="That is not a token of this service.",
                csrf=self.csrf(NOBODY),
            )
        response = RedirectResponse(url(""), 303)
        response.set_cookie(
            COOKIE, token, httponly=True, samesite="strict", path="/", secure=_https(request)
        )
        return response

    def csrf(self, client: Client) -> str:
        return hmac.new(self.secret, client.name.encode(), hashlib.sha256).hexdigest()[:32]

    async def posted(self, request: Request) -> dict[str, str] | Response:
        """A state-changing form: its fields, or the refusal of one sent from another site or
        without this client's CSRF token."""
        form = await read_form(request)
        client = client_of(request)
        refused = cross_site(request, csrf_ok=self.csrf_ok(form, client)) or self.forged(
            form, client
        )
        return form if refused is None else refused

    def csrf_ok(self, form: dict[str, str], client: Client) -> bool:
        return hmac.compare_digest(form.get("csrf", "").encode(), self.csrf(client).encode())

    def forged(self, form: dict[str, str], client: Client) -> Response | None:
        """A refusal for a form without this client's CSRF token (a page elsewhere cannot
        read it, so cannot send it)."""
        if self.csrf_ok(form, client):
            return None
        return problem(
            "this form was not sent from a page of this playground (its CSRF token is missing "
            "or out of date): reload the page and send it again",
            403,
        )


def routes(service: Service, *, secret: bytes, login: TokenCheck | None = None) -> list[BaseRoute]:
    """The playground's routes over `service`, for `create_app(extra_routes=...)`."""
    return Playground(service, secret=secret, login=login).routes()


MAX_FORM_BYTES = 64 * 1024


def cross_site(request: Request, *, csrf_ok: bool) -> Response | None:
    """A refusal for a form posted from another site's page (a page elsewhere must not run
    rounds, or write tests, through a browser on this machine); the CSRF token is the other
    half. Under the playground's `Referrer-Policy: no-referrer` a browser sends a plain form's
    POST with `Origin: null`: that one is taken only with the form's right CSRF token (which a
    page elsewhere cannot read), and never when the browser says it came from another site."""
    origin = request.headers.get("origin")
    if request.headers.get("sec-fetch-site") == "cross-site":
        foreign = True
    elif origin == "null":
        foreign = not csrf_ok
    else:
        foreign = origin is not None and urlsplit(origin).netloc != request.headers.get("host")
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
    return page("problem.html", status=status, message=ERRORS.error(message), domain=domain)


def _https(request: Request) -> bool:
    return request.url.scheme == "https"


def _source_index(
    sources: list[dict[str, Any]], document: str, page_no: int | None, heading: str | None
) -> int | None:
    for index, source in enumerate(sources):
        same = source.get("document") == document and source.get("page") == page_no
        if same and (page_no is not None or source.get("heading") == heading):
            return index
    return None


__all__ = ["Playground", "routes"]
