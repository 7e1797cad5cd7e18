"""What proftui's two apps (one profile, two compared) share: the themes and the timelines'
palette, the panes' size, and cancelling a load with Esc."""

from __future__ import annotations

import threading
import time

from textual.app import App
from textual.binding import Binding

from proftui.themes import THEMES, Palette, palette_for
from proftui.tui.widgets.timeline import ZOOM, Timeline

# The timeline's window keys: (key, the timeline's action, its description, in the footer).
TIMELINE_KEYS = (("w", "zoom_in", "Zoom in", True), ("s", "zoom_out", "Zoom out", True),
                 ("a", "pan_left", "Pan left", False), ("d", "pan_right", "Pan right", False),
                 ("0", "reset", "Show everything", False), ("f", "fit", "Fit", True))


class BaseApp(App[None]):
    """The shared keys and state; a subclass composes `#main` (the timelines) and `#panes`,
    says what its status line shows and which timeline the window keys move."""

    BINDINGS = [
        Binding("q", "quit", "Quit"),
        # before the focused widget's own Esc, while loading only (see check_action)
        Binding("escape", "cancel_load", "Cancel load", show=False, priority=True),
        Binding("plus", "resize_panes(2)", "Taller panes", show=False),
        Binding("minus", "resize_panes(-2)", "Shorter panes", show=False),
        Binding("m", "maximise", "Maximise", show=False),
        Binding("T", "next_theme", "Theme", show=False),
        # The timeline's window keys work from the panes too, before the pane's own keys
        # (priority) whenever a timeline is on screen; a text box keeps its letters.
        # They stand for the timeline's own bindings in the footer, as they take the keys.
        *(Binding(key, f"timeline('{action}')", description, show=shown, priority=True,
                  group=ZOOM if key in "ws" else None)
          for key, action, description, shown in TIMELINE_KEYS),
    ]

    def __init__(self, theme: str) -> None:
        super().__init__()
        self.error: str | None = None  # why it could not be opened, said again on exit
        self._cancel = threading.Event()
        self._loading = True
        self._started = time.monotonic()
        for textual_theme, _ in THEMES.values():
            self.register_theme(textual_theme)
        self.theme = theme

    def _status(self, text: str) -> None:
        raise NotImplementedError

    def watch_theme(self, theme: str) -> None:
        if not self.screen_stack:  # set in __init__: on_mount applies it
            return
        palette = self.palette()
        for timeline in self.query(Timeline):
            timeline.set_palette(palette)
        self.palette_changed(palette)

    def palette(self) -> Palette:
        """The slice colours of the theme shown."""
        dark = self.current_theme.dark if self.current_theme is not None else True
        return palette_for(self.theme, dark)

    def palette_changed(self, palette: Palette) -> None:
        """Hook: other widgets drawn in the slice colours."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_load":  # otherwise Esc goes on to the focused widget
            return self._loading and not self._cancel.is_set()
        if action == "timeline":  # not while none is on screen (overview, maximised panes,
            # a dialog over it); a text box never sees these bindings (it consumes the keys)
            return self.screen is self.screen_stack[0] and self.key_timeline() is not None
        return True

    def key_timeline(self) -> Timeline | None:
        """The timeline the window keys move (None while none is on screen)."""
        raise NotImplementedError

    def action_timeline(self, action: str) -> None:
        """A timeline key pressed, wherever the focus is: the timeline acts on it."""
        timeline = self.key_timeline()
        if timeline is not None:
            getattr(timeline, f"action_{action}")()

    def action_cancel_load(self) -> None:
        self._cancel.set()

    def action_resize_panes(self, step: int) -> None:
        panes = self.query_one("#panes")
        panes.styles.height = min(max(panes.size.height + step, 4), max(self.size.height - 8, 4))

    def action_maximise(self) -> None:
        """Give the whole screen to the panes or to the timeline (where the focus is)."""
        panes = self.query_one("#panes")
        main = self.query_one("#main")
        if panes.has_class("maximised") or not main.display:
            panes.remove_class("maximised")
            main.display = panes.display = True
        elif self.focused is not None and panes in self.focused.ancestors:
            panes.add_class("maximised")
            main.display = False
        else:
            panes.display = not panes.display
        self.refresh_bindings()  # the timeline's keys come and go with it

    def action_next_theme(self) -> None:
        names = list(THEMES)
        current = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(current + 1) % len(names)]
        self._status(f"theme {self.theme}")
