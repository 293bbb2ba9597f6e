"""``python -m ledgermind.audit``: the claim auditor (see ``ledgermind.audit.claims``)."""

import sys

from ledgermind.audit.claims import main

sys.exit(main())
