"""How a simulated run labels itself. Kept tiny and import-free so that the backend's description
(``SimulatedBackend.description``) and the simulator's own scripts say the same words; production
modules read them from the recorded run's backend (``backends/recorded.py``), never from here."""

NOTE = (
    "SIMULATED BACKBONE — a test instrument with injected, known failure rates; "
    "its numbers measure the mechanisms against the simulator, not any real model"
)
LABEL = "SIMULATED backbone (test instrument)"  # what answered, in the report's title
TAGS = ("simulated",)  # experiment-logger tags of a simulated run
