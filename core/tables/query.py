"""Questions to a table of numpy columns: sort order, filter expressions, totals, cell text.

Used by the table widget for tables of millions of rows and by the headless commands. Text
columns are factorised once (each distinct string numbered, kept per column array), so a
substring, a regular expression or a case-insensitive sort looks at each distinct string once
and maps the answer to the rows with numpy.

Filter expressions: space-separated terms, all of which must hold (AND):

- ``conv`` — the text appears (case-insensitively) in some text column; ``"two words"`` too;
- ``/^aten::/`` — a regular expression (case-insensitive) matches some text column;
- ``Name~conv``, ``Name~/regex/`` — in that column only; ``Name=relu`` equal (ignoring case);
- ``Duration>100us``, ``Total >= 2ms``, ``Count=3``, ``Ratio(%)<5``, ``Count!=0`` — numeric
  comparisons; times may carry ns, us (µs), ms or s and are converted to the column's unit (a
  bare number is in the column's own unit); columns are named by name or header, case,
  spaces and underscores ignored, unit suffix optional (``"Task Duration">1ms`` and
  ``Task Duration>1ms`` both work);
- ``!term`` — rows where the term does not hold.

Missing values (NaN, empty text) never satisfy a comparison.
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal

import numpy as np

from proftui.core.model.errors import ProftuiError
from proftui.core.model.table import MISSING, Column, Table
from proftui.core.model.words import duration_text

TIME_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000,
              "s": 1_000_000_000}
_MISSING_TS = np.iinfo(np.int64).min

# The typical first move per table kind: (column, descending).
DEFAULT_SORTS: dict[str, tuple[str, bool]] = {
    "op_summary": ("Task Duration", True),
    "op_statistic": ("Ratio", True),
    "aicpu": ("Total_time", True),
    "data_preprocess": ("Total_time", True),
    "kernel_details": ("Duration", True),
    "api_statistic": ("Time", True),
    "task_time": ("task_time", True),
    "communication_statistic": ("Total Time", True),
    "operator_details": ("Device Total Duration", True),
    "operator_memory": ("Size", True),
    "os_runtime_statistic": ("Time", True),
    "ops": ("Total", True),
    "instances": ("Start", False),
}

# -- text of values -----------------------------------------------------------------------------


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[^a-z]+", name.lower()) if w]


def is_identifier(column: Column) -> bool:
    """Whether a numeric column holds ids or ordinals (shown without thousands separators,
    never summed): Task ID, Stream ID, name_id, Slice, Iteration, Step, ..."""
    words = _words(column.name)
    return bool(words) and (words[-1] in ("id", "index", "pid", "tid")
                            or column.name.lower() in ("slice", "iteration", "step"))


def is_summable(column: Column) -> bool:
    """Whether a total of the column means something: durations, counts and ratios, not
    minima, maxima, averages, ids or timestamps."""
    if column.kind != "number" or is_identifier(column):
        return False
    words = set(_words(column.name))
    if words & {"min", "max", "avg", "average", "mean", "median", "variance", "std", "start",
                "end", "stop", "timestamp", "allocation", "release", "utilization",
                "efficiency", "rate", "usage", "vs"}:
        return False
    if column.unit in TIME_UNITS:
        return True
    if column.unit == "%":
        return bool(words & {"ratio", "share", "time"})
    return bool(words & {"count", "calls", "cycles"})


def format_cell(column: Column, value: object) -> str:
    """A cell as text: times in human units (from the column's unit; a `fixed` column in
    its own unit, 3 decimals, as its header says), numbers with thousands
    separators (ids without), ratios with 2 decimals, timestamps as µs with 3 decimals;
    missing values (NaN, the int64 minimum of timestamps, None) as ""."""
    if value is None:
        return ""
    if column.kind == "text":
        if isinstance(value, float) and math.isnan(value):
            return ""
        return str(value)
    if column.kind == "timestamp":
        ns = int(value)  # type: ignore[call-overload]
        if ns == _MISSING_TS:
            return ""
        sign, ns = ("-", -ns) if ns < 0 else ("", ns)
        return f"{sign}{ns // 1000}.{ns % 1000:03d}"
    number = float(value)  # type: ignore[arg-type]
    if math.isnan(number):
        return ""
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    if column.unit in TIME_UNITS:
        if column.fixed:
            return f"{number:,.3f}"
        return duration_text(round(number * TIME_UNITS[column.unit]))
    if column.unit == "%":
        return f"{number:,.2f}%"
    if number == int(number) and abs(number) < 1e18:
        return str(int(number)) if is_identifier(column) else f"{int(number):,}"
    if abs(number) >= 1:
        return f"{number:,.3f}".rstrip("0").rstrip(".")
    return f"{number:.4g}"


def totals(table: Table, rows: np.ndarray | None = None) -> list[float | None]:
    """Per column, the sum over `rows` (all when None) of a summable column
    (:func:`is_summable`; NaN left out), else None; all None when its rows do not add up."""
    if not table.additive:
        return [None] * len(table.columns)
    out: list[float | None] = []
    for column in table.columns:
        if not is_summable(column):
            out.append(None)
            continue
        values = np.asarray(column.values, np.float64)
        with np.errstate(invalid="ignore", over="ignore"):  # inf + -inf is NaN; 1e308s: inf
            out.append(float(np.nansum(values if rows is None else values[rows])))
    return out


# -- text columns, factorised -------------------------------------------------------------------

_factors: dict[int, tuple[weakref.ref, np.ndarray, list[str]]] = {}


def factorize(values: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """(codes, distinct strings) of a text column, codes numbering strings by first
    appearance; remembered for the array's lifetime."""
    key = id(values)
    hit = _factors.get(key)
    if hit is not None and hit[0]() is values:
        return hit[1], hit[2]
    lookup: dict[str, int] = {}
    setdefault = lookup.setdefault
    codes = np.fromiter((setdefault("" if v is None else str(v), len(lookup))
                         for v in values.tolist()), np.int64, len(values))
    uniques = list(lookup)
    try:
        ref = weakref.ref(values, lambda _, key=key: _factors.pop(key, None))
        _factors[key] = (ref, codes, uniques)
    except TypeError:  # not weak-referenceable: do not remember
        pass
    return codes, uniques


