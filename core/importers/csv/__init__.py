"""The summary CSVs of the profilers: read a block of rows at a time, typed into columns."""
