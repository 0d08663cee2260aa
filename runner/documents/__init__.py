"""An author's files read safely: YAML composed with limits and positions (`composing`,
`loader`), the located diagnostics every check reports (`diagnostics`), a lookup table file's rows
(`table_files`) and whether indexed files changed (`fingerprints`). A leaf room: it imports
nothing else of runner, so the config layer and the layers above it can all read through it."""
