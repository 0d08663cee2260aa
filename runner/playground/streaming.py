"""The chat's answer shown as the model writes it.

The chat page's script (static/playground.js) sends the message form here rather than to
`say`, and shows the answer's pieces in the conversation as they come; when the round ends it
loads the chat as `say`'s redirect would (the round with its citations and its "why"). Without
the script, the form posts to `say` as before.

    POST /playground/{domain}/say/stream   the `say` form; server-sent events: `delta`
                                           {"text"}, then `done` {"location"} or `error`
                                           {"message"}
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from starlette.responses import Response, StreamingResponse

from runner.playground.pages import url
from runner.playground.recording import ReplyLog, recording
from runner.service.streams import (
    SSE_HEADERS,
    SSE_MEDIA_TYPE,
    RoundStream,
    ending_with_error,
    sse,
)

if TYPE_CHECKING:
    from runner.app import RoundWatch
    from runner.service.pipelines import Service
    from runner.service.principals import Client


async def recorded_round(
    service: Service,
    log: ReplyLog | None,
    domain: str,
    form: dict[str, str],
    client: Client,
    watch: RoundWatch | None = None,
) -> dict[str, Any]:
    """The form's round for `client` (who continues only their own sessions), the model's
    replies kept in `log` (a real model's: None otherwise), told to `watch` as it runs."""
    message = str(form.get("message") or "")
    session = str(form.get("session") or "") or None
    with recording() as replies:
        result = await service.run_round(
            domain, message, session_id=session, client=client, create=False, watch=watch
        )
    if log is not None:
        log.add(result["session"], result["round"], replies)
    return result


def round_location(domain: str, result: dict[str, Any]) -> str:
    """The chat, at the round just run."""
    return url(domain, "", session=result["session"]) + f"#round-{result['round']}"


def streamed_say(
    service: Service, log: ReplyLog | None, domain: str, form: dict[str, str], client: Client
) -> Response:
    stream = RoundStream(
        lambda watch: recorded_round(service, log, domain, form, client, watch), service.redactor
    )
    return StreamingResponse(
        ending_with_error(_events(stream, domain), "error"),
        media_type=SSE_MEDIA_TYPE,
        headers=SSE_HEADERS,
    )


async def _events(stream: RoundStream, domain: str) -> AsyncIterator[str]:
    async for kind, value in stream.items():
        if kind == "delta":
            yield sse({"text": value}, "delta")
        elif kind == "keepalive":
            yield ": still working\n\n"
    result, error = await stream.outcome()
    if result is None:
        yield sse({"message": (error or {}).get("error", {}).get("message", "")}, "error")
    else:
        yield sse({"location": round_location(domain, result)}, "done")
