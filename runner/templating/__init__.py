"""The sandboxed Jinja environment every template and expression goes through (`environment`),
the budget one render may spend (`budget`), and the filters it adds (`outline`)."""
