"""The on-disk cache, one directory: index files, rank states, summary tables, discoveries and
seek points, each written through one file format with one temporary-file policy (file)."""
