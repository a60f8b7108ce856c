"""Options a caller builds in code are held to their choices too: a mode compared by equality must
not fail open because of a typo that the same value in config.yaml would have been refused for."""

from __future__ import annotations

import pytest

from hermes_ctx_plugins.errors import ConfigError
from hermes_ctx_plugins.memory.file.provider import FileOptions, FileProvider
from hermes_ctx_plugins.memory.remote.mem0 import Mem0Options, Mem0Provider


def test_a_mistyped_write_approval_built_in_code_is_refused_like_the_same_value_in_config() -> None:
    with pytest.raises(ConfigError, match=r"'Block' is not an approval mode \(did you mean 'block'\?\)"):
        FileProvider(FileOptions(write_approval="Block"))
    with pytest.raises(ConfigError, match="'Block' is not an approval mode"):
        FileProvider({"write_approval": "Block"})


def test_a_valid_choice_built_in_code_is_kept() -> None:
    assert FileProvider(FileOptions(write_approval="block")).options.write_approval == "block"
    assert Mem0Provider(Mem0Options(api_key="k", run_id="session")).options.run_id == "session"


def test_a_remote_choice_built_in_code_is_checked() -> None:
    with pytest.raises(ConfigError, match=r"ctx_plugins\.options\.ctx-mem0\.run_id: 'sesion' is not valid"):
        Mem0Provider(Mem0Options(api_key="k", run_id="sesion"))
