"""What is printed and written out of a run: reports, comparisons, exports.

``report`` builds a run's report; ``detail`` one item as the inspector and ``show`` read it;
``figures`` formats figures with their intervals; ``papers`` sets a run beside its paper;
``compare`` and ``describe`` two runs side by side and what makes a run differ;
``export``, ``export_formats`` and ``inspect_log`` the rows and files ``n2f export`` writes.
"""
