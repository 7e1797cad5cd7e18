"""`proftui table`: list a profile's summary tables, or print one filtered and sorted."""

from __future__ import annotations

import os
import sys
from typing import Any

from proftui.tui.commands.common import (
    EXIT_OK,
    TRACE,
    TerminalText,
    json_option,
    print_json,
    print_table,
    print_whole_table,
    top_option,
    warning,
)
from proftui.tui.commands.spec import Arg, Command, Group
from proftui.tui.text.format import fmt_count, plural
from proftui.tui.text.safe import safe

DEFAULT_TOP = 50  # rows printed as text unless --top says otherwise
TEXT_WIDTH = 24  # a text column's share of a terminal when choosing the columns that fit

DESCRIPTION = """\
Without NAME, list the profile's summary CSVs: kind, rank or device, rows, columns, file.
With NAME (a kind as proftui names them: op_summary, op_statistic, kernel_details, aicpu,
step_trace_time, api_statistic, communication_statistic, operator_details ...; the file's
base name; or a prefix of one kind), print that table as the app's Tables pane shows it:
filtered by --where (the pane's filter language), first sorted as people usually start
(op_summary by Task Duration, kernel_details by Duration, op_statistic by Ratio(%), aicpu by
Total_time, all descending), the cells formatted alike. The tables of several ranks or
devices are printed as one, a Group column first, unless --group picks one. The timelines
are not indexed.

--where terms (all must hold): conv (text anywhere), "two words", /^aten::/ (a regular
expression), Name~conv or Name~/regex/ (in one column), Name=relu, Duration>100us,
"Task Duration">=1ms, Count>=10, Ratio(%)<5, !term (not). Times take ns, us, ms or s; a
bare number is in the column's unit. Columns are named by name or header; case, spaces,
underscores and the unit suffix do not matter.

--json prints {"kind", "groups", "columns": [{"name", "header", "unit", "kind"}], "rows":
[[cell, ...]], "n_rows", "sort": {"column", "descending"} or null, "where"}: times
(columns in us, ms, s, and timestamps) as integer ns rounded to the nearest, their unit
"ns"; other numbers as they are; missing cells null; n_rows counts the rows matching
--where, of which rows holds the first --top. --csv writes the rows and columns asked for
with the file's own headers and units (timestamps exact). Without NAME, --json prints
{"root", "tables": [{"kind", "group", "name", "path", "n_rows", "n_columns", "error"}]}."""

SPEC = Command(
    "table", "the summary tables (op_statistic ...): list, or one",
    DESCRIPTION,
    (*TRACE,
     Arg("name", nargs="?", metavar="NAME", help="the table: its kind, file name or a unique "
                                                 "prefix (list them without NAME)"),
     Arg("--group", metavar="G", help='only the table of this rank or device, e.g. "rank 1" '
                                      "(default: all, with a Group column)"),
     Arg("--where", metavar="EXPR", default="", help="keep the rows matching EXPR (see above)"),
     Arg("--sort", metavar="COL", help="sort by this column (numbers largest first, text A to "
                                       "Z; default: the kind's usual order)"),
     Group((Arg("--desc", dest="descending", action="store_const", const=True,
                help="sort descending"),
            Arg("--asc", dest="descending", action="store_const", const=False,
                help="sort ascending"))),
     Arg("--columns", metavar="A,B,...", help="show these columns, in this order (a Group "
                                              "column stays first unless named)"),
     top_option(f"the first K rows (default {DEFAULT_TOP} as text, all as JSON or CSV; 0 for "
                "all)", least=0),
     Group((json_option(),
            Arg("--csv", action="store_true", help="write CSV (to stdout, or -o FILE)"))),
     Arg("-o", "--output", metavar="FILE", default="-", files=True,
         help="with --csv: where to write (default -, stdout)"),
     Arg("--force", action="store_true", help="with -o: overwrite a file"),
     Arg("--raw", action="store_true", help="with --csv: keep cells that look like formulas "
                                            "as they are (no leading ')")),
    ("proftui table rank0_ascend_pt/",
     "proftui table PROF_000001_... op_statistic",
     "proftui table PROF_000001_... op_summary --top 20 --where 'Task Duration>1ms'",
     "proftui table cluster/ kernel_details --group 'rank 1' --where Type~MatMul",
     "proftui table run/ kernel_details --columns Name,Type,Duration --sort Name --asc",
     "proftui table run/ op_stat --json | jq '.rows[0]'",
     "proftui table run/ aicpu --csv -o aicpu.csv --force"))


def cmd_table(argv: list[str]) -> int:
    parser, args = SPEC.parse(argv)
    names = _checked(parser, args)
    from proftui.core.load.loader import profile_layout

    if args.csv and args.output != "-":  # refuse before reading (core checks again)
        _check_output(args.output, args.force)
    layout = profile_layout(args.path, args.run, use_cache=not args.no_cache)
    if args.name is None:
        return _list(layout, args.json, use_cache=not args.no_cache)
    return _show(layout.tables, args, names)


