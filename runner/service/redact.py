"""The redactor's former import path: the one redactor is `runner.text.redact` (with
`runner.text.credentials`), where every way out of runner — not only the service — finds it."""

from __future__ import annotations

from runner.text.redact import ERRORS, Redactor, redact_logs

__all__ = ["ERRORS", "Redactor", "redact_logs"]
