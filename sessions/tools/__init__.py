"""The side effects an engine asks for with ``Step(kind="tool")``, all of them untrusted input.

``dispatch`` names the tools; ``sandbox`` and ``sandbox_server`` run model-written Python out
of process, as nobody; ``sparql``, ``sparql_worker`` and ``sparql_endpoint`` run model-written
queries read-only, with a timeout, on the embedded graph or an endpoint.
"""
