"""The app's one-line prompt and what its answers do: search, go to an iteration, align ranks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from textual.binding import Binding
from textual.widgets import Input

from proftui.core import ProftuiError
from proftui.core.ops.iterations import Iteration, group_windows, step_at
from proftui.core.ops.rank_offsets import ONE_RANK, rank_offsets, ranks_of
from proftui.core.query.search import pattern_of
from proftui.tui.panes.ops_window import Window
from proftui.tui.text.format import fmt_count, fmt_duration, plural
from proftui.tui.text.safe import safe
from proftui.tui.widgets.timeline import Timeline

if TYPE_CHECKING:
    from proftui.tui.app.shell import ProftuiApp

SEARCH_HINT = ("search slice names (substring; /regex/ for a regular expression); Enter finds, "
               "Esc cancels")


class Prompt(Input):
    """The one-line prompt for a search or an iteration number; Esc closes it."""

    BINDINGS = [Binding("escape", "close", "Cancel", show=False)]

    def allow_focus(self) -> bool:
        return self.display  # hidden, it must not take the keys meant for the screen

    def action_close(self) -> None:
        self.app._close_prompt()  # type: ignore[attr-defined]


def iteration_number(text: str) -> int | None:
    """An iteration's number as typed ("6" or "#6"); None when it is not one."""
    try:
        return int(text.lstrip("#"))
    except ValueError:
        return None


def timed(iterations: Sequence[Iteration], number: int) -> list[Iteration]:
    """The iterations of that number with a time window (one per rank, or one)."""
    return [it for it in iterations if it.number == number and it.start_ns >= 0
            and it.dur_ns >= 0]


def next_match(starts: np.ndarray, here: int, step: int) -> int:
    """Which match is next (step 1) or previous (-1) from a time, by the matches' starts
    (sorted), wrapping around at either end."""
    if step > 0:
        k = int(starts.searchsorted(here, side="right"))
        return k if k < len(starts) else 0
    k = int(starts.searchsorted(here, side="left")) - 1
    return k if k >= 0 else len(starts) - 1


def align_choice(iterations: Sequence[Iteration], cursor_ns: int) -> tuple[list[int], int]:
    """The numbers of the iterations that ranks can be aligned at, and the one offered: the
    iteration under the cursor, else the first."""
    numbers = sorted({it.number for it in iterations if it.start_ns >= 0})
    under = step_at(iterations, cursor_ns)
    return numbers, under if under is not None else numbers[0] if numbers else 0


