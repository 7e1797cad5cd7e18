"""Functions the worker tests run in worker processes (importable there by module name)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import ClassVar

from proftui.core.runtime.records import Record


@dataclass
class Answer(Record):
    VERSION: ClassVar[int] = 3

    value: int
    pid: int = 0
    version: int = VERSION


def double(n: int) -> Answer:
    return Answer(2 * n, os.getpid())


def fail_on_odd(n: int) -> Answer:
    if n % 2:
        raise ValueError(f"odd: {n}")
    return Answer(n, os.getpid())


def die(n: int) -> Answer:
    os._exit(3)


def stale(n: int) -> Answer:
    return Answer(n, os.getpid(), version=Answer.VERSION - 1)


def wrong_type(n: int) -> dict:
    return {"value": n}


def slow(seconds: float) -> Answer:
    time.sleep(seconds)
    return Answer(0, os.getpid())


def arrays(n: int) -> Answer:
    import numpy as np

    step = np.arange(3 * n, dtype=np.int32)[::3]  # not contiguous: pickled in band
    return Answer({"ints": np.arange(n, dtype=np.int64), "floats": np.linspace(0, 1, n),
                   "step": step, "empty": np.zeros(0, np.int8)}, os.getpid())


SET_IN_PARENT = "as imported"  # a test changes it before it starts a worker


def set_in_parent(n: int) -> Answer:
    """What the worker sees of SET_IN_PARENT: a fork, the parent's value."""
    return Answer(SET_IN_PARENT, os.getpid())  # type: ignore[arg-type]


def progress(n: int) -> Answer:
    """Says it has read n bytes, and answers once the parent has had time to hear it."""
    from proftui.core.runtime.workers import job_progress

    say = job_progress()
    if say is not None:
        say(n, n, 0)
    time.sleep(0.2)
    return Answer(n, os.getpid())
