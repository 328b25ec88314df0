"""The inspector's one rule for its workers: an unexpected error is shown, never fatal.

Textual's ``@work`` exits the app when a worker raises (``exit_on_error=True`` by default),
which cancels the runs going on in it. A worker of this inspector is decorated with
``guarded_work`` instead: what a worker expects (the project's own errors) it still handles
itself, and anything else (a ``KeyError`` in an engine's ``score``) becomes an entry of the
app's error log (``N2FApp.report_error``: a toast, and a line in the log that ctrl+p →
"Error log" opens, with the traceback). The screen stays and the runs go on.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from textual import work
from textual.dom import DOMNode


def report_error(node: DOMNode, what: str, exc: BaseException) -> None:
    """Put an error in the app's log from the event loop's thread."""
    app: Any = node.app
    app.report_error(what, exc)


def report_error_from_thread(node: DOMNode, what: str, exc: BaseException) -> None:
    """The same, from a worker thread (the log and the toast belong to the event loop)."""
    node.app.call_from_thread(report_error, node, what, exc)


def guarded_work(*, group: str, exclusive: bool = False, thread: bool = False) -> Callable[[Callable[..., Any]], Any]:
    """``@work(...)`` with the inspector's error rule; the log names the worker by its method."""

    def decorate(method: Callable[..., Any]) -> Any:
        what = method.__name__.strip("_").replace("_", " ")
        if inspect.iscoroutinefunction(method):
            @functools.wraps(method)
            async def body(node: DOMNode, *args: Any, **kwargs: Any) -> Any:
                try:
                    return await method(node, *args, **kwargs)
                except Exception as exc:
                    report_error(node, what, exc)
                    return None
        else:
            @functools.wraps(method)
            def body(node: DOMNode, *args: Any, **kwargs: Any) -> Any:
                try:
                    return method(node, *args, **kwargs)
                except Exception as exc:
                    report_error_from_thread(node, what, exc)
                    return None
        return work(body, group=group, exclusive=exclusive, thread=thread, exit_on_error=False)

    return decorate
