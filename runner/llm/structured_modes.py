"""Which structured-output mode each model's server takes, for the rest of a run.

A server that refuses the structured-output field (runner.llm.decoding) is asked again at once
with the next mode down; that mode is then the most any request of the run asks of that model,
and said once (`notices`, and the refused call's notice, which the round that made the call
turns into one of its warnings). With `accepted` (runner.llm.accepted_modes) it is kept in the
state folder too, and the next process starts in it. One object per client: the client asks it
for a request's settings and tells it of each refusal.
"""

from __future__ import annotations

import dataclasses

from runner.config.model import ModelSettings
from runner.llm import decoding
from runner.llm.accepted_modes import AcceptedModes, server_key
from runner.llm.errors import describe_error
from runner.llm.providers.base import Provider
from runner.llm.types import LLMRequest


class StructuredModes:
    def __init__(
        self, provider: Provider, api_base: str | None, accepted: AcceptedModes | None
    ) -> None:
        self.provider = provider
        self.api_base = api_base
        self.accepted = accepted
        self.notices: list[str] = []  # said once per run: a structured-output fallback
        self._floors: dict[str | None, str] = {}  # model -> the most a server accepted
        self._recalled: set[str | None] = set()  # models whose remembered mode was read

    def settings_for(self, request: LLMRequest, settings: ModelSettings) -> ModelSettings:
        """The settings' structured mode, no higher than what the server accepted this run."""
        if request.schema is None:
            return dataclasses.replace(settings, structured=None)
        mode = settings.structured or decoding.MODES[0]
        floor = self._floor(settings)
        lowest = max(decoding.MODES.index(mode), decoding.MODES.index(floor))
        return dataclasses.replace(settings, structured=decoding.MODES[lowest])

    def step_down(
        self, settings: ModelSettings, error: BaseException
    ) -> tuple[ModelSettings | None, str | None]:
        """When the server refused the structured-output field: the settings with the next
        mode down, and the notice saying so (None when another request already did)."""
        field = getattr(self.provider, "structured_field", None)
        mode = settings.structured
        lower = decoding.next_mode(mode) if mode else None
        if field is None or lower is None or not decoding.refuses(error, field):
            return None, None
        notice = None
        known = self._floors.get(settings.model, decoding.MODES[0])
        if decoding.MODES.index(lower) > decoding.MODES.index(known):
            self._floors[settings.model] = lower
            if self.accepted is not None and self._remembers():
                self.accepted.remember(self._server(settings), lower, refused=str(mode))
            notice = (
                f"the {self.provider.name} server refused `{field}` in {mode} mode "
                f"({describe_error(error)[:160]}); structured replies of model "
                f"{self._model(settings)} use {lower} mode for the rest of the run"
            )
            self.notices.append(notice)
        return dataclasses.replace(settings, structured=lower), notice

    def _floor(self, settings: ModelSettings) -> str:
        """The highest mode the server accepts for this model: what this run found, else what
        an earlier process found and remembered, else the highest there is."""
        remembered, accepted = None, self.accepted
        if accepted is not None and settings.model not in self._recalled and self._remembers():
            self._recalled.add(settings.model)  # the file is read once per model and run
            remembered = accepted.recall(self._server(settings))
        if remembered is not None and accepted is not None and settings.model not in self._floors:
            self._floors[settings.model] = remembered
            self.notices.append(
                f"structured replies of model {self._model(settings)} use {remembered} mode "
                f"from the start: the {self.provider.name} server refused a higher mode in an "
                f"earlier run (remembered in {accepted.path}; delete it to try again)"
            )
        return self._floors.get(settings.model, decoding.MODES[0])

    def _remembers(self) -> bool:
        """Whether refusals are kept across processes: a state folder was given and the
        provider has a structured-output field a server can refuse."""
        return self.accepted is not None and bool(getattr(self.provider, "structured_field", None))

    def _server(self, settings: ModelSettings) -> str:
        return server_key(self.provider.name, self.api_base, self._model(settings))

    def _model(self, settings: ModelSettings) -> str:
        return settings.model or self.provider.name
