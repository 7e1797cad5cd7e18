"""Opening a trace or a profile: discovery and the cache (loader), its files indexed through the
importer each kind names (indexing), in worker processes (file_pool) or in parts (split)."""
