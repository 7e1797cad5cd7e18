"""The process this runs in: usable cores, the allocator's tuning, worker processes."""