def _checked(parser, args) -> list[str]:
    """The column names of --columns, the options checked together."""
    if not args.csv and (args.output != "-" or args.force or args.raw):
        parser.error("-o, --force and --raw apply to --csv only")
    names = [n.strip() for n in (args.columns or "").split(",") if n.strip()]
    if args.columns is not None and not names:
        parser.error("--columns wants one or more column names, e.g. --columns Name,Duration")
    if args.name is None:
        used = [o for o, given in (("--group", args.group), ("--where", args.where),
                                   ("--sort", args.sort), ("--columns", args.columns),
                                   ("--csv", args.csv), ("--top", args.top is not None),
                                   ("--asc/--desc", args.descending is not None)) if given]
        if used:
            parser.error(f"{used[0]} needs a table NAME (list them without options)")
    return names


def json_answer(parser, args) -> dict[str, Any]:
    """What `table --json` prints (`proftui mcp` answers it too), but that the rows are the
    first DEFAULT_TOP unless --top says otherwise (as text does)."""
    from proftui.core.load.loader import profile_layout

    names = _checked(parser, args)
    layout = profile_layout(args.path, args.run, use_cache=not args.no_cache)
    if args.name is None:
        entries, read = _entries(layout, use_cache=not args.no_cache)
        return _list_json(layout, entries, read)
    return _shown_json(*_asked(layout.tables, args, names))


def _check_output(output: str, force: bool) -> None:
    from proftui.core.export.to_csv import ExportError, ExportExists

    where = os.path.abspath(output)
    if os.path.isdir(where):
        raise ExportError(f"{where} is a directory; give a file name.")
    if not force and os.path.lexists(where):
        raise ExportExists(f"{where} already exists.")


def _list(layout, as_json: bool, use_cache: bool = True) -> int:
    """The profile's tables: kind, group, rows, columns and file of each."""
    import numpy as np

    from proftui.core.model.table import Column, Table, text_column

    entries, read = _entries(layout, use_cache)
    if as_json:
        print_json(_list_json(layout, entries, read))
        return EXIT_OK
    if not entries:
        sys.stdout.write(f"{safe(layout.root)} holds no summary tables.\n")
        return EXIT_OK

    def number(key: str) -> Any:
        return np.array([np.nan if e[key] is None else e[key] for e in entries], np.float64)

    files = [_relative(e["path"], layout.root)
             + (f" ({e['error'].rstrip('.')})" if e["error"] else "") for e in entries]
    columns = [text_column("Kind", [e["kind"] for e in entries])]
    if any(e["group"] for e in entries):
        columns.append(text_column("Group", [e["group"] for e in entries]))
    columns += [Column("Rows", "Rows", "", "number", number("n_rows")),
                Column("Columns", "Columns", "", "number", number("n_columns")),
                text_column("File", files)]
    listing = Table("tables", layout.root, columns, len(entries))
    print_whole_table(listing, f"{len(entries)} summary tables in {layout.root}")
    return EXIT_OK


def _entries(layout, use_cache: bool) -> tuple[list[dict[str, Any]], list]:
    """Each table of `layout` as the listing's JSON has it, and the tables read."""
    from proftui.core.cache.tables import read_table
    from proftui.core.model.errors import ProftuiError
    from proftui.core.tables.by_name import file_name

    entries: list[dict[str, Any]] = []
    read = []
    for file in layout.tables:
        entry = {"kind": file.kind, "group": file.group, "name": file_name(file),
                 "path": file.path, "n_rows": None, "n_columns": None, "error": None}
        try:
            table = read_table(file.path, file.kind, file.group, use_cache=use_cache)
            read.append(table)
            entry["n_rows"], entry["n_columns"] = table.n_rows, len(table.columns)
        except ProftuiError as exc:
            entry["error"] = str(exc)
        entries.append(entry)
    return entries, read


def _list_json(layout, entries: list[dict[str, Any]], read: list) -> dict[str, Any]:
    return {"root": layout.root, "tables": entries,
            "warnings": [warning("unreadable_file", e["error"]) for e in entries
                         if e["error"]] + table_warnings(read)}


def _relative(path: str, root: str) -> str:
    return path[len(root) + 1:] if root and path.startswith(root + os.sep) else path


def _show(files, args, names: list[str]) -> int:
    """One kind of table (several ranks stacked), as text, JSON or CSV."""
    from proftui.core.export.to_csv import export_table

    table, tables, answer = _asked(files, args, names)
    _note_problems(tables)
    groups = [t.group for t in tables]
    if args.json:
        print_json(_shown_json(table, tables, answer))
        return EXIT_OK
    if args.csv:
        target: Any = args.output
        if target == "-" and sys.stdout.isatty():
            target = TerminalText(sys.stdout)
        result = export_table(table, target, rows=answer.rows, columns=answer.columns,
                              neutralize=not args.raw, overwrite=args.force)
        if result.path != "-":
            sys.stderr.write(f"wrote {fmt_count(result.rows)} rows to {safe(result.path)}\n")
        return EXIT_OK
    columns = answer.columns
    if not names and sys.stdout.isatty():
        from rich.console import Console

        columns = fit_columns(table, columns, answer.rows, Console().width, answer.sort)
    print_table(table, columns, answer.rows, _title(table, groups, answer))
    if len(columns) < len(answer.columns):
        sys.stdout.write(f"{len(columns)} of {len(answer.columns)} columns: the others are "
                         "empty here or too wide (--columns chooses; --csv, --json have all)\n")
    if len(answer.rows) < answer.n_matching:
        sys.stdout.write(f"... and {fmt_count(answer.n_matching - len(answer.rows))} more rows "
                         "(--top 0 prints all)\n")
    return EXIT_OK


