"""``python -m n2f_tui`` is the ``n2f`` command."""

from n2f_tui.cli import entry

if __name__ == "__main__":
    entry()
