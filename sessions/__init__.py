"""Every side effect of n2f: the store, the runner, model backends, tools, studies, reports.

``api`` is the front ends' facade (the CLI and the inspector import from it and from the
packages' public modules); below it each package holds one feature: ``store`` (runs on
disk), ``run`` (items through the model), ``backends`` (model servers, cache, limits),
``tools`` (sandboxed programs and SPARQL), ``study`` (people's labels and agreement),
``reports`` (reports, comparisons, exports). ``config``, ``paths``, ``errors``, ``redact``
and ``collector`` are shared by all. Imports flow one way: front ends -> sessions -> engines.
"""