def _asked(files, args, names: list[str]):
    """(the table asked for, several ranks' stacked; the tables read; the rows and columns
    --where, --sort, --columns and --top choose of it)."""
    from proftui.core.model.errors import ProftuiError
    from proftui.core.tables.by_name import ask, choose, read_tables, stack
    from proftui.core.tables.query import default_sort

    chosen = choose(files, args.name, args.group)
    tables = read_tables(chosen, use_cache=not args.no_cache)
    table = stack(tables)
    if args.sort is None and args.descending is not None and default_sort(table) is None:
        raise ProftuiError(f"{table.kind} has no usual order to turn round: name a column "
                           "with --sort.")
    top = args.top if args.top is not None else (0 if args.json or args.csv else DEFAULT_TOP)
    answer = ask(table, where=args.where, sort=args.sort, descending=args.descending,
                 columns=names, top=top)
    return table, tables, answer


def _shown_json(table, tables, answer) -> dict[str, Any]:
    from proftui.core.tables.by_name import plain_column, plain_rows

    sort = None if answer.sort is None else {
        "column": table.columns[answer.sort[0]].header, "descending": answer.sort[1]}
    return {"kind": table.kind, "groups": [t.group for t in tables],
            "columns": [plain_column(table.columns[c]) for c in answer.columns],
            "rows": plain_rows(table, answer.rows, answer.columns),
            "n_rows": answer.n_matching, "sort": sort, "where": answer.where or None,
            "warnings": table_warnings(tables)}


def fit_columns(table, columns: list[int], rows, width: int,
                sort: tuple[int, bool] | None) -> list[int]:
    """The columns that fit a terminal `width`, in their order: the Group column of stacked
    ranks and the sorted column always, then from the left those that fit, text cut to
    TEXT_WIDTH; columns without a value in `rows` are left out."""
    from proftui.core.model.table import MISSING
    from proftui.core.tables.by_name import group_column
    from proftui.core.tables.query import rows_text

    cells = rows_text(table, rows, columns)
    keep = {c for c in columns if c in (group_column(table), sort and sort[0])}
    need: dict[int, int] = {}
    for i, c in enumerate(columns):
        texts = [row[i] for row in cells]
        if c not in keep and not any(t.strip() not in MISSING for t in texts):
            continue
        column = table.columns[c]
        wide = max([len(column.header), *map(len, texts)])
        need[c] = (min(wide, TEXT_WIDTH) if column.kind == "text" else wide) + 3
    budget = width - 1 - sum(need.get(c, 0) for c in keep)
    chosen = set(keep)
    for c in columns:
        if c in need and c not in keep:
            if need[c] <= budget:  # a wide one left out, narrower ones after it may fit
                chosen.add(c)
                budget -= need[c]
    return [c for c in columns if c in chosen]


def _title(table, groups: list[str], answer) -> str:
    """What the rows are: kind, whose, how many, filter and order."""
    whose = ""
    if any(groups):
        whose = f" of {', '.join(g or '(top)' for g in groups)}"
    count = plural(table.n_rows, "row")
    if answer.where:
        count += f", {fmt_count(answer.n_matching)} matching {answer.where}"
    order = ""
    if answer.sort is not None:
        column = table.columns[answer.sort[0]]
        order = f", by {column.header} {'descending' if answer.sort[1] else 'ascending'}"
    return f"{table.kind}{whose}: {count}{order}"


def table_warnings(tables) -> list[dict[str, Any]]:
    """The damage met reading summary tables, as --json `warnings`, each message naming the
    table (and its rank)."""
    out = []
    for table in tables:
        where = f"{table.kind} [{table.group}]" if table.group else table.kind
        out += [{**w, "message": f"{where}: {w['message']}"}
                for w in table.diagnostics.warnings()]
    return out


def _note_problems(tables) -> None:
    """Problems met reading the CSVs, one line each on stderr (the rows are still shown)."""
    for table in tables:
        for problem in table.diagnostics:
            where = f" [{table.group}]" if table.group else ""
            sys.stderr.write(f"proftui: note: {safe(table.kind)}{safe(where)}: "
                             f"{fmt_count(problem.count)} {safe(problem.message)}"
                             + (f": {safe(problem.detail)}" if problem.detail else "") + "\n")
