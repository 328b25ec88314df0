"""The inspector's screens, one module each: home, run, editor, report, compare, agreement, help, dialogs."""
