"""Developer tools, not the agent and not a user's workflow: the wire check against the
request-logging fake server, NCC's unit-table generator, mutation testing, the output digest of a
refactor, and the generators of the bundled sample set and the tiny test model. They sit in the
instrument layer (they may use ``ledgermind.testing``); nothing in production imports them. Each
has a thin ``scripts/NAME.py`` wrapper (``gen_unit_table.py`` for ``unit_table``,
``make_sample_set.py`` for ``sample_set``, ``make_tiny_model.py`` for ``tiny_model``)."""
