"""Settings for the whole suite.

Property tests run on shared, noisy machines (and in CI): a per-example deadline or a "too slow"
health check there measures the machine, not runner, so neither is allowed to fail a test."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile("runner", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("runner")
