"""Errors a service call answers with: an HTTP status, a type and the CLI's message."""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """A request the service refuses or cannot serve; `status` is its HTTP status."""

    status = 500
    kind = "internal_error"
    code = "internal_error"  # a string, as the OpenAI API's error codes are

    def __init__(
        self,
        message: str,
        headers: dict[str, str] | None = None,
        *,
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.headers = headers or {}  # sent with the error (Retry-After)
        self.param = param  # the request's field at fault, when one is
        if code is not None:
            self.code = code

    def to_json(self) -> dict[str, Any]:
        # the shape OpenAI clients read; the native API uses it too
        error = {"message": self.message, "type": self.kind, "param": self.param}
        return {"error": {**error, "code": self.code}}


class BadRequest(ServiceError):
    status = 400
    kind = "invalid_request_error"
    code = "invalid_request"


class Unauthorized(ServiceError):
    status = 401
    kind = "authentication_error"
    code = "invalid_api_key"


class NotFound(ServiceError):
    status = 404
    kind = "not_found_error"
    code = "not_found"


class Busy(ServiceError):
    """Another request holds the session (or the request id) longer than the bounded wait."""

    status = 409
    kind = "conflict_error"
    code = "session_busy"


class TooSlow(ServiceError):
    """The request body did not arrive in time (a client holding a connection open)."""

    status = 408
    kind = "invalid_request_error"
    code = "request_timeout"


class ClientGone(ServiceError):
    """The client left while sending its request; nobody reads the answer."""

    status = 400
    kind = "invalid_request_error"
    code = "client_gone"


class UnsupportedMediaType(ServiceError):
    status = 415
    kind = "invalid_request_error"
    code = "unsupported_media_type"


class TooLarge(ServiceError):
    status = 413
    kind = "invalid_request_error"
    code = "request_too_large"


class Unavailable(ServiceError):
    """The store cannot be reached or written, or the service is shutting down."""

    status = 503
    kind = "unavailable_error"
    code = "unavailable"


def as_service_error(exc: BaseException) -> ServiceError:
    """Any error as a ServiceError with the message the CLI prints for it."""
    from runner.render import describe_error
    from runner.sessions import (
        SessionConflictError,
        SessionError,
        SessionNotFoundError,
        StoreUnavailableError,
    )

    if isinstance(exc, ServiceError):
        return exc
    message = describe_error(exc)
    if isinstance(exc, SessionNotFoundError):
        return NotFound(message)
    if isinstance(exc, StoreUnavailableError):
        return Unavailable(message)
    if isinstance(exc, SessionConflictError):
        return Busy(message)
    if isinstance(exc, SessionError):
        return BadRequest(message)
    return ServiceError(message)
