"""What the run screen's key mixins (``run_annotate``, ``run_live``) may use of ``RunScreen``, typed.

The mixins are parts of one screen split by concern: they call the screen's Textual API
(``notify``, ``app``, ``query_one``, ``n2f``) and a few parts ``RunScreen`` defines (its
state, cursor and list, and the redraws). ``RunScreenParts`` declares those parts once, and
for the checker only it derives from ``AppScreen``, so every call to the screen is checked
against Textual's own signatures. A Protocol with self-typed methods would instead restate
that API (``query_one`` alone has generic overloads) and every method the mixins call on
themselves. At run time the class is a plain ``object`` with annotations: the screen's
MRO, bindings and CSS are those of ``RunScreen(…, AppScreen)``, as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from n2f_tui.jobs import RunJob
    from n2f_tui.screens.base import AppScreen
    from n2f_tui.state import RunState
    from n2f_tui.widgets.vlist import VirtualList

    _Screen = AppScreen
else:
    _Screen = object


class RunScreenParts(_Screen):
    """The parts of ``RunScreen`` its mixins use; ``RunScreen.__init__`` sets the attributes."""

    run_id: str
    state: RunState
    description: str  # the run's one-line description in the header (its model, engine, options)

    if TYPE_CHECKING:  # defined by RunScreen; declared here so that the mixins' calls are checked
        @property
        def job(self) -> RunJob | None: ...

        @property
        def vlist(self) -> VirtualList: ...

        @property
        def current(self) -> int | None: ...

        def update_header(self) -> None: ...

        def update_list_title(self) -> None: ...

        def show_current(self) -> None: ...

        def relist(self, keep: int | None = None) -> None: ...

        def move_to(self, position: int) -> None: ...
