"""The service of pipelines that the web faces share: the pipelines opened once and rounds run for
clients (`pipelines.Service`), who a client is and what is theirs (`principals`), the errors a
client is told (`errors`), per-session locks (`locks`) and rounds
streamed as they run (`streams`). The HTTP API (`runner.serve`), the playground and MCP all stand
on it; none of them imports another."""
