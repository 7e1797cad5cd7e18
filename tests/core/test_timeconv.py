"""timeconv: trace times (µs as JSON integers, decimal text or floats) to exact int64 ns."""

from __future__ import annotations

import random
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest

from proftui.core.model.timeconv import one_us_to_ns, parse_decimal_us, us_to_ns

# (JSON time value in µs, int64 ns). The decoder hands float literals over as their text,
# so "1.5" below is what `"ts": 1.5` arrives as.
EXACT = [
    (0, 0),
    (1, 1000),
    (-5, -5000),
    (1780676244313289, 1780676244313289000),  # epoch µs as a JSON integer
    ("1.5", 1500),
    ("0.001", 1),
    ("12", 12000),
    ("007", 7000),
    ("1780676244313289.000", 1780676244313289000),  # msprof 8 / torch_npu string ts
    ("1780676244313289.001", 1780676244313289001),
    ("1704161511420289.011", 1704161511420289011),
    ("5836443391361.742", 5836443391361742),  # Kineto "%d.%03d": beyond float64's ns
    ("583644339136.7421", 583644339136742),  # below 13 integer digits: the exact decimal
    ("0.0005", 1),  # half a ns rounds away from zero
    ("0.00049999", 0),
    ("2.0015", 2002),
    ("2.00149999", 2001),
    ("-0.0005", -1),
    ("-1.0015", -1002),
    ("1e3", 1_000_000),
    ("1.5E-3", 2),
    ("+1.5", 1500),
    (" 12.5\t", 12500),  # msprof CSV cells carry a trailing tab
    ("9000000000000000", 9_000_000_000_000_000_000),  # the largest accepted (µs)
    # From 13 integer digits on, a text with other than 0 or 3 decimals is a double's
    # shortest text and means that double: ...084.2 is the double ...084.25.
    ("1698316426434084.2", 1698316426434084250),
    ("5836443391361.7421", 5836443391361742),  # the double 5836443391361.7421875
    # More than 17 significant digits is no double's shortest text: read exactly.
    ("1700000000000000.1234567", 1700000000000000123),
    ("1700000000000000.0005", 1700000000000000001),
    ("5836443391361.74251", 5836443391361743),  # the nearest double would give ...742
]

UNUSABLE = [None, True, False, [], [1], {}, {"ts": 1}, "", " ", ".", "-", "abc", "1.2.3",
            "nan", "NaN", "inf", "Infinity", "0x10", "\u0661\u0662", "\u00b2", "1e400",
            "9000000000000001", "9000000000000000.001", 10**30, -(10**30),
            "99999999999999999999999.5", "1e999999999999999999", "-1E+99999999999",
            float("nan"), float("inf")]


@pytest.mark.parametrize("value,ns", EXACT, ids=[repr(v) for v, _ in EXACT])
def test_one_value_exact(value, ns) -> None:
    assert one_us_to_ns(value) == ns
    got, ok = us_to_ns([value])
    assert ok.tolist() == [True]
    assert got.dtype == np.int64 and got.tolist() == [ns]


@pytest.mark.parametrize("value", UNUSABLE, ids=[repr(v) for v in UNUSABLE])
def test_unusable_values_are_refused(value) -> None:
    assert one_us_to_ns(value) is None
    ns, ok = us_to_ns([value, "2.5"])
    assert ok.tolist() == [False, True]
    assert ns.tolist() == [0, 2500]


def test_whole_column_of_text() -> None:
    values = [v for v, _ in EXACT if isinstance(v, str)]
    ns, ok = us_to_ns(values)
    assert ok.all()
    assert ns.tolist() == [n for v, n in EXACT if isinstance(v, str)]


def test_python_floats_and_ints() -> None:
    ns, ok = us_to_ns([1.5, 2.25, 0.0, -3.5])
    assert ok.all() and ns.tolist() == [1500, 2250, 0, -3500]
    ns, ok = us_to_ns([1, 2, 3])
    assert ok.all() and ns.tolist() == [1000, 2000, 3000]


def test_empty() -> None:
    ns, ok = us_to_ns([])
    assert ns.dtype == np.int64 and len(ns) == 0 and len(ok) == 0


def test_a_value_converts_the_same_whatever_its_neighbours() -> None:
    """A batch is converted as one column; each value must not depend on the others."""
    mixed = [v for v, _ in EXACT] + UNUSABLE
    rng = random.Random(7)
    for _ in range(20):
        rng.shuffle(mixed)
        ns, ok = us_to_ns(mixed)
        for value, n, good in zip(mixed, ns.tolist(), ok.tolist()):
            alone = one_us_to_ns(value)
            assert good == (alone is not None), value
            assert n == (alone or 0), value


def test_missing_times_next_to_text() -> None:
    # metadata events have no ts: a batch mixes None with the usual text
    ns, ok = us_to_ns([None, "1.5", None, "1780676244313289.000"])
    assert ok.tolist() == [False, True, False, True]
    assert ns.tolist() == [0, 1500, 0, 1780676244313289000]


def _exact(text: str) -> int:
    return int((Decimal(text) * 1000).to_integral_value(rounding=ROUND_HALF_UP))


def test_vectorised_parser_matches_decimal_arithmetic() -> None:
    """Random decimal texts below 13 integer digits: exactly Decimal's rounding."""
    rng = random.Random(11)
    texts = []
    for _ in range(3000):
        whole = str(rng.randrange(10 ** rng.randint(1, 12)))
        decimals = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 9)))
        texts.append(f"{whole}.{decimals}" if decimals or rng.random() < 0.3 else whole)
    ns, ok = us_to_ns(texts)
    assert ok.all()
    assert ns.tolist() == [_exact(t) for t in texts]


def test_three_decimals_exact_at_epoch_magnitude() -> None:
    rng = random.Random(5)
    whole = [rng.randrange(10**15, 9 * 10**15) for _ in range(2000)]
    frac = [rng.randrange(1000) for _ in range(2000)]
    texts = [f"{w}.{f:03d}" for w, f in zip(whole, frac)]
    ns, ok = us_to_ns(texts)
    assert ok.all()
    assert ns.tolist() == [w * 1000 + f for w, f in zip(whole, frac)]


def test_parse_decimal_matrix_refuses_what_is_not_plain() -> None:
    texts = [b"12.5", b"-1", b"1e3", b"", b"7"]
    width = max(len(t) for t in texts)
    m = np.array([list(t.ljust(width, b"\0")) for t in texts], np.uint8)
    ns, ok = parse_decimal_us(m, np.array([len(t) for t in texts], np.int64))
    assert ok.tolist() == [True, False, False, False, True]
    assert ns[ok].tolist() == [12500, 7000]
