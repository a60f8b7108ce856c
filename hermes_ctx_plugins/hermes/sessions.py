"""Reading conversations out of hermes' session store (``$HERMES_HOME/state.db``), read-only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_state import SessionDB


def load_session(db_path: Path, session_id: str | None = None) -> tuple[str, list[dict[str, Any]]]:
    """``(session id, messages)`` of ``session_id``, or of the most recently active session.

    :raises LookupError: no such session, or no session at all.
    """
    db = SessionDB(db_path, read_only=True)
    if not session_id:
        recent = db.list_sessions_rich(limit=1, order_by_last_active=True, include_children=True)
        if not recent:
            raise LookupError(f"{db_path} holds no sessions")
        session_id = str(recent[0]["id"])
    elif db.get_session(session_id) is None:
        raise LookupError(f"{db_path} has no session {session_id!r}")
    return session_id, db.get_messages_as_conversation(session_id)