def _is_missing_text(text: str) -> bool:
    return text.strip() in MISSING


# -- sorting ------------------------------------------------------------------------------------


def sort_order(table: Table, column_index: int, descending: bool = False) -> np.ndarray:
    """Row order sorting by one column, stable (equal values keep their order), missing
    values (NaN, empty or N/A text, missing timestamps) last in both directions; text
    compares case-insensitively."""
    column = table.columns[column_index]
    values = column.values
    if column.kind == "text":
        codes, uniques = factorize(values)
        lowered = [u.lower() for u in uniques]
        dense = {text: k for k, text in enumerate(sorted(set(lowered)))}
        rank = np.fromiter((dense[text] for text in lowered), np.int64, len(lowered))
        missing = np.fromiter((_is_missing_text(u) for u in uniques), bool, len(uniques))
        if descending:
            rank = len(dense) - 1 - rank
        rank[missing] = len(dense)
        return np.argsort(rank[codes], kind="stable")
    array = np.asarray(values)
    if array.dtype.kind == "f":
        return np.argsort(-array if descending else array, kind="stable")
    if array.dtype.kind in "iu":
        key = array.astype(np.int64)
        if descending:
            key = ~key  # -x - 1: order reversed, no overflow; the int64 minimum goes last
        elif column.kind == "timestamp":
            key = np.where(key == _MISSING_TS, np.iinfo(np.int64).max, key)
        return np.argsort(key, kind="stable")
    return sort_order(_as_float(table, column_index), column_index, descending)


def _as_float(table: Table, column_index: int) -> Table:
    column = table.columns[column_index]
    values = np.array([_to_float(v) for v in column.values.tolist()], np.float64)
    columns = list(table.columns)
    columns[column_index] = replace(column, values=values)
    return Table(table.kind, table.path, columns, table.n_rows)


def _to_float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def default_sort(table: Table) -> tuple[int, bool] | None:
    """The table kind's typical first move (see DEFAULT_SORTS) as (column index, descending),
    or None to keep the rows as they are."""
    wanted = DEFAULT_SORTS.get(table.kind)
    if wanted is None:
        return None
    found = _find_column(table, wanted[0])
    return None if found is None else (found, wanted[1])


# -- columns by name ----------------------------------------------------------------------------


def _norm(text: str) -> str:
    return re.sub(r"[\s_]+", "", text.strip().strip('"').lower())


