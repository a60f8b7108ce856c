"""The SQLite backend: one file per store under ``$HERMES_HOME``."""
