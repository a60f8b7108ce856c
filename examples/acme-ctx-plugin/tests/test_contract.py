"""The provider contract every memory provider must pass, run against ``acme-notes``.

Run ``pytest`` in the example once it is installed (``pip install -e .``): ``pyproject.toml``
enables hermes-ctx-plugins' pytest plugin, which gives the ``hermes_home`` fixture.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from acme_ctx_plugin import NotesProvider

from hermes_ctx_plugins.testing.pytest_plugin import ProviderContract


class TestNotesProvider(ProviderContract):
    @pytest.fixture
    def provider(self, hermes_home: Path) -> Iterator[NotesProvider]:
        provider = NotesProvider({}, hermes_home=hermes_home)
        yield provider
        provider.shutdown()