def _find_column(table: Table, name: str) -> int | None:
    wanted = _norm(name)
    for attr in ("header", "name"):
        for i, column in enumerate(table.columns):
            if _norm(getattr(column, attr)) == wanted:
                return i
    return None


def column_index(table: Table, name: str) -> int:
    """The index of the column called `name` (header or name, ignoring case, spaces,
    underscores and the unit suffix); raises ProftuiError naming the known columns."""
    found = _find_column(table, name)
    if found is None:
        known = ", ".join(c.header for c in table.columns)
        raise ProftuiError(f'Unknown column "{name}" (known: {known}).')
    return found


# -- quantities ---------------------------------------------------------------------------------

_INT64_MAX = (1 << 63) - 1
_QUANTITY = re.compile(
    r"^\s*(?P<num>[-+]?(?:\d[\d_,]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*"
    r"(?P<unit>ns|us|µs|μs|ms|s|%)?\s*$", re.IGNORECASE)


def parse_quantity(text: str) -> tuple[float, str]:
    """A number with an optional unit (ns, us, µs, ms, s, %), e.g. "12.5ms" -> (12.5, "ms");
    raises ProftuiError when `text` is not one."""
    m = _QUANTITY.match(text)
    if not m:
        raise ProftuiError(f'Cannot read "{text}" as a number (with an optional unit ns, us, '
                           "ms, s or %).")
    unit = (m.group("unit") or "").lower()
    return float(m.group("num").replace("_", "").replace(",", "")), (
        "us" if unit in ("µs", "μs") else unit)


def parse_time_ns(text: str, bare_unit: str = "us") -> int:
    """A time like "12.5ms", "340us", "2s" or "1500" (in `bare_unit`) as int64 ns."""
    value, unit = parse_quantity(text)
    if unit == "%":
        raise ProftuiError(f'"{text}" is a percentage, not a time.')
    return int(round(value * TIME_UNITS[unit or bare_unit]))


# -- filtering ----------------------------------------------------------------------------------

_OP = r">=|<=|!=|==|=|>|<|~"
_TERM = re.compile(
    r"""\s*(?P<neg>!(?!=))?(?:
        /(?P<regex>(?:\\.|[^/\\])*)/(?=\s|$)
      | (?P<col>"[^"]*"|[^\s<>=!~"/]+)\s*(?P<op>""" + _OP + r""")\s*
        (?P<val>/(?:\\.|[^/\\])*/|"[^"]*"|[^\s"]+)
      | (?P<word>"[^"]*"|[^\s"]+)
    )""", re.VERBOSE)


def _terms(expression: str) -> list[dict]:
    terms: list[dict] = []
    at = 0
    text = expression.rstrip()
    while at < len(text):
        m = _TERM.match(text, at)
        if not m or m.end() == at:
            raise ProftuiError(f'Cannot read the filter from "{text[at:].strip()}" on (an '
                               "unclosed quote?).")
        term = {k: v for k, v in m.groupdict().items() if v is not None}
        word = term.get("word", "")
        if re.search(f"(?:{_OP})$", word) or re.match(f"^(?:{_OP})", word):
            raise ProftuiError(f'"{word}" needs a column and a value on both sides, e.g. '
                               "Duration>100us.")
        terms.append(term)
        at = m.end()
    return terms


def filter_mask(table: Table, expression: str) -> np.ndarray:
    """Rows matching a filter expression (see the module docstring) as a boolean array;
    raises ProftuiError with one sentence for an expression that cannot be applied."""
    mask = np.ones(table.n_rows, bool)
    terms = _terms(expression)
    i = 0
    while i < len(terms):  # name the columns first: a name may take the words before it
        term = terms[i]
        if "col" in term:
            before = len(terms)
            term["index"] = _join_column(table, terms, i)
            i -= before - len(terms)
        i += 1
    for term in terms:
        if "col" in term:
            term_mask = _compare(table, term["index"], term["op"], term["val"])
        elif "regex" in term:
            term_mask = _match_text(table, None, _regex(term["regex"]))
        else:
            needle = term["word"].strip('"').lower()
            term_mask = _match_text(table, None, needle)
        mask &= ~term_mask if term.get("neg") else term_mask
    return mask


