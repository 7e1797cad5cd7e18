"""Opening a trace or a profile: discovery, the cache, and indexing its files in worker processes.
"""
