"""How a simulated run labels itself. Kept tiny and import-free so that the run banner,
``metrics.json`` and the Table 3 caption can all say the same words without importing the simulator."""

BACKEND_CLASS = "SimulatedBackend"  # what ``backend_identity`` records for this backend
NOTE = (
    "SIMULATED BACKBONE — a test instrument with injected, known failure rates; "
    "its numbers measure the mechanisms against the simulator, not any real model"
)


def is_simulated(backend_identity: str) -> bool:
    return backend_identity == BACKEND_CLASS
