import numpy as np

from proftui.core.model.arrays import distinct


def test_distinct_is_np_unique():
    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 5, 100):
        for dtype in (np.int64, np.int16, np.float64):
            values = rng.integers(-3, 4, n).astype(dtype)
            got = distinct(values)
            assert got.dtype == values.dtype
            np.testing.assert_array_equal(got, np.unique(values))
    values = np.array([5, 5, 5])
    distinct(values)
    np.testing.assert_array_equal(values, [5, 5, 5])  # the input is left alone
