"""The seek points of an index's gzip files, kept beside its cache entry.

They are derived arrays of the entry
(:func:`proftui.core.cache.indexes.store_derived`): checksummed,
tied to the entry's id and removed with it. One that is missing, damaged or inconsistent is not
used, and the file is inflated from its start as before: slower, never wrong.
"""

from __future__ import annotations

from proftui.core.cache import indexes as cache
from proftui.core.cache.file import CacheMiss
from proftui.core.model.index import TraceIndex
from proftui.core.source import gzip_seek
from proftui.core.source.gzip_seek import SeekPoints
from proftui.core.source.streams import ByteSource

KIND = "seek"
PARTS = ("out", "inp", "bits", "windows", "window_ends")  # SeekPoints' arrays


def store_seek_points(index: TraceIndex, sources: list[ByteSource]) -> None:
    """Keep the seek points that indexing `sources` (numbered as in ``meta["sources"]``)
    recorded, beside the cached `index`; nothing for an index that is not cached."""
    arrays = {}
    for number, source in enumerate(sources):
        points = source.seek_points
        if source.compressed and points is not None and len(points.out):
            arrays.update({f"{number}.{part}": getattr(points, part) for part in PARTS})
    if arrays:
        cache.store_derived(index, KIND, arrays)


def open_source(index: TraceIndex, number: int) -> ByteSource:
    """Source file `number` of `index`, with its seek points when the cache has good ones."""
    entry = index.meta["sources"][number]
    source = ByteSource(entry["path"])
    if not source.compressed or not gzip_seek.available() or source.size != entry.get("size"):
        return source
    try:
        arrays = cache.load_derived(index, KIND)
        points = SeekPoints(*(arrays[f"{number}.{part}"] for part in PARTS))
    except (CacheMiss, KeyError):
        return source
    if points.valid(source.size):
        source.seek_points = points
    return source
