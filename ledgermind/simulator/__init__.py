"""A fault-injecting simulated backbone: a TEST INSTRUMENT, not a model (see ``backend.py``).

Reached only through ``conf/backend/simulated.yaml``'s ``_target_`` so that ``ledgermind.backends``
never imports it. Importing ``ledgermind.simulator.backend`` registers ``simulated`` in ``BACKENDS``.
"""
