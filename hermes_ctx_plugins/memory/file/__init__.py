"""The ``file`` provider: hermes-compatible MEMORY.md / USER.md per owner, its reviewer and skills."""
