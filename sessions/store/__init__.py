"""Runs on disk: one folder per run, each file with one owner, read back without loading the run.

``runs`` is the run folder (``RunStore``); ``files`` the durable primitives every file uses;
``items`` the items written once at creation; ``results_log`` the append-only results;
``summary`` and ``index`` what lists of runs read; ``watch`` the stat readers follow a run by;
``places`` where each latest record lies, for readers of every record; ``fingerprint``, ``pack`` and ``prompts``
what a run is, as one file, and what its items were asked; ``form_memory`` the new-run
dialog's last choices; ``results`` a stored run as its engine reads it back.
"""
