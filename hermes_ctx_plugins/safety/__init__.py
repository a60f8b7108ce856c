"""Memory safety: the threat scanner and the secret redactor every store uses before writing."""
