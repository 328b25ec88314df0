"""Model servers as a run sees them: one request per engine step, one completion back.

``base`` is the boundary; ``models`` reads ``-m`` specs and builds a backend from the
registered kinds; ``offline``, ``openai_backend`` and ``local_backend`` are the kinds;
``limits``, ``overload`` and ``rate_headers`` keep calls within what a server holds;
``cache`` and ``service`` the response cache; ``streaming`` a reply as the UI watches it.
"""
