"""The ``n2f`` subcommands, one module per group; each adds its parsers and names its commands.

The groups register in the order ``n2f --help`` lists them: running, reading, upkeep, studies.
"""
