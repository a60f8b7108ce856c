"""A staged remove/replace pinned to the whole entry it matched is never matched as a *substring* when approved
(a second red-team pass on 54859e2): an entry changed meanwhile into a longer one holding the old text was removed or
replaced whole, though the approver was shown the old one."""

from __future__ import annotations

import pytest
from test_file_gate_hostile import main, memories, provider, tool


@pytest.mark.parametrize("action", ["remove", "replace"])
def test_a_staged_op_does_not_act_on_a_longer_entry_holding_the_pinned_text(
        action: str, capsys: pytest.CaptureFixture[str]) -> None:
    shown = "Old VPN config: use vpn-legacy.example.org"
    assert tool(provider(), target="memory", action="add", content=shown)["success"]
    args = {"content": "VPN: see the wiki"} if action == "replace" else {}
    staged = tool(provider(write_approval="stage"), target="memory", action=action, old_text="VPN config", **args)
    assert staged["staged"]
    capsys.readouterr()
    assert main(["memory", "pending"]) == 0
    assert shown in capsys.readouterr().out  # the approver is shown this entry
    # meanwhile the entry is rewritten into a longer one that holds the old text whole
    longer = shown + " -- KEEP: the auditors need this line until 2027, never remove it"
    assert tool(provider(), target="memory", action="replace", old_text="Old VPN", content=longer)["success"]
    main(["memory", "approve", staged["staged"]])
    assert "KEEP: the auditors" in (memories() / "MEMORY.md").read_text(), "acted on an entry the approver never saw"
