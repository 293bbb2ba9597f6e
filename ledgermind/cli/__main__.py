"""``python -m ledgermind.cli``: the ``ledgermind`` console command."""

import sys

from ledgermind.cli.commands import main

sys.exit(main())
