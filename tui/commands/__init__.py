"""The commands of the command line, one module each: `info`, `index`, `ops`, `iterations`,
`export`, `summary`, and `open` (the viewer); what they share is in `common`."""
