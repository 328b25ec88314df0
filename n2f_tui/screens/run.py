"""The run screen: progress, the item list and the highlighted item's detail.

Its keys come in three groups: moving and finding (here), labelling
(``run_annotate.AnnotationActions``) and following or driving the run while it goes on
(``run_live.LiveRunActions``); the rows of the list are drawn by ``widgets.itemrow``.

A key never waits on work: moving the cursor draws the item from what is stored (its
record, the prompts rebuilt), and re-scoring its outputs for the views (for a logic item
seconds of solver time, at worst) runs in an exclusive worker thread; a verdict that
comes after the cursor moved on is dropped. The footer shows the keys used
most; ``?`` lists them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.worker import get_current_worker
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.widgets import Footer, Static

from n2f_tui.screens.base import AppScreen
from n2f_tui.screens.dialogs import ChoiceDialog, TextDialog, choose_run_to_compare
from n2f_tui.screens.run_annotate import AnnotationActions
from n2f_tui.screens.run_live import METRICS_EVERY, LiveRunActions
from n2f_tui.state import RunState
from n2f_tui.widgets.detail import DetailView
from n2f_tui.widgets.idcolumn import IdColumn
from n2f_tui.widgets.itemrow import item_row, list_title
from n2f_tui.widgets.progress import RunHeader, progress_text
from n2f_tui.widgets.vlist import VirtualList
from n2f_tui.workers import guarded_work
from sessions import api
from sessions.collector import COLLECTOR
from sessions.reports.describe import describe_run
from sessions.errors import N2FError
from sessions.store.runs import RunStore

if TYPE_CHECKING:
    from n2f_tui.jobs import RunJob

TICK = 0.5  # seconds between looks at the run: results taken, rows and header redrawn
STREAM_TICK = 0.1  # seconds between redraws of the focused item's reply while it streams
COLLECT_AFTER_CLOSE = 1.0  # seconds after a run screen closes before its thawed heap is collected (sessions.collector)


class RunScreen(AnnotationActions, LiveRunActions, AppScreen):
    DEFAULT_CSS = """
    RunScreen #run-state { height: auto; padding: 0 1; background: $panel-darken-1; }
    RunScreen #body { layout: horizontal; height: 1fr; }
    RunScreen #items { width: 30%; min-width: 46; height: 1fr; border: round $panel-lighten-2; }
    RunScreen #items:focus { border: round $accent; }
    RunScreen DetailView { width: 1fr; }
    RunScreen.-narrow #body { layout: vertical; }
    RunScreen.-narrow #items { width: 1fr; height: 7; }
    """
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    BINDINGS = [  # shown in the footer: the keys of annotating; every key is in `?` and the palette
        Binding("j", "cursor(1)", "Next", show=False),
        Binding("k", "cursor(-1)", "Previous", show=False),
        Binding("g", "first", "First item", show=False),
        Binding("G", "last", "Last item", show=False),
        Binding("n", "wrong(1)", "Wrong", tooltip="Next wrong item (p: the previous one)"),
        Binding("p", "wrong(-1)", "Prev wrong", show=False),
        Binding("slash", "search", "Search"),
        Binding("f", "filter", "Filter"),
        Binding("s", "sort", "Sort", show=False),
        Binding("t", "tag_add", "Tag"),
        Binding("x", "tag_remove", "Untag", show=False),
        Binding("a", "accept", "Accept", tooltip="Accept the automatic tags as reviewed, then the next item"),
        Binding("d", "done", "Done", tooltip="Done: mark the item reviewed with its labels, then the next "
                "item not yet reviewed"),
        Binding("b", "blind", "Blind on/off (hide automatic tags)", show=False),
        Binding("m", "note", "Note", show=False),
        Binding("z", "zoom", "Zoom", tooltip="Zoom: the focused pane fills the screen (z or Escape restores)"),
        Binding("o", "expand", "Show all / fold", show=False),
        Binding("e", "edit", "Edit prompt", show=False),
        Binding("space", "pause", "Pause/continue", show=False),
        Binding("c", "cancel_run", "Cancel run", show=False),
        Binding("r", "resume", "Resume run", show=False),
        Binding("R", "report", "Report"),
        Binding("A", "agreement", "Agreement", show=False),
        Binding("C", "compare", "Compare", show=False),
        Binding("J", "scroll_detail(5)", "Scroll detail down", show=False),
        Binding("K", "scroll_detail(-5)", "Scroll detail up", show=False),
        Binding("escape", "back", "Back", show=False,
                tooltip="Clear the filter and search; with none, back to the runs"),
    ]

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        job = self.n2f.jobs.get(run_id)
        store = job.store if job is not None else RunStore.open(run_id)
        self.state = RunState(store, annotator=self.n2f.annotator, blind=self.n2f.blind)
        if self.state.blind and self.state.study:
            self.state.set_filter("study")
        if job is not None:
            job.drain()  # already in store.results()
        self.was_live = job is not None
        self.metrics = {}
        self._metrics_at = 0.0
        self._metrics_every = METRICS_EVERY
        self._metrics_cache = {}
        self.description = describe_run(store.meta).text
        self._ids = IdColumn(self.state.ids, [t.code for t in self.state.engine.taxonomy()])
        self._live_drawn = None
        self._live_detail = None
        self._scoring: tuple[int, int] | None = None  # the (index, version) a worker re-scores for the detail
        try:
            self.price = api.price_of(store)
        except N2FError:  # a broken config file is reported where it matters (starting runs)
            self.price = None

    # ------------------------------------------------------------ composition

    def compose(self) -> ComposeResult:
        yield RunHeader(id="header")
        yield Static("", id="run-state", markup=False)
        with Container(id="body"):
            yield VirtualList(self.render_row, self.row_key, empty="no items match", id="items")
            yield DetailView(id="detail")
        yield Footer(compact=True, show_command_palette=False)  # fits 80 columns; ctrl+p is listed in `?`

    def on_mount(self) -> None:
        COLLECTOR.hold()  # the run's items and records live as long as the screen: out of GC passes (till unmount)
        vlist = self.query_one(VirtualList)
        vlist.set_count(len(self.state.order), cursor=0)
        self.update_list_title()
        vlist.focus()
        self.update_header()
        self.call_after_refresh(self.show_current)
        self.set_interval(TICK, self.tick)
        self.set_interval(STREAM_TICK, self.draw_live)
        if not self.job:  # after the first paint: the report reads every record
            self.set_timer(0.5, self.refresh_metrics)

    def on_unmount(self) -> None:
        # the hold ends; the heap is collected a moment later, not on the closing key nor at app exit
        COLLECTOR.release(collect=True)
        self.app.set_timer(COLLECT_AFTER_CLOSE, COLLECTOR.collect_pending)

    # ------------------------------------------------------------------- data

    @property
    def job(self) -> RunJob | None:
        return self.n2f.jobs.get(self.run_id)

    @property
    def refused_actions(self) -> set[str]:
        """Keys that would only be refused now, left out of ``?``: accepting automatic tags in blind mode."""
        return {"accept"} if self.state.blind else set()

    @property
    def vlist(self) -> VirtualList:
        return self.query_one(VirtualList)

    @property
    def current(self) -> int | None:
        """The item index under the cursor (None when the list is empty)."""
        order = self.state.order
        cursor = self.vlist.cursor
        return order[cursor] if 0 <= cursor < len(order) else None

    @property
    def detail_ready(self) -> bool:
        """The detail shows the item under the cursor as it stands (tests and benchmarks wait on it)."""
        index = self.current
        if index is None:
            return True
        return self.query_one(DetailView).drawn((index, self.state.versions.get(index, 0)))

    def row_key(self, position: int) -> Any:
        index = self.state.order[position]
        return (index, self.state.versions.get(index, 0))

    def render_row(self, position: int) -> Text:
        width = self.vlist.scrollable_content_region.width or self.vlist.size.width
        return item_row(self.state, self._ids, self.state.order[position], width)

    def update_list_title(self) -> None:
        """The list's count on its border; the run's state (whose labels, filter, search, sort) on its own line."""
        listed = len(self.state.order)
        self.vlist.border_title = f"{listed} items" if listed == self.state.total else f"{listed} of {self.state.total}"
        self.query_one("#run-state", Static).update(list_title(self.state))

    def status_word(self) -> str:
        job = self.job
        if job is not None:
            return "paused" if job.paused else "running"
        return str(self.state.store.meta.get("status", ""))

    def update_header(self) -> None:
        job = self.job
        self.query_one(RunHeader).update(progress_text(
            self.state.store.meta, self.state.counts(), self.state.total, self.status_word(),
            live=job.progress if job is not None else None, metrics=self.shown_metrics(), description=self.description,
            usage=self.state.usage, price=self.price, formats=self.n2f.formats))

    def shown_metrics(self) -> dict[str, Any]:
        """The header's metrics; in blind mode without those named after a tag (rgp's profile counts)."""
        if not self.state.blind:
            return self.metrics
        codes = set(self.state.labels())
        return {k: v for k, v in self.metrics.items() if k not in codes}

    def show_current(self) -> None:
        """Draw the item under the cursor from what is stored; its re-scoring goes to a worker.

        Reading the record and rebuilding the prompts take a millisecond; re-judging the
        outputs with their views may take seconds (a logic reply running Z3 into its
        timeout), so it runs in ``score_detail`` and the views say "scoring…" meanwhile.
        """
        detail = self.query_one(DetailView)
        index = self.current
        if index is None:
            self._scoring = None
            detail.clear("no item: the filter or search matches nothing (Escape clears it)")
            return
        state = self.state
        key = (index, state.versions.get(index, 0))
        position = f"{self.vlist.cursor + 1}/{len(state.order)}" + (
            f" of {state.total}" if len(state.order) != state.total else "")
        if key == detail.shown:  # the same item, maybe at another place in the list (a filter cleared)
            detail.move_position(position)
            return
        record = state.record(index)
        info = api.item_detail(state.store, index, record or {}, annotations=state.annotation_events(index),
                               scored=False)
        detail.show(info, state.tags(index, record), position, state.score_key, key)
        self._scoring = key if info.needs_scoring else None
        if info.needs_scoring:  # once the stored parts are painted: the worker's thread would slow that paint
            self.call_after_refresh(self._score_if_current, key, info)

    def _score_if_current(self, key: tuple[int, int], info: api.ItemDetail) -> None:
        if self._scoring == key:
            self.score_detail(key, info)

    @guarded_work(thread=True, exclusive=True, group="detail")
    def score_detail(self, key: tuple[int, int], info: api.ItemDetail) -> None:
        """The item's outputs re-judged with their views; dropped if the cursor moved on meanwhile."""
        worker = get_current_worker()
        try:
            scored: Any = api.score_detail(self.state.store, info)
        except Exception as exc:  # an engine bug is shown in the detail, it does not take the screen down
            scored = exc
        if not worker.is_cancelled:
            self.app.call_from_thread(self._scored, key, scored)

    def _scored(self, key: tuple[int, int], scored: Any) -> None:
        if self._scoring != key:
            return
        self._scoring = None
        if isinstance(scored, Exception):
            self.n2f.report_error(f"re-scoring {self.state.ids[key[0]]}", scored)
            return
        self.query_one(DetailView).show_scored(scored, key)

    def relist(self, keep: int | None = None) -> None:
        """After a filter, search, sort or new records: the same item stays under the cursor."""
        keep = self.current if keep is None else keep
        order = self.state.recompute()
        cursor = 0
        if keep is not None:
            try:
                cursor = order.index(keep)
            except ValueError:
                cursor = min(self.vlist.cursor, max(0, len(order) - 1))
        self.vlist.set_count(len(order), cursor=cursor)
        self.update_list_title()
        self.show_current()

    # ------------------------------------------------------------ navigation

    def on_virtual_list_highlighted(self, event: VirtualList.Highlighted) -> None:
        self.show_current()

    def move_to(self, position: int) -> None:
        """Move the cursor and draw the detail now (not one message later)."""
        self.vlist.move_to(position, announce=False)
        self.show_current()

    def action_cursor(self, delta: int) -> None:
        self.move_to(self.vlist.cursor + delta)

    def action_first(self) -> None:
        self.move_to(0)

    def action_last(self) -> None:
        self.move_to(self.vlist.count - 1)

    def action_wrong(self, step: int) -> None:
        position = self.state.next_wrong(self.vlist.cursor, step)
        if position is None:
            self.notify("no further wrong item" if step > 0 else "no earlier wrong item", timeout=2)
            return
        self.move_to(position)

    def action_scroll_detail(self, lines: int) -> None:
        self.query_one(DetailView).scroll_by(lines)

    def action_expand(self) -> None:
        """Every table row, tree node, tool result and gold value whole in the detail, or folded again."""
        self.query_one(DetailView).toggle_expanded()

    def action_search(self) -> None:
        """A new search: the field starts empty (the current search is named in the title), so
        Enter never re-applies an old query unseen; Enter on an empty field clears the search."""
        current = f" (now “{self.state.query}”; empty Enter clears it)" if self.state.query else ""

        def done(query: str | None) -> None:
            if query is None:
                return
            self.state.set_query(query)
            self.relist()
            self.notify(f"search “{self.state.query}”: {len(self.state.order)} item(s)" if self.state.query
                        else "search cleared", timeout=2, markup=False)

        self.app.push_screen(TextDialog(f"Search ids, question text and outputs{current}", allow_empty=True,
                                        placeholder="text to look for"), done)

    def action_filter(self) -> None:
        def done(key: str | None) -> None:
            if key:
                self.state.set_filter(key)
                self.relist()

        self.app.push_screen(ChoiceDialog("Show items", self.state.filter_choices(), self.state.filter), done)

    def action_sort(self) -> None:
        def done(key: str | None) -> None:
            if key:
                self.state.set_sort(key)
                self.relist()

        self.app.push_screen(ChoiceDialog("Sort items by", self.state.sort_choices(), self.state.sort), done)

    def action_back(self) -> None:
        """Escape: a filter or search in force is cleared first (and says so); else back to the runs."""
        if self.state.filter != "all" or self.state.query:
            self.state.filter, self.state.query = "all", ""
            self.relist()
            self.notify("filter and search cleared: Escape again goes back to the runs", timeout=2)
            return
        self.app.pop_screen()

    def action_zoom(self) -> None:
        """The focused pane fills the screen (the item list focused: the engine views); again to restore."""
        if self.maximized is not None:
            self.minimize()
            return
        target = self.focused
        if target is None or isinstance(target, VirtualList) or not target.region:
            target = self.query_one("#col-prompt" if self.query_one(DetailView).stacked else "#col-views")
            target.focus()
        if self.maximize(target, container=False):
            self.notify("z or Escape restores the layout", timeout=2)

    def action_report(self) -> None:
        self.n2f.open_report(self.run_id)

    def action_agreement(self) -> None:
        from n2f_tui.screens.agreement import AgreementScreen

        if self.n2f.refuses_in_blind("agreement view"):
            return

        def jump(item_id: str | None) -> None:
            if item_id:
                self.jump_to(item_id)

        self.app.push_screen(AgreementScreen(self.state.store, self.state.annotator), jump)

    def action_compare(self) -> None:
        from sessions.store.index import list_run_meta

        if not self.n2f.refuses_in_blind("comparison"):
            choose_run_to_compare(self, self.state.store.meta, reversed(list_run_meta()), "Compare with")

    def action_edit(self) -> None:
        index = self.current
        if index is None:
            return
        from n2f_tui.screens.editor import EditorScreen

        self.app.push_screen(EditorScreen(self.state, index))

    def jump_to(self, item_id: str) -> None:
        index = self.state.store.find_item(item_id)
        if index is None:
            return
        if index not in self.state.order:
            self.state.filter, self.state.query = "all", ""
            self.state.recompute()
            self.vlist.set_count(len(self.state.order))
            self.update_list_title()
        self.move_to(self.state.order.index(index))
