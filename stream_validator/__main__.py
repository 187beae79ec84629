"""``python -m stream_validator`` runs the command line."""

import sys

from stream_validator.cli import main

sys.exit(main())
