"""Our settings, read from hermes' own ``config.yaml``.

Everything becomes frozen dataclasses; any bad value raises :class:`~hermes_ctx_plugins.errors.ConfigError`
naming the key path, the value, what is valid and, for a file, the file and line. Every number
setting is finite, and no larger in size than :data:`MAX_FLOAT` (floats) or :data:`MAX_INT` (whole
numbers) unless its field allows more.

Three modules, one concern each:

* :mod:`.settings` — the sections as dataclasses: each key, its default and what it allows;
* :mod:`.reader` — a file in, YAML out, within the size, depth and value limits, with each key's line;
* :mod:`.load` — :func:`load_config`: the sections built and the active deployment applied.

How a field declares a bound or a choice, and the checking itself, are in
:mod:`hermes_ctx_plugins.options`, shared with every strategy's and provider's options.
"""

from __future__ import annotations

from ..environment import DEPLOYMENT_ENV, hermes_home
from ..options import MAX_FLOAT, MAX_INT, FrozenMap, build_dataclass, freeze, plugin_options
from .load import load_config
from .reader import MAX_CONFIG_BYTES, MAX_DEPTH, MAX_NODES, MAX_STRING_CHARS
from .settings import (
    ARCHIVE_SCOPES,
    DEFAULT_COMPRESSOR,
    DEFAULT_PROVIDERS,
    STORAGE_BACKENDS,
    ArchiveSettings,
    CompressionSettings,
    Config,
    Deployment,
    MemorySettings,
    ModelSettings,
    PluginSettings,
    ProviderSelection,
    SafetySettings,
    SkillsSettings,
    StorageSettings,
    SummaryModelSettings,
)

__all__ = [
    "ARCHIVE_SCOPES",
    "DEFAULT_COMPRESSOR",
    "DEFAULT_PROVIDERS",
    "DEPLOYMENT_ENV",
    "MAX_CONFIG_BYTES",
    "MAX_DEPTH",
    "MAX_FLOAT",
    "MAX_INT",
    "MAX_NODES",
    "MAX_STRING_CHARS",
    "STORAGE_BACKENDS",
    "ArchiveSettings",
    "CompressionSettings",
    "Config",
    "Deployment",
    "FrozenMap",
    "MemorySettings",
    "ModelSettings",
    "PluginSettings",
    "ProviderSelection",
    "SafetySettings",
    "SkillsSettings",
    "StorageSettings",
    "SummaryModelSettings",
    "build_dataclass",
    "freeze",
    "hermes_home",
    "load_config",
    "plugin_options",
]
