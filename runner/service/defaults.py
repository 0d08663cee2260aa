"""The service core's default limits, stated once: `ServiceLimits` (runner.service.pipelines)
and `runner serve`'s settings and options (runner.serve.config) read them here. The serve room
sits above this one, so these cannot live with serve's own settings: the service never imports
serve.
"""

from __future__ import annotations

MAX_MESSAGE_CHARS = 8_000  # a longer message is refused with a 400
LOCK_WAIT_S = 30.0  # how long a request waits for its session (busy) before a 409
MAX_ROUNDS_IN_FLIGHT = 256  # rounds one worker runs at once; past it a 503 with Retry-After
