"""How the scanner reads a text and runs the rules on it: one engine for every rule family.

``views`` (normalisation: folding, look-alikes, widths, invisible characters; maps back to the original), ``decode``
(base64, hex, escapes, tags, shell quoting, leetspeak, declared encodings), ``match`` (anchors, index, windows),
``context`` (what must hold around a match), ``values`` (what a secret's value looks like), ``layouts`` (secrets
found by their place in a command or a table), ``redact`` (the redactor) and ``scanner`` (the scanner).
"""
