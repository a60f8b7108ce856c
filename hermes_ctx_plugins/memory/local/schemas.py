"""The tools ctx-local offers the model: their JSON schemas and the bounds in them (checked by :mod:`.arguments`)."""

from __future__ import annotations

from typing import Any

#: a remembered fact longer than this is a document, not a fact
MAX_FACT_CHARS = 2_000
#: the longest ``ctx_memory_search`` query (keywords or a question; a query uses 24 terms at most)
MAX_QUERY_CHARS = 2_000
#: the most ids one ``ctx_memory_forget`` call deletes
MAX_FORGET_IDS = 100
#: the largest memory id: SQLite's largest integer (ids are rowids, from 1)
MAX_ID = 2**63 - 1

TOOL_SCHEMAS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "ctx_memory_search",
        "description": ("Search long-term memory: earlier conversations with this user and facts saved with "
                        "ctx_memory_remember. Use it when the user refers to something from a past session that "
                        "is not in the recalled context. Returns excerpts with their ids and dates."),
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                      "description": "Keywords or a question."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5,
                      "description": "Results (default 5)."}},
            "required": ["query"]}}},
    {"type": "function", "function": {
        "name": "ctx_memory_remember",
        "description": ("Save one durable fact to long-term memory (a decision, a name, a value, a setting) so "
                        "future sessions recall it when a message is about it. Unlike the notes of a `memory` tool, "
                        "if you also have one (carried into every turn, so kept few and compact), these are "
                        "unbounded and shown only when relevant: use this for specifics only some conversations "
                        "need. One short self-contained sentence; no secrets."),
        "parameters": {"type": "object", "properties": {
            "fact": {"type": "string", "minLength": 1, "maxLength": MAX_FACT_CHARS,
                     "description": f"The fact, at most {MAX_FACT_CHARS:,} characters."},
            "scope": {"type": "string", "enum": ["chat", "user"], "default": "chat",
                      "description": "'chat' (default): recalled in this chat only; 'user': in all of the "
                                     "user's chats."}},
            "required": ["fact"]}}},
    {"type": "function", "function": {
        "name": "ctx_memory_forget",
        "description": ("Delete memories by id (the #numbers shown in recalled context or search results), "
                        "for example when the user asks you to forget something or a memory is wrong."),
        "parameters": {"type": "object", "properties": {
            "ids": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": MAX_ID},
                    "minItems": 1, "maxItems": MAX_FORGET_IDS}},
            "required": ["ids"]}}},
]
#: each tool's ``parameters`` schema, which its arguments are checked against
PARAMETERS = {schema["function"]["name"]: schema["function"]["parameters"] for schema in TOOL_SCHEMAS}
