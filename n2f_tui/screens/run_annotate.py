"""The run screen's annotation keys: tag, untag, accept, done, blind, note.

Mixed into ``RunScreen``: the actions work on its state, cursor and item list, and each
ends in ``after_annotation``, which redraws what the change touched.
"""

from __future__ import annotations

from typing import Callable

from n2f_tui.screens.dialogs import ChoiceDialog, TextDialog
from n2f_tui.screens.run_parts import RunScreenParts
from n2f_tui.screens.tag_dialog import Code, TagDialog


class AnnotationActions(RunScreenParts):
    """Labelling the item under the cursor (``RunScreenParts``: what it uses of ``RunScreen``)."""

    def action_tag_add(self) -> None:
        """The tag dialog (``tag_dialog.TagDialog``): tick and untick codes with their keys, Enter applies them all."""
        index = self.current
        if index is None:
            return
        have = set(self.state.tags(index).codes)
        codes = [Code(t.code, t.label, (f"[{t.group}] " if t.group else "") + t.description, t.key)
                 for t in self.state.taxonomy()]
        codes += [Code(code, code) for code in sorted(have - {c.code for c in codes})]

        def done(chosen: frozenset[str] | None) -> None:
            if chosen is None or chosen == have:
                return
            for code in sorted(chosen - have):
                self.state.add_tag(index, code)
            for code in sorted(have - chosen):
                self.state.remove_tag(index, code)
            self.after_annotation(index, "labels: " + (", ".join(sorted(chosen)) or "none"))

        self.app.push_screen(TagDialog(f"Labels of {self.state.ids[index]}", codes, have), done)

    def action_tag_remove(self) -> None:
        index = self.current
        if index is None:
            return
        tags = self.state.tags(index)
        choices = [(t.code, f"{t.code} (automatic)", t.evidence[:120]) for t in tags.auto]
        choices += [(code, f"{code} (added by you)", label) for code, label in tags.manual.items()]
        if not choices:
            self.notify("this item has no tag to remove", timeout=2)
            return
        self._choose_tag(index, "Remove a tag", choices, self.state.remove_tag, "removed")

    def _choose_tag(self, index: int, title: str, choices: list[tuple[str, str, str]],
                    change: Callable[[int, str], None], done_word: str) -> None:
        """Ask for one tag code, apply ``change`` to the item with it, and redraw."""
        def done(code: str | None) -> None:
            if code:
                change(index, code)
                self.after_annotation(index, f"{done_word} {code}")

        self.app.push_screen(ChoiceDialog(title, choices), done)

    def action_accept(self) -> None:
        """Mark the item reviewed with its automatic tags as they stand, and move on to the next item."""
        index = self.current
        if index is None:
            return
        if self.state.blind:
            self.notify("blind: d marks the item done with your labels and moves on", timeout=2)
            return
        self.state.accept(index)
        cursor = self.vlist.cursor
        self.after_annotation(index, "automatic tags accepted as reviewed")
        if self.current == index:  # still listed (else the next item is under the cursor already)
            self.move_to(min(cursor + 1, self.vlist.count - 1))

    def action_done(self) -> None:
        """Mark the item done with the labels it has now, and move to the next item not yet reviewed."""
        index = self.current
        if index is None:
            return
        if not self.state.reviewed(index):
            self.state.accept(index)
        position = self.state.next_unlabelled(self.vlist.cursor)
        target = self.state.order[position] if position is not None else index
        self.after_annotation(target, "done" if position is not None else "done: every item shown is reviewed")
        self.move_to(self.state.order.index(target) if target in self.state.order else self.vlist.cursor)

    def action_blind(self) -> None:
        self.state.set_blind(not self.state.blind)
        self.n2f.blind = self.state.blind  # the home screen follows
        self.relist()
        self.notify("blind: automatic tags hidden" if self.state.blind else "automatic tags shown", timeout=1.5)

    def action_note(self) -> None:
        index = self.current
        if index is None:
            return

        def done(text: str | None) -> None:
            if text:
                self.state.note(index, text)
                self.after_annotation(index, "note saved")

        self.app.push_screen(TextDialog(f"Note on {self.state.ids[index]}"), done)

    def after_annotation(self, index: int, message: str) -> None:
        self.vlist.refresh_rows()
        self.update_list_title()
        if self.state.filter in ("annotated", "unreviewed", "unlabelled") or self.state.filter.startswith("tag:"):
            self.relist(keep=index)
        self.show_current()
        self.notify(message, timeout=1.5, markup=False)
