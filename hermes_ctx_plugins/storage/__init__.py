"""Where the package keeps what it owns: one interface per store, one module per backend."""
