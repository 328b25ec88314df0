"""A scrolling pane that shows one rich renderable, pre-rendered to lines at its width.

Updating it never changes the layout (the pane's size is set by CSS; only its virtual
height changes), so showing the next item costs one render of its content and a
repaint of the visible lines: a ``Static`` with ``height: auto`` instead makes every
update re-flow the screen, rendering the content twice (to measure it, then to paint).
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip


class Pane(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    Pane { overflow-x: hidden; overflow-y: scroll; scrollbar-size-vertical: 1; }
    """

    def __init__(self, renderable: RenderableType = "", *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.renderable: RenderableType = renderable
        self.lines: list[list[Segment]] = []
        self._width = 0
        self._base: Style | None = None

    def update(self, renderable: RenderableType, home: bool = True) -> None:
        self.renderable = renderable
        self._width = 0
        self._render_lines()
        if home:
            self.scroll_to(0, 0, animate=False, immediate=True)

    @property
    def plain(self) -> str:
        """The pane's text as shown (for tests and search)."""
        return "\n".join("".join(segment.text for segment in line).rstrip() for line in self.lines)

    def _render_lines(self) -> None:
        width = self.scrollable_content_region.width
        if width <= 0:  # not laid out yet: draw once it is
            if self.is_mounted:
                self.call_after_refresh(self._ensure_rendered)
            return
        console = self.app.console
        options = console.options.update(width=width, max_width=width, height=None, highlight=False)
        self.lines = console.render_lines(self.renderable, options, pad=True)
        self._width = width
        self.virtual_size = Size(width, len(self.lines))
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        if self.scrollable_content_region.width != self._width:
            self._render_lines()

    def on_mount(self) -> None:
        self.call_after_refresh(self._ensure_rendered)

    def _ensure_rendered(self) -> None:
        if not self._width:
            self._render_lines()

    def render_lines(self, crop: Region) -> list[Strip]:
        self._base = self.rich_style  # once per paint: it is costly to compute per line
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self._base if self._base is not None else self.rich_style
        if index >= len(self.lines):
            return Strip.blank(width, base)
        strip = Strip(Segment.apply_style(self.lines[index], base), self._width)
        if self._width != width:  # between a resize and the re-render
            strip = strip.adjust_cell_length(width, base)
        return strip
