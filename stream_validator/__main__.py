"""``python -m stream_validator`` runs the command line."""

import sys

from stream_validator.cli.main import main

sys.exit(main())
