"""``python -m hermes_ctx_plugins.cli``: the same as the ``hermes-ctx`` command."""

from __future__ import annotations

import sys

from . import main

sys.exit(main())
