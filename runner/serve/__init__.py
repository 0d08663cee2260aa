"""`runner serve`: pipelines as an HTTP service (a face beside the CLI, on runner.app).

- `runner.serve.service`: `Service`, the application-facing core (pipelines loaded once, the
  session store, rounds with locks and idempotency) that the HTTP app and the playground call;
- `runner.serve.app`: the Starlette application (native API, OpenAI-compatible API, health,
  metrics), `create_app(service, ...)`;
- `runner.serve.principals` (a token is a client, and what is its own), `runner.serve.hosts`
  (the Host names answered, the security headers) and `runner.serve.redact` (no credential or
  path goes out): what docs/security.md promises.
"""