class Prompts:
    """Asks on the prompt line, and acts on the answer."""

    def __init__(self, app: ProftuiApp) -> None:
        self.app = app
        self.mode = ""  # what the open prompt asks: "search", "iteration" or "align"
        self.align_default = 0  # the iteration A offers: the one at the cursor

    def ask(self, mode: str, placeholder: str) -> None:
        prompt = self.app.query_one("#prompt", Input)
        self.mode = mode
        prompt.placeholder = placeholder
        prompt.value = ""
        prompt.display = True
        # Focus now, not after the next refresh: keys typed right after `/` are the query.
        self.app.screen.set_focus(prompt)

    def close(self) -> None:
        self.app.query_one("#prompt", Input).display = False
        self.app.screen.set_focus(self.app.query_one(Timeline))

    def search(self) -> None:
        if self.app.index is not None:
            self.ask("search", SEARCH_HINT)

    def goto_iteration(self) -> None:
        app = self.app
        if app.index is not None and app.summary is None:
            app._status("The iterations are still being found: try again in a moment.")
        elif app.iterations:
            numbers = [it.number for it in app.iterations]
            self.ask("iteration", f"iteration number ({min(numbers)} to {max(numbers)}); "
                                  "Enter goes there, Esc cancels")
        else:
            app._status("This profile has no iterations.")

    def submitted(self, value: str) -> None:
        """The prompt's answer: acted on as its mode says."""
        app = self.app
        self.close()
        text = value.strip()
        if not text and self.mode == "align":
            text = str(self.align_default)
        if not text:
            return
        if self.mode == "search":
            try:
                pattern = pattern_of(text)
            except ProftuiError as exc:
                app._error(f"Search: {safe(exc)}")
                return
            app._status(f"Searching for {safe(text)} ...")
            app.run_search(pattern)
        elif self.mode == "iteration":
            self.go_to(text)
        elif self.mode == "align":
            self.align_at(text)

    # -- search ---------------------------------------------------------------------------------

    def search_done(self, text: str, matches: np.ndarray) -> None:
        app = self.app
        timeline = app.query_one(Timeline)
        timeline.set_matches(matches)
        app.match_count = len(matches)
        if not len(matches):
            app._status(f"No slice name matches {safe(text)}.")
            return
        verb = "matches" if len(matches) == 1 else "match"
        app._status(f"{plural(len(matches), 'slice')} {verb} {safe(text)} (n next, N previous)")
        self.next_match(1)

    def next_match(self, step: int) -> None:
        app = self.app
        timeline = app.query_one(Timeline)
        matches = timeline.matches
        if app.index is None or not len(matches):
            return
        starts = app.index.arrays["slices.start"][matches]
        here = timeline.cursor_ns
        if timeline.selected >= 0:
            here = int(app.index.arrays["slices.start"][timeline.selected])
        k = next_match(starts, here, step)
        timeline.select(int(matches[k]))
        app.match_status = (f"match {k + 1} of {fmt_count(len(matches))}: "
                            f"{safe(app.index.slice_name(int(matches[k])))}")
        app._status(app.match_status)

    # -- iterations -----------------------------------------------------------------------------

    def go_to(self, text: str) -> None:
        """Show iteration `text`: one rank's, or every rank's own step of that number."""
        app = self.app
        number = iteration_number(text)
        if number is None:
            app._status(f"Not an iteration number: {safe(text)}")
            return
        found = timed(app.iterations, number)
        if not found:
            app._status(f"No iteration {number} with a time window in this profile.")
            return
        groups = {it.group for it in found}
        if len(groups) < 2:
            app.routing.show_iteration(found[0])
            return
        # Every rank's own step N: the timeline shows them all, the ops count each rank's
        # slices in its own step (their steps do not line up, nor across hosts their clocks).
        windows = group_windows(found, number)
        lo, hi = min(w[0] for w in windows.values()), max(w[1] for w in windows.values())
        label = f"iteration {number} of {len(groups)} ranks, each its own"
        shift = app.query_one(Timeline).shift_of_group
        app.routing.zoom_to(min(w[0] - shift(g) for g, w in windows.items()),
                            max(w[1] - shift(g) for g, w in windows.items()))
        app._pane("ops").set_window(Window(label, lo, hi, windows))
        longest = max(it.dur_ns for it in found)
        app._status(f"{safe(label)}: {fmt_duration(min(it.dur_ns for it in found))} to "
                    f"{fmt_duration(longest)}")

    # -- ranks aligned --------------------------------------------------------------------------

    def align_ranks(self) -> None:
        """Ask at which iteration to align the ranks (the one at the cursor offered), or,
        aligned, put every rank back on its own clock."""
        app = self.app
        timeline = app.query_one(Timeline)
        if app.index is None or timeline.index is None:
            return
        if timeline.alignment is not None:
            timeline.align(None)
            app._status("Every rank is drawn on its own clock again.")
            return
        if len(ranks_of(app.index)) < 2:
            app._status(ONE_RANK)
            return
        numbers, self.align_default = align_choice(app.iterations, timeline.cursor_ns)
        if not numbers:
            app._status("This profile has no iterations with a time window to align the "
                        "ranks at.")
            return
        self.ask("align", f"iteration to align the ranks at ({numbers[0]} to {numbers[-1]}; "
                          f"Enter alone: {self.align_default}); Esc cancels")

    def align_at(self, text: str) -> None:
        """Draw every rank moved by its offset at iteration `text` (see core.rank_offsets)
        and show that iteration."""
        app = self.app
        assert app.index is not None
        number = iteration_number(text)
        if number is None:
            app._status(f"Not an iteration number: {safe(text)}")
            return
        try:
            found = rank_offsets(app.index, app.iterations, number)
        except ProftuiError as exc:
            app._status(safe(exc))
            return
        timeline = app.query_one(Timeline)
        timeline.align(found)
        windows = group_windows(app.iterations, number)
        app.routing.zoom_to(min(lo - found.offset_of(g) for g, (lo, _) in windows.items()),
                            max(hi - found.offset_of(g) for g, (_, hi) in windows.items()))
        range_now = timeline.range
        if range_now is not None:  # the ops follow the range, which now means each rank's own
            app._pane("ops").set_window(app.routing.range_window(*range_now))
        text = found.describe()
        app._status(f"{safe(text[:1].upper() + text[1:])}. Details, the ops and exports keep "
                    "each slice's own times.")