def _join_column(table: Table, terms: list[dict], i: int) -> int:
    """The column of comparison `terms[i]`; a name with spaces may have been split into the
    plain words before it (``Task Duration>1ms``): the longest such name that is a column
    wins, and its words are taken out of the terms."""
    name = terms[i]["col"]
    if name.startswith('"'):
        return column_index(table, name.strip('"'))
    words = []
    for j in range(i - 1, max(i - 4, -1), -1):
        prev = terms[j]
        if set(prev) != {"word"} or prev["word"].startswith('"'):
            break
        words.insert(0, prev["word"])
    for k in range(len(words)):
        found = _find_column(table, " ".join(words[k:] + [name]))
        if found is not None:
            del terms[i - len(words) + k:i]
            return found
    return column_index(table, name)


def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ProftuiError(f'Bad regular expression "/{pattern}/": {exc.msg}.') from None


def _match_text(table: Table, column: int | None, needle: str | re.Pattern[str]) -> np.ndarray:
    """Rows where the text (of one column, or of any text column) contains `needle` (lower
    case) or matches the pattern."""
    mask = np.zeros(table.n_rows, bool)
    chosen = [table.columns[column]] if column is not None else [
        c for c in table.columns if c.kind == "text"]
    for col in chosen:
        codes, uniques = factorize(col.values)
        if isinstance(needle, str):
            hits = np.fromiter((needle in u.lower() for u in uniques), bool, len(uniques))
        else:
            hits = np.fromiter((needle.search(u) is not None for u in uniques), bool,
                               len(uniques))
        mask |= hits[codes]
    return mask


def _compare(table: Table, index: int, op: str, raw: str) -> np.ndarray:
    column = table.columns[index]
    label = column.header
    text = raw.strip('"') if raw.startswith('"') else raw
    if column.kind == "text":
        if op == "~":
            needle = _regex(text[1:-1]) if len(text) > 1 and text[0] == text[-1] == "/" and (
                not raw.startswith('"')) else text.lower()
            return _match_text(table, index, needle)
        if op in ("=", "==", "!="):
            codes, uniques = factorize(column.values)
            wanted = text.lower()
            hits = np.fromiter((u.lower() == wanted for u in uniques), bool, len(uniques))
            equal = hits[codes]
            if op == "!=":
                present = ~np.fromiter((_is_missing_text(u) for u in uniques), bool,
                                       len(uniques))[codes]
                return ~equal & present
            return equal
        raise ProftuiError(f'Column "{label}" holds text: use {column.name}~text or '
                           f"{column.name}=text.")
    if op == "~":
        raise ProftuiError(f'Column "{label}" holds numbers: compare it, e.g. '
                           f"{column.name}>5.")
    value, unit = parse_quantity(text)
    col_unit = "ns" if column.kind == "timestamp" else column.unit
    if unit == "%":
        if col_unit != "%":
            raise ProftuiError(f'Column "{label}" is not a percentage: drop the "%".')
    elif unit:
        if col_unit not in TIME_UNITS:
            raise ProftuiError(f'Column "{label}" holds no times: compare it without "{unit}".')
        value = value * TIME_UNITS[unit] / TIME_UNITS[col_unit]
    values = np.asarray(column.values)
    if column.kind == "timestamp":
        present = values != _MISSING_TS
        # Epoch nanoseconds do not fit a float: compare integers, the value read exactly.
        number = _QUANTITY.match(text).group("num").replace("_", "").replace(",", "")  # type: ignore[union-attr]
        try:
            exact = int(Decimal(number) * TIME_UNITS[unit or "ns"])
        except ArithmeticError:  # an exponent beyond decimal's range
            raise ProftuiError(f"{text.strip()} is out of range for {label}.") from None
        value = min(max(exact, -_INT64_MAX), _INT64_MAX)  # type: ignore[assignment]
        values = values.astype(np.int64)
    else:
        values = values.astype(np.float64)
        present = ~np.isnan(values)
    with np.errstate(invalid="ignore"):
        result = {
            ">": values > value, "<": values < value, ">=": values >= value,
            "<=": values <= value, "=": values == value, "==": values == value,
            "!=": values != value,
        }[op]
    return result & present


def rows_text(table: Table, rows: Sequence[int] | np.ndarray, columns: Sequence[int]
              ) -> list[list[str]]:
    """The cells of some rows and columns as text (for printing)."""
    cols = [table.columns[c] for c in columns]
    return [[format_cell(col, col.values[r]) for col in cols] for r in np.asarray(rows).tolist()]
