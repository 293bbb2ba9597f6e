"""``python -m ledgermind.audit``: the claim auditor (see ``ledgermind.claim_audit``)."""

import sys

from ledgermind.claim_audit import main

sys.exit(main())
