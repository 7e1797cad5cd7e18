"""What opening a trace says of its progress: the callbacks' shapes."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[int, int, int], None]  # (bytes read, bytes total, events so far)

# Each timeline of a profile of several, as its indexing begins: (its number from 1, how many
# there are, its name: the group (rank or device) and the file's name).
FileProgress = Callable[[int, int, str], None]
