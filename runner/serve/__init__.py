"""`runner serve`: pipelines as an HTTP service (a face beside the CLI and the playground, on
`runner.service`, which holds `Service`: pipelines loaded once, the session store, rounds with
locks and idempotency).

- `runner.serve.app`: the Starlette application (native API, OpenAI-compatible API, health,
  metrics), `create_app(service, ...)`;
- `runner.service.principals` (a token is a client, and what is its own), `runner.serve.hosts`
  (the Host names answered, the security headers) and `runner.text.redact` (no credential or
  path goes out): what docs/security.md promises.
"""
