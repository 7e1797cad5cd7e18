"""Colour themes: Textual themes for the app, and the slice palettes the timeline paints with.

Each theme pairs a Textual :class:`~textual.theme.Theme` (widgets, text, panels) with a
:class:`Palette`: the colours slices are drawn in (chosen by a stable hash of the slice name,
so a kernel keeps its colour across runs and traces), the idle and ruler colours, and the
selection and cursor marks. Palettes are picked so that neighbouring hash buckets differ in
hue and lightness, and so that labels stay readable on every slice colour.
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.theme import Theme

# Reserved colour names of the Trace Event Format (`cname`), as catapult defines them (RGB).
RESERVED_COLOURS: dict[str, tuple[int, int, int]] = {
    "thread_state_uninterruptible": (182, 125, 143), "thread_state_iowait": (255, 140, 0),
    "thread_state_running": (126, 200, 148), "thread_state_runnable": (133, 160, 210),
    "thread_state_sleeping": (240, 240, 240), "thread_state_unknown": (199, 155, 125),
    "background_memory_dump": (0, 180, 180), "light_memory_dump": (0, 0, 180),
    "detailed_memory_dump": (180, 0, 180), "vsync_highlight_color": (0, 0, 255),
    "generic_work": (125, 125, 125), "good": (0, 125, 0), "bad": (180, 125, 0),
    "terrible": (180, 0, 0), "black": (0, 0, 0), "grey": (221, 221, 221),
    "white": (255, 255, 255), "yellow": (255, 255, 0), "olive": (100, 100, 0),
    "rail_response": (67, 135, 253), "rail_animation": (244, 74, 63),
    "rail_idle": (238, 142, 0), "rail_load": (13, 168, 97), "startup": (230, 230, 0),
    "heap_dump_stack_frame": (128, 128, 128), "heap_dump_object_type": (0, 0, 255),
    "heap_dump_child_node_arrow": (204, 102, 0), "cq_build_running": (255, 255, 119),
    "cq_build_passed": (153, 238, 102), "cq_build_failed": (238, 136, 136),
    "cq_build_abandoned": (187, 187, 187), "cq_build_attempt_runnig": (222, 222, 75),
    "cq_build_attempt_passed": (103, 218, 35), "cq_build_attempt_failed": (197, 81, 81),
}


_RESERVED_ORDER = {name: i for i, name in enumerate(RESERVED_COLOURS)}
_RESERVED_HEX = ["#{:02x}{:02x}{:02x}".format(*rgb) for rgb in RESERVED_COLOURS.values()]


@dataclass(frozen=True)
class Palette:
    """Colours of the timeline for one theme (hex strings)."""

    slices: tuple[str, ...]
    background: str
    gutter: str
    text: str
    dim_text: str
    label_dark: str  # label colour on light slice colours
    label_light: str  # label colour on dark slice colours
    selection: str
    cursor: str
    focus: str
    iteration: str
    counter: str
    instant: str
    match: str
    range: str  # background of a selected time range
    flow: str  # flows drawn: their connectors, arrow heads and the partner's highlight

    def colour_index(self, name: str) -> int:
        """The colour (an index, see :meth:`colour_at`) of slices with this name: stable
        across runs and traces (CRC-32 of the name)."""
        return zlib.crc32(name.encode("utf-8", "surrogatepass")) % len(self.slices)

    def reserved_index(self, cname: str) -> int | None:
        """The colour index of a reserved colour name (`cname`), None if unknown."""
        i = _RESERVED_ORDER.get(cname)
        return None if i is None else len(self.slices) + i

    def colour_at(self, i: int) -> str:
        """The slice colour numbered `i`: the palette's own, then the reserved ones."""
        return self.slices[i] if i < len(self.slices) else _RESERVED_HEX[i - len(self.slices)]

    def label_colour(self, background: str) -> str:
        """A label colour readable on `background`."""
        return self.label_dark if _luminance(background) > 0.45 else self.label_light


@functools.lru_cache(maxsize=256)
def _luminance(colour: str) -> float:
    return luminance(colour)


