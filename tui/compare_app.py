"""Two profiles, one above the other: `proftui BASE NEW`.

Both timelines are aligned at the start of a chosen iteration (0 on both rulers) and, while
the lock is on (`l`), panned and zoomed together, their rulers sharing the cursor. The panes
under them hold what `proftui diff` prints, from the same code: the ops that changed (Enter
lists an op's instances on both sides and shows the first of each in the aligned iteration),
the step and its parts, and the instances (Enter shows one on its side's timeline).
"""

from __future__ import annotations

import dataclasses
import re
import time

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Footer, Input, ProgressBar, Static, TabbedContent, TabPane

from proftui.core import Cancelled, ProftuiError, load_trace
from proftui.core.analysis.diff import Diff, Opened, compare
from proftui.core.analysis.diff_report import diff_tables, evidence, instances_table, ops_table
from proftui.core.analysis.overview import read_overview
from proftui.core.ops.iterations import capture_start_ns
from proftui.core.query.rows import RowIndex, rows_for
from proftui.themes import DEFAULT_THEME
from proftui.tui.app import Prompt
from proftui.tui.app.base import BaseApp
from proftui.tui.panes.base import FilterBox, TablePane
from proftui.tui.panes.tables import TablesPane
from proftui.tui.screens.help import HelpScreen
from proftui.tui.text.format import fmt_count, fmt_duration, plural
from proftui.tui.text.safe import safe
from proftui.tui.widgets.table import TableView
from proftui.tui.widgets.timeline import IterationMark, Timeline

SIDES = ("base", "new")


class DiffOpsPane(TablePane):
    """The ops of the comparison, largest change first; Enter lists one's instances."""

    def compose(self) -> ComposeResult:
        yield Static("Comparing ...", classes="title", id="diff-ops-title", markup=False)
        yield FilterBox(placeholder="filter: text, /regex/, Status~added, Delta>100us "
                                    "(Enter applies, Esc closes)")
        yield TableView(id="diff-ops")

    def table_view(self) -> TableView:
        return self.query_one("#diff-ops", TableView)


class InstancesPane(TablePane):
    """Both sides' instances of the op chosen in the ops pane."""

    def compose(self) -> ComposeResult:
        yield Static("Enter on an op (pane 1) lists its instances on both sides here.",
                     classes="title", id="diff-instances-title", markup=False)
        yield FilterBox(placeholder="filter: Side~new, Iteration=3, Duration>1ms "
                                    "(Enter applies, Esc closes)")
        yield TableView(id="diff-instances")

    def table_view(self) -> TableView:
        return self.query_one("#diff-instances", TableView)


