"""Is an op slow, or just big: the profiler's row behind a slice (shapes, dtypes, counters),
the work each op kind does (FLOPs and bytes from its shapes), the hardware's peaks, and the
share of its roof an op reaches."""