def luminance(colour: str) -> float:
    """Relative luminance (0 black .. 1 white) of a "#rrggbb" colour."""
    r, g, b = (int(colour[i: i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


DARK = Palette(
    slices=("#5b8fd9", "#d98c4a", "#5fae6e", "#c0596b", "#8d74c9", "#4fb0b3", "#c9a23c",
            "#8c6a55", "#b86fb0", "#6f8f3a", "#4d6fb8", "#d0705a", "#3f9486", "#a65c8a",
            "#7f9ed6", "#b58b2e"),
    background="#15181d", gutter="#1e232b", text="#d8dde5", dim_text="#7d8796",
    label_dark="#101215", label_light="#f4f6f8", selection="#ffffff", cursor="#3a4250",
    focus="#262d38", iteration="#e0b040", counter="#6cc3e0", instant="#f0d060",
    match="#ff5fd2", range="#24354a", flow="#ffa94d",
)

LIGHT = Palette(
    slices=("#7aa7e8", "#f0a868", "#7cc48a", "#e07d8e", "#a896e0", "#6cc8cb", "#e2bf5a",
            "#b79780", "#d595cf", "#9bbd5e", "#7391d6", "#ec9a86", "#5fb5a7", "#cc86b2",
            "#a4bde8", "#d9ad4f"),
    background="#fbfbfa", gutter="#eceef1", text="#1d232b", dim_text="#6a7380",
    label_dark="#111418", label_light="#ffffff", selection="#000000", cursor="#d5dae2",
    focus="#e3e8ef", iteration="#b07800", counter="#1f7fb0", instant="#a06000",
    match="#c0008a", range="#d6e4f5", flow="#d9480f",
)

# High contrast: saturated colours spaced far apart in hue and lightness, pure black ground.
CONTRAST = Palette(
    slices=("#00a2ff", "#ffb000", "#00d26a", "#ff4d6d", "#b388ff", "#00e5e5", "#ffe600",
            "#ff7a00", "#ff66ff", "#9be000"),
    background="#000000", gutter="#000000", text="#ffffff", dim_text="#c0c0c0",
    label_dark="#000000", label_light="#ffffff", selection="#ffffff", cursor="#404040",
    focus="#202020", iteration="#ffff00", counter="#00ffff", instant="#ffff00",
    match="#ff00ff", range="#00305a", flow="#ff8800",
)

# Each theme's palette and the colours of its Textual theme (see THEMES).
_THEME_COLOURS: dict[str, tuple[Palette, dict[str, Any]]] = {
    "proftui-dark": (DARK, dict(primary="#5b8fd9", secondary="#8d74c9", accent="#d98c4a",
                                foreground=DARK.text, background=DARK.background,
                                surface="#1b1f26", panel="#232a33", warning="#e0b040",
                                error="#e06070", success="#5fae6e", dark=True)),
    "proftui-light": (LIGHT, dict(primary="#2f6fc0", secondary="#7056b0", accent="#c06a20",
                                  foreground=LIGHT.text, background=LIGHT.background,
                                  surface="#f2f3f5", panel="#e4e7ec", warning="#a06000",
                                  error="#b02030", success="#2f7f3f", dark=False)),
    "proftui-contrast": (CONTRAST, dict(primary="#00a2ff", secondary="#ff66ff",
                                        accent="#ffe600", foreground="#ffffff",
                                        background="#000000", surface="#000000",
                                        panel="#1a1a1a", warning="#ffe600", error="#ff4d6d",
                                        success="#00d26a", dark=True)),
}


@functools.cache
def _textual_themes() -> dict[str, tuple[Theme, Palette]]:
    from textual.theme import Theme

    return {name: (Theme(name=name, **colours), palette)
            for name, (palette, colours) in _THEME_COLOURS.items()}


def __getattr__(name: str) -> Any:
    # THEMES (name -> (Textual theme, palette)) is built on first use: naming a theme or
    # painting with a palette need not import Textual (`proftui PATH` reads the cache
    # meanwhile).
    if name == "THEMES":
        return _textual_themes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


THEME_NAMES = {"dark": "proftui-dark", "light": "proftui-light",
               "high-contrast": "proftui-contrast", "contrast": "proftui-contrast"}
DEFAULT_THEME = "proftui-dark"


def palette_for(theme_name: str, dark: bool = True) -> Palette:
    """The palette of a theme; Textual's own themes get the dark or light one."""
    if theme_name in _THEME_COLOURS:
        return _THEME_COLOURS[theme_name][0]
    return DARK if dark else LIGHT
