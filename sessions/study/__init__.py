"""People's labels on a run and the figures made of them.

``annotations`` is the append-only event log; ``labels`` and ``final_tags`` whose labels an
item carries and the tags every count uses; ``sample`` a study's reproducible sample;
``agreement``, ``reliability`` and ``statistics`` agreement between people and the tagger's
quality with intervals; ``paired`` two runs compared item by item.
"""
