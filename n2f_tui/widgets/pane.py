"""A scrolling pane that shows one rich renderable, pre-rendered to lines at its width.

Updating it never changes the layout (the pane's size is set by CSS; only its virtual
height changes), so showing the next item costs one render of its content and a
repaint of the visible lines: a ``Static`` with ``height: auto`` instead makes every
update re-flow the screen, rendering the content twice (to measure it, then to paint).

Everything is fitted to the pane's width (``n2f_tui.fit``): text wraps, a token longer
than the line (an IRI, an expression) is broken with a mark, engine views share the width
among their columns before breaking anything. Only what cannot wrap (a grid of cells) is
drawn at its natural width; the pane then scrolls sideways to it, a page per ←/→.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from n2f_tui.fit import Fitted, break_tokens


class Pane(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    Pane { overflow-x: auto; overflow-y: scroll; scrollbar-size-vertical: 1; scrollbar-size-horizontal: 1; }
    """
    BINDINGS = [
        Binding("left", "page_sideways(-1)", "Page left", show=False),
        Binding("right", "page_sideways(1)", "Page right", show=False),
    ]

    def __init__(self, renderable: RenderableType = "", *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.renderable: RenderableType = renderable
        self.lines: list[list[Segment]] = []
        self._width = 0  # the pane's width the lines were rendered for
        self._content_width = 0  # the widest line: more than the pane's width when a table needs it
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
        if width <= 0:  # not laid out yet, or hidden: ``on_resize`` draws it once it has a width (asking again
            return      # after each refresh instead kept a hidden pane busy for as long as it stayed hidden)
        console = self.app.console
        options = console.options.update(width=width, max_width=width, height=None, highlight=False)
        self.lines = []
        for part in parts(self.renderable):
            if isinstance(part, Text):
                part = break_tokens(part, width)
            self.lines += console.render_lines(part, options.update_width(natural_width(console, options, part)),
                                               pad=True)
        self._width = width
        self._content_width = max((Segment.get_line_length(line) for line in self.lines), default=width)
        if self._content_width > width:  # one length for every line: strips know their length without counting
            self.lines = [Segment.adjust_line_length(line, self._content_width) for line in self.lines]
        self.virtual_size = Size(self._content_width, len(self.lines))
        self.refresh()

    def action_page_sideways(self, direction: int) -> None:
        """What is wider than the pane (a grid), a page at a time, not a column per key."""
        self.scroll_relative(x=direction * max(1, self.scrollable_content_region.width - 4), animate=False)

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
        strip = Strip(Segment.apply_style(self.lines[index], base), self._content_width)
        if scroll_x:
            strip = strip.crop(scroll_x, scroll_x + width)
        return strip.adjust_cell_length(width, base)


WIDEST = 400  # cells: a table wider than this wraps its cells rather than the pane scrolling further


def parts(renderable: RenderableType) -> list[RenderableType]:
    """A group's members, nested groups flattened, so each can be drawn at the width it needs."""
    if isinstance(renderable, Group):
        return [p for member in renderable.renderables for p in parts(member)]
    return [renderable]


def natural_width(console: Console, options: ConsoleOptions, part: RenderableType) -> int:
    """The width to draw ``part`` at, up to ``WIDEST``: text and fitted parts at the pane's width; a
    grid (``Fitted.fixed``) at its own; another table (a report's) keeps each cell on one line, since
    Rich squeezes columns into ellipses even at its measured minimum."""
    width = options.max_width
    if isinstance(part, (str, Text)) or (isinstance(part, Fitted) and not part.fixed):
        return width
    if isinstance(part, Fitted):
        return max(width, min(Measurement.get(console, options.update_width(WIDEST), part).maximum, WIDEST))
    measured = Measurement.get(console, options.update_width(WIDEST), part)
    needed = measured.maximum if isinstance(part, Table) and part.show_header else measured.minimum
    return max(width, min(needed, WIDEST))
