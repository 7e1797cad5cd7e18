"""Exact conversion of trace times to integer nanoseconds."""

from __future__ import annotations

import numpy as np
import pytest

from proftui.core.model.timeconv import one_us_to_ns, us_to_ns


@pytest.mark.parametrize("text,ns", [
    ("1780676244313289.000", 1780676244313289000),  # msprof 8 / torch_npu strings
    ("1704161511420289.011", 1704161511420289011),
    ("5836443391361.742", 5836443391361742),  # Kineto's 3 decimals, beyond float64's ns
    ("56635864652.490005", 56635864652490),  # CANN 6 floats: rounded to the ns
    ("56635864652.4905", 56635864652491),
    ("0.0005", 1),
    ("12", 12000),
    ("-1.5", -1500),
    ("1e3", 1_000_000),
    ("1698316426434084.2", 1698316426434084250),  # a double's shortest text: that double
])
def test_text_to_ns(text, ns) -> None:
    assert one_us_to_ns(text) == ns
    got, ok = us_to_ns([text, text])
    assert ok.all() and got.tolist() == [ns, ns]


def test_mixed_and_unusable_values() -> None:
    values = [1, "2.5", None, "abc", [1], "1.2.3", "", 10**30, "\u0661"]
    ns, ok = us_to_ns(values)
    assert ok.tolist() == [True, True, False, False, False, False, False, False, False]
    assert ns[:2].tolist() == [1000, 2500]


def test_vectorised_agrees_with_exact_path() -> None:
    rng = np.random.default_rng(3)
    whole = rng.integers(0, 9 * 10**15, 2000)  # up to year 2255 in epoch µs
    frac = rng.integers(0, 1000, 2000)
    texts = [f"{w}.{f:03d}" for w, f in zip(whole.tolist(), frac.tolist())]
    texts += [f"{w}" for w in whole[:100].tolist()] + ["7.25", "0.5", "123456.7891"]
    ns, ok = us_to_ns(texts)
    assert ok.all()
    assert ns.tolist() == [one_us_to_ns(t) for t in texts]


def test_huge_texts_are_refused_not_crashing() -> None:
    # found by the fuzz loop: a double-looking text beyond int64 nanoseconds
    assert one_us_to_ns("99999999999999999999999.5") is None
    ns, ok = us_to_ns(["99999999999999999999999.5", "1.5"])
    assert ok.tolist() == [False, True] and ns[1] == 1500
