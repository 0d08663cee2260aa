"""Lookup tables' key indexes: matching rows by key, in memory (`index`) or stored on disk
(`store`), and a row as stored text (`rows`). A table file's rows are read by
`runner.documents.table_files`, which the config layer shares."""
