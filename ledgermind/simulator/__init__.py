"""A fault-injecting simulated backbone: a TEST INSTRUMENT, not a model (see ``backend.py``).

Reached only through ``conf/backend/simulated.yaml``'s ``_target_`` (and, for readers of a run,
``backends/recorded.py``, which resolves the recorded backend name through that same ``_target_``),
so that no production module imports it. Importing ``ledgermind.simulator.backend`` registers
``simulated`` in ``BACKENDS``; importing anything of this package registers its census section and
S-RFA check (``plugin.py``), so every process that touches a simulated run counts it the same way.
"""

from ledgermind.simulator import plugin as plugin