class CompareApp(BaseApp):
    """proftui's terminal app for two profiles: base and new."""

    TITLE = "proftui diff"
    CSS = """
    #status { height: 1; padding: 0 1; background: $panel; }
    #progress { padding: 0 1; }
    #verdict { height: auto; max-height: 6; padding: 0 1; }
    #main { height: 1fr; }
    .side { height: 1; padding: 0 1; background: $boost; }
    #panes { height: 40%; min-height: 7; }
    #panes.maximised { height: 1fr; }
    #prompt { display: none; }
    """
    BINDINGS = [
        Binding("l", "toggle_lock", "Lock"),
        Binding("g", "align", "Align at iteration"),
        Binding("1", "pane('ops')", "Ops", show=False),
        Binding("2", "pane('steps')", "Steps", show=False),
        Binding("3", "pane('instances')", "Instances", show=False),
        Binding("question_mark", "help", "Keys"),
    ]

    def __init__(self, base: str, new: str, use_cache: bool = True,
                 theme: str = DEFAULT_THEME,
                 op_map: list[tuple[re.Pattern, str]] | None = None) -> None:
        self.paths = (base, new)
        self.use_cache = use_cache
        self.op_map = op_map or []
        self.sides: list[Opened] = []
        self.found: Diff | None = None
        self.locked = True
        self.align: int | None = None  # the iteration both rulers start at; None: capture starts
        self.origins: list[int] = [0, 0]
        self.instances_key: str | None = None
        self._pushed: dict[int, tuple[int, int]] = {}  # a window set here, per timeline
        self._picked: dict[int, int] = {}  # a slice selected here (the status says both)
        super().__init__(theme)

    def compose(self) -> ComposeResult:
        yield Static(f"Opening {safe(self.paths[0])} and {safe(self.paths[1])} ...",
                     id="status", markup=False)
        yield ProgressBar(id="progress", show_eta=True)
        yield Static("", id="verdict", markup=False)
        with Vertical(id="main"):
            for side, path in zip(SIDES, self.paths):
                yield Static(f"{side}  {safe(path)}", id=f"{side}-title", classes="side",
                             markup=False)
                yield Timeline(id=side)
        with TabbedContent(id="panes", initial="pane-ops"):
            with TabPane("1 Ops", id="pane-ops"):
                yield DiffOpsPane(id="ops")
            with TabPane("2 Step & tables", id="pane-steps"):
                yield TablesPane(id="steps")
            with TabPane("3 Instances", id="pane-instances"):
                yield InstancesPane(id="instances")
        yield Prompt(id="prompt")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = f"{safe(self.paths[0])} -> {safe(self.paths[1])}"
        self.watch_theme(self.theme)
        self.load_both()

    def timelines(self) -> list[Timeline]:
        return [self.query_one(f"#{side}", Timeline) for side in SIDES]

    def key_timeline(self) -> Timeline | None:
        """The focused timeline, else (a pane has the focus) the base one; the other follows
        while they are locked."""
        if not self.query_one("#main").display:
            return None
        shown = [t for t in self.timelines() if t.index is not None and t.display]
        return (self.focused if self.focused in shown else shown[0]) if shown else None

    def _status(self, text: str) -> None:
        self.query_one("#status", Static).update(text)

    # -- loading --------------------------------------------------------------------------------

    @work(thread=True, exclusive=True)
    def load_both(self) -> None:
        """Open both sides (one after the other: two huge files at once would need twice the
        memory) and compare them, off the UI thread."""
        try:
            sides, rows = [], []
            for side, path in zip(SIDES, self.paths):
                try:
                    index = load_trace(
                        path, use_cache=self.use_cache, cancelled=self._cancel.is_set,
                        progress=lambda done, total, events, side=side: self.call_from_thread(
                            self._progress, side, done, total, events))
                except ProftuiError as exc:
                    if isinstance(exc, Cancelled):
                        raise
                    raise ProftuiError(f"the {side} profile: {exc}") from None
                rows.append(rows_for(index))
                _, tables, iterations = read_overview(index)
                sides.append(Opened(path, index, tables, iterations))
            self.call_from_thread(self._status, "Comparing ...")
            found = compare(sides[0], sides[1], op_map=self.op_map)
        except Cancelled:
            self.call_from_thread(self._failed, "Loading cancelled (press q to quit).", None)
        except ProftuiError as exc:
            self.call_from_thread(self._failed, f"Cannot compare: {safe(exc)}", str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug must not leave a traceback on screen
            reason = f"unexpected {type(exc).__name__} while comparing ({exc}); please report it"
            self.call_from_thread(self._failed, f"Cannot compare: {safe(reason)}", reason)
        else:
            self.call_from_thread(self._show, sides, rows, found)
        finally:
            self._loading = False

    def _progress(self, side: str, done: int, total: int, events: int) -> None:
        self.query_one(ProgressBar).update(total=max(total, 1), progress=done)
        elapsed = max(time.monotonic() - self._started, 1e-3)
        self._status(f"Indexing the {side} profile: {done / 1e6:,.0f} of {total / 1e6:,.0f} MB, "
                     f"{fmt_count(events)} events, {done / 1e6 / elapsed:,.0f} MB/s (Esc cancels)")

    def _failed(self, message: str, error: str | None) -> None:
        self.error = error
        self.query_one(ProgressBar).display = False
        self._status(message)

    def _show(self, sides: list[Opened], rows: list[RowIndex], found: Diff) -> None:
        self.sides, self.found = sides, found
        self.query_one(ProgressBar).display = False
        for timeline, side, side_rows in zip(self.timelines(), sides, rows):
            marks = [IterationMark(it.number, it.start_ns, it.end_ns)
                     for it in side.iterations.items if it.start_ns >= 0 and it.dur_ns >= 0]
            timeline.show(side.index, side_rows, marks, side.tables)
        warnings = [f"warning: {w}" for w in found.warnings]
        if not found.comparable:
            warnings.append("not comparable: the numbers compare unlike profiles")
        self.query_one("#verdict", Static).update(
            "\n".join([found.verdict, *evidence(found), *warnings]))
        ops = self.query_one(DiffOpsPane)
        ops.table_view().show(ops_table(found))
        side = "" if found.side == "all" else f", {found.side} side"
        ops.query_one("#diff-ops-title", Static).update(
            f"{plural(len(found.ops), 'op')} by {found.by}{side}, per step, largest change "
            "first; Enter lists an op's instances on both sides")
        steps = [dataclasses.replace(table, kind=title.split(":")[0])
                 for title, table in diff_tables(found, top=None) if not title.startswith("ops")]
        self.query_one(TablesPane).show_tables(steps)
        self.align_at(self._default_alignment())
        self.screen.set_focus(self.timelines()[0])

    def _default_alignment(self) -> int | None:
        """The first iteration compared that both sides have, else the first both have."""
        assert self.found is not None
        numbers = [set(_windows(side, None)) for side in self.sides]
        kept = [n for n in self.found.base.iterations if all(n in s for s in numbers)]
        common = sorted(numbers[0] & numbers[1])
        return kept[0] if kept else (common[0] if common else None)

    # -- alignment and the lock ---------------------------------------------------------------

    def align_at(self, number: int | None) -> bool:
        """Put the start of iteration `number` (of each side; the capture starts with None) at 0
        on both rulers and show that iteration on both. False when a side lacks it."""
        windows = [_windows(side, number).get(number) if number is not None else None
                   for side in self.sides]
        if number is not None and None in windows:
            missing = SIDES[windows.index(None)]
            self._status(f"Iteration {number} has no time window in the {missing} profile.")
            return False
        if number is None:
            windows = [(capture_start_ns(side.index), side.index.end_ns)
                       for side in self.sides]
        self.align = number
        self.origins = [w[0] for w in windows]  # type: ignore[index]
        for timeline, origin in zip(self.timelines(), self.origins):
            timeline.origin_ns = origin
        length = max(w[1] - w[0] for w in windows)  # type: ignore[index]
        margin = max(length // 50, 1)
        self._set_both(-margin, length + margin)
        self._titles()
        where = f"iteration {number}" if number is not None else "the traces' starts"
        self._status(f"Aligned at {where} (0 on both rulers); lock {self._lock_text()}.")
        return True

    def _set_both(self, lo: int, hi: int) -> None:
        """Show [lo, hi) ns from the alignment on both timelines."""
        for timeline, origin in zip(self.timelines(), self.origins):
            timeline.set_window(origin + lo, origin + hi)
            self._pushed[id(timeline)] = (timeline.view_start, timeline.view_end)

    @on(Timeline.WindowChanged)
    def _window_changed(self, message: Timeline.WindowChanged) -> None:
        """While locked, the other timeline follows: the same span at the same offset from
        the alignment. Windows this app set itself (and stale messages) are not followed."""
        source = message.timeline
        here = (source.view_start, source.view_end)
        if (message.start_ns, message.end_ns) != here or not self.sides:
            return  # stale: a newer message says where it is now
        if self._pushed.pop(id(source), None) == here or not self.locked:
            return
        k = self.timelines().index(source)
        other = self.timelines()[1 - k]
        shift = self.origins[1 - k] - self.origins[k]
        other.set_window(here[0] + shift, here[1] + shift)
        self._pushed[id(other)] = (other.view_start, other.view_end)

    @on(Timeline.CursorChanged)
    def _cursor_changed(self, message: Timeline.CursorChanged) -> None:
        """While locked, the two rulers share the cursor: the other's goes to the same offset
        from the alignment (its own cursor's moves come back here and change nothing)."""
        source = message.timeline
        if message.cursor_ns != source.cursor_ns or not self.sides or not self.locked:
            return  # stale, or each on its own
        self._cursor_to_other(source)

    def _cursor_to_other(self, source: Timeline) -> None:
        k = self.timelines().index(source)
        other = self.timelines()[1 - k]
        other.cursor_ns = source.cursor_ns - self.origins[k] + self.origins[1 - k]
        other.refresh()

    def action_toggle_lock(self) -> None:
        self.locked = not self.locked
        if self.locked and self.sides:  # the other side catches up with the focused one
            focused = self.focused if isinstance(self.focused, Timeline) else None
            source = focused or self.timelines()[0]
            origin = self.origins[self.timelines().index(source)]
            self._set_both(source.view_start - origin, source.view_end - origin)
            self._cursor_to_other(source)
        self._titles()
        self._status(f"Lock {self._lock_text()}: the timelines "
                     f"{'pan and zoom together' if self.locked else 'move on their own'}.")

    def _lock_text(self) -> str:
        return "on" if self.locked else "off"

    def _titles(self) -> None:
        if self.found is None:
            return
        where = f"#{self.align} start" if self.align is not None else "capture start"
        for side, summary in zip(SIDES, (self.found.base, self.found.new)):
            median = summary.median_ns
            step = f"median step {fmt_duration(median)}" if median is not None else "no steps"
            lock = f"   0 = {where}, lock {self._lock_text()}" if side == "base" else ""
            self.query_one(f"#{side}-title", Static).update(
                f"{side:<4}  {safe(summary.label)}   {step}{lock}")

    def action_align(self) -> None:
        if not self.sides:
            return
        numbers = sorted(set(_windows(self.sides[0], None)) & set(_windows(self.sides[1],
                                                                              None)))
        if not numbers:
            self._status("The two profiles have no iteration in common to align at.")
            return
        prompt = self.query_one("#prompt", Input)
        prompt.value = ""
        prompt.placeholder = (f"align both at iteration ({numbers[0]} to {numbers[-1]}); "
                              "Enter aligns, Esc cancels")
        prompt.display = True
        self.screen.set_focus(prompt)

    @on(Input.Submitted, "#prompt")
    def _prompt_submitted(self, event: Input.Submitted) -> None:
        self._close_prompt()
        text = event.value.strip().lstrip("#")
        if not text:
            return
        try:
            number = int(text)
        except ValueError:
            self._status(f"Not an iteration number: {safe(text)}")
            return
        self.align_at(number)

    def _close_prompt(self) -> None:
        self.query_one("#prompt", Input).display = False
        self.screen.set_focus(self.timelines()[0])

    # -- ops and instances ----------------------------------------------------------------------

    @on(TableView.RowChosen, "#diff-ops")
    def _op_chosen(self, event: TableView.RowChosen) -> None:
        event.stop()
        if self.found is None or event.view.table is None:
            return
        key = str(event.view.table.columns[0].values[event.row])
        table = instances_table(self.found, self.sides[0], self.sides[1], key, self.op_map)
        self.instances_key = key
        pane = self.query_one(InstancesPane)
        pane.table_view().show(table)
        side = table.find("Side").values  # type: ignore[union-attr]
        counts = [int((side == s).sum()) for s in SIDES]
        pane.query_one("#diff-instances-title", Static).update(
            f"{safe(key)}: {fmt_count(counts[0])} base and {fmt_count(counts[1])} new "
            "instances in the steps compared; Enter shows one, S sorts, / filters")
        self.query_one(TabbedContent).active = "pane-instances"
        self.screen.set_focus(pane.table_view())
        self._show_first_instances(table)

    def _show_first_instances(self, table) -> None:
        """Both timelines show the op's first instance in the aligned iteration (else its
        first at all), in one window while locked."""
        side = table.find("Side").values
        number = table.find("Iteration").values
        slices = table.find("Slice").values.astype(int)
        picks: list[int | None] = []
        for s in SIDES:
            mine = side == s
            here = mine & (number == self.align) if self.align is not None else mine
            rows = here.nonzero()[0] if here.any() else mine.nonzero()[0]
            picks.append(int(slices[rows[0]]) if len(rows) else None)
        timelines = self.timelines()
        if self.locked and None not in picks:
            spans = []
            for k, (timeline, i) in enumerate(zip(timelines, picks)):
                start = int(timeline.index.arrays["slices.start"][i])  # type: ignore[union-attr]
                dur = int(timeline.index.arrays["slices.dur"][i])  # type: ignore[union-attr]
                spans.append((start - self.origins[k], start + dur - self.origins[k]))
            lo, hi = min(s[0] for s in spans), max(s[1] for s in spans)
            margin = max((hi - lo) // 10, 1)
            self._set_both(lo - margin, hi + margin)
        for timeline, i in zip(timelines, picks):
            if i is not None and i != timeline.selected:
                self._picked[id(timeline)] = i
                timeline.select(i)
        said = [f"{s} {'none' if i is None else 'the first'}" for s, i in zip(SIDES, picks)]
        self._status(f"{safe(self.instances_key or '')}: {', '.join(said)} shown"
                     + (f" (in iteration {self.align})" if self.align is not None else ""))

    @on(TableView.RowChosen, "#diff-instances")
    def _instance_chosen(self, event: TableView.RowChosen) -> None:
        event.stop()
        table = event.view.table
        if table is None or not self.sides:
            return
        side = str(table.find("Side").values[event.row])  # type: ignore[union-attr]
        i = int(table.find("Slice").values[event.row])  # type: ignore[union-attr]
        timeline = self.timelines()[SIDES.index(side)]
        timeline.select(i)
        self._say_selected(timeline, i)  # also when it was selected already (no message)

    @on(Timeline.SliceSelected)
    def _selected(self, message: Timeline.SliceSelected) -> None:
        if self._picked.pop(id(message.timeline), None) == message.slice_index:
            return  # both sides' first instances: the status says so already
        if message.slice_index >= 0:
            self._say_selected(message.timeline, message.slice_index)

    def _say_selected(self, timeline: Timeline, i: int) -> None:
        """The status line: the selected slice, its side, length and start from the
        alignment."""
        index = timeline.index
        assert index is not None
        side = SIDES[self.timelines().index(timeline)]
        origin = capture_start_ns(index) if timeline.origin_ns is None else timeline.origin_ns
        self._status(f"{side}: {safe(index.slice_name(i))}, "
                     f"{fmt_duration(int(index.arrays['slices.dur'][i]))} at "
                     f"{fmt_duration(int(index.arrays['slices.start'][i]) - origin)}")

    # -- panes, themes, help --------------------------------------------------------------------

    def action_pane(self, name: str) -> None:
        self.query_one(TabbedContent).active = f"pane-{name}"
        pane = {"ops": DiffOpsPane, "steps": TablesPane, "instances": InstancesPane}[name]
        self.screen.set_focus(self.query_one(pane).table_view())

    def action_help(self) -> None:
        self.push_screen(HelpScreen(COMPARE_KEYS_HELP))


def _windows(side: Opened, number: int | None) -> dict[int, tuple[int, int]]:
    """Per iteration number (only `number`'s unless None): its window on this side, from its
    earliest start to its latest end over the side's groups (ranks)."""
    out: dict[int, tuple[int, int]] = {}
    for it in side.iterations.items:
        if it.start_ns < 0 or it.dur_ns < 0 or (number is not None and it.number != number):
            continue
        lo, hi = out.get(it.number, (it.start_ns, it.end_ns))
        out[it.number] = (min(lo, it.start_ns), max(hi, it.end_ns))
    return out


COMPARE_KEYS_HELP = """proftui keys: comparing two profiles (base above, new below)

  l            lock on / off: the timelines pan and zoom together and share the cursor
               (on at the start)
  g            align both at an iteration: its start is 0 on both rulers
  tab          focus the other timeline, then the panes
  w / s  a / d zoom and pan the focused timeline, from a pane the base one (the other
               follows while locked)
  Enter  Esc   select the slice at the cursor, clear it; arrows move between slices
  f  0         fit the selection, show everything
  u            utilisation lines on / off
  1 2 3        panes: ops that changed; the step, its parts, the ranks and the summary
               tables compared ([ ] switch); an op's instances
  + / -  m     taller / shorter panes, maximise the focused one
  T            next theme                           ?  this help    q  quit

Ops pane: the ops per step, largest change first, matched as `proftui diff` matches them;
Enter lists the op's instances on both sides and shows the first of each (in the aligned
iteration) on both timelines. Instances pane: Enter shows one on its side's timeline.
In a table: S sorts by the current column, / filters, arrows move.
"""
