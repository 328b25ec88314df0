"""Items through the model: the asyncio runner, each item's steps, usage and budgets.

``runner`` drives a run; ``steps`` one item; ``attempts`` re-runs one item with edited
templates; ``usage`` counts tokens and cost; ``provenance`` records what reproduces a run;
``prepare`` builds a run or a resume from settings; ``dry_run``, ``smoke`` and ``bench``
are the commands of the same names, ``latency_stub`` the bench's model server.
"""
