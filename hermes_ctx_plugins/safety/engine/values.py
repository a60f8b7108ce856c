"""What a secret's value looks like, and the secret rules' checks that read a match's groups.

A value must look like a secret -- random enough, not a placeholder, a name, a path or documentation's example --
before a ``key: value`` shape counts as one. The checks at the end are named by the secret rules that use them; each
reads a match's named groups (``key``, ``value``, ``user``...), which is why it is code.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import partial

from ..rules.record import lazy

#: code's dotted name (``settings.db_pass``, ``config.password1``): a value in most places, not in a URL's password
_DOTTED = r"[a-z_][a-z_]*\d{0,3}(?:\.[a-z_][a-z_]*\d{0,3})+"
#: a call of code (``get_secret(...)``, ``os.getenv(...)``): no value where written bare; a quoted one is a string,
#: and a Django key holds "(" (a red-team generator: ``SECRET_KEY = "k(9x)2m#v!q..."`` was kept)
_DOTTED_CALLS = _DOTTED + r"\(.*|[a-z_]\w*(?:\.[a-z_]\w*)+\(.*"
_CALLS = _DOTTED_CALLS + r"|[a-z_]\w*\(.*"
_NOT_A_STRING = (
    # a variable, a format's field, a template's, a mask, *args, a path; a value merely starting with "*", "/" or "~"
    # is not one (*Hx82kQ!mz, an AWS secret key /k3Rz9+Yw8/...: a red-team pass), nor one that only starts with a
    # placeholder's word (My_Passw0rd!, Example@2024: "my_password", "example-token" are placeholders)
    r"(?i)[$%{<\[(].*|#(?:[{\s]|[0-9a-f]{3,8}$).*|\*+(?:[a-z_][a-z_-]*\d{0,2}\*?|\(.*|[a-z_]\w*\(.*)?|(?:~[\w.-]*|\.{1,2})?/[\w.@:/-]*|"
    r".*(?:\.\.\.|…|xxx|\*\*\*).*|(?:your|my|some|an?|the|example|sample|dummy|fake)[-_ ][a-z_ -]*|"
    r"(?:change_?me|pass(?:word|wd)?|pwd|secret|token|placeholder|redacted|none|null|nil|true|false|undefined|required|"
    r"optional|hidden|masked|empty|unset|todo|tbd|n/?a)|" + _DOTTED + r"|"
    # name[: Optional[str, form['password', auth[1 (a password's letters and digits before "[" are no name)
    r"[a-z]+(?:_[a-z]+)+|[a-z_][a-z_.]*\d{0,2}\[.*|"
    r"(?:[\w.-]+/)+[\w-]+\.[a-z]{1,5}|"
    # documentation's own example values (AKIAIOSFODNN7EXAMPLE), and a word of another script standing for the value
    # ("postgresql://用户名:密码@主机")
    r".+example.*|example(?:[-_.][a-z]+)*|[^\x00-\x7f]{1,12}")
_NOT_A_VALUE = lazy(_NOT_A_STRING + "|" + _CALLS)
#: what a whole quoted value is not, but for a plain call's shape (a dotted call stays code's: ``"os.getenv(X)"`` in
#: a JSON of code)
_NOT_A_QUOTED_VALUE = lazy(_NOT_A_STRING + "|" + _DOTTED_CALLS)
#: a generated key's symbols (Django's ``get_random_secret_key`` alphabet, less what code's arguments hold: ``=+``)
_KEY_SYMBOLS = frozenset("!@#$%^&*")


def _not_a_value(v: str, *, quoted: bool = False) -> bool:
    """Whether ``v`` (quotes and closing punctuation set aside) stands for no value (:data:`_NOT_A_VALUE`); the whole of
    a quoted string shaped like a plain call but holding two or more of a generated key's symbols is a value
    (``"k(9x)2m#v!q..."``: a review found ``"get_random_string(length=50)"``, ``"bcrypt(password+salt)"``,
    ``"vault(secret/data/app#key)"`` taken for keys when one symbol was enough)."""
    if quoted and len(_KEY_SYMBOLS.intersection(v)) >= 2 and not _NOT_A_QUOTED_VALUE.fullmatch(v):
        return False
    return bool(_NOT_A_VALUE.fullmatch(v))


def _quoted(view: str, m: re.Match[str]) -> bool:
    """Whether the value of ``m`` is the whole of a quoted string in ``view`` (the same quote before and after it:
    ``"os.getenv('X')"`` holds another)."""
    start, end = value_span(m)
    return start > 0 and view[start - 1] in "'\"" and view[end:end + 1] == view[start - 1]


_NOT_A_SECRET_KEY = lazy(r"(?i).*[_.-](?:url|uri|endpoint|file|path|dir|name|type|len|length|limit|count|size|"
                         r"expiry|expires|ttl|header|field|env|var|id|policy|rotation|hint)")


# "dest_key", "cache_key", "NextToken" name data, not credentials: a key needs a credential word before it
_PUBLISHED_KEY = lazy(r"pub(?:lic|lishable)?[_.-]?key")
_SECRET_KEY_NAME = lazy(r"(?:account|access|secret|api|private|signing|encryption|master|shared[_.-]?access|"
                        r"storage|"
                        r"subscription|app|client|auth|admin|service|license|consumer|webhook|deploy|bot|"
                        r"integration|management|primary|secondary|hmac|jwt|crypto|cipher|aes|rsa|gpg|pgp|ssh|"
                        r"sas)[_.-]?keys?$|(?:secret|passw(?:or)?d|pwd)s?$|"
                        r"(?<!next)(?<!page)(?<!continuation)(?<!sync)(?<!csrf)(?<!xsrf)(?<!cancellation)(?<!resume)(?<!paging)(?<!pagination)(?<!max)(?<!_)(?<!-)(?<!\.)"
                        r"tokens?$|(?:access|refresh|auth|bearer|session|api|bot|id|oauth|personal)[_.-]tokens?$")


_NAME_START = lazy(r"(?<![\w.-])[a-z0-9_.-]{1,30}$")
# "https://x-access-token:ghs_...@github.com": a URL's user name, not an assignment (the url-password rule reads it)
_USER_INFO = lazy(r"://[\w.-]*$")


def _in_user_info(view: str, start: int) -> bool:
    return bool(_USER_INFO.search(view, max(0, start - 64), start))


def _compound_assignment(view: str, m: re.Match[str]) -> bool:
    """``m`` starts at the credential word; the name it ends is read backwards ("storage_account_" + "key")."""
    head = _NAME_START.search(view, max(0, m.start() - 30), m.start())
    name = (head[0] if head else "") + m[0][:len(m["key"]) + 1].rstrip("\"' :=")
    if not head or not _SECRET_KEY_NAME.search(name) or _PUBLISHED_KEY.search(name) or _in_user_info(view, m.start()):
        return False
    value = view[slice(*value_span(m))]
    return real_value(value, password=password_key(m["key"]), key=name, quoted=_quoted(view, m)) or (
        password_key(m["key"]) and _assigned(view, m) and _letters_password(value))  # PGPASSWORD=letmeinnow


def _named(before: str, view: str, m: re.Match[str]) -> bool:
    """``m`` starts at the credential word of a name read backwards ("db_" + "password"), which follows one of
    ``before`` ("" -- anything but a letter or digit), and its value looks like one."""
    head = _NAME_START.search(view, max(0, m.start() - 30), m.start())
    start, name = (head.start(), head[0] + m["key"]) if head else (m.start(), m["key"])
    preceded = view[start - 1] if start else ""
    return (preceded in before if before else not preceded.isalnum()) and real_value(
        view[slice(*value_span(m))], password=password_key(name), key=name, quoted=_quoted(view, m))


_STRUCTURED = lazy(r"(?i)(?:[a-z]+\d{0,3}|\d+)(?:[:/._-](?:[a-z]+\d{0,3}|\d+))+")


def _entropy(value: str) -> float:
    return -sum(n / len(value) * math.log2(n / len(value)) for n in map(value.count, set(value)))


def real_value(value: str, *, password: bool, key: str = "", quoted: bool = False) -> bool:
    v = value.strip("'\"").rstrip(".,;:!?)")
    if len(v) < 6 or "://" in v or _not_a_value(v, quoted=quoted) or _NOT_A_SECRET_KEY.fullmatch(key):
        return False
    if password:  # a bare word ("required", "none") is prose, not a password
        return not v.isalpha()
    return (len(v) >= 12 and any(c.isdigit() for c in v) and any(c.isalpha() for c in v) and _entropy(v) >= 3.0
            and not _STRUCTURED.fullmatch(v))


def password_key(key: str) -> bool:
    return key == "pw" or key.startswith("pin") or key.endswith(" code") or any(
        word in key for word in ("pass", "pwd", "密码", "口令"))


def _random_token(view: str, m: re.Match[str]) -> bool:
    """A token format known by its prefix must still look random: ``sk-learn-compatible-api`` is no key, nor is the
    documentation's ``AKIAIOSFODNN7EXAMPLE``."""
    return m.lastgroup == "private_key" or (looks_random(m[0]) and "example" not in m[0].lower())


_WORDS = lazy(r"[a-z]+(?:[_.-][a-z]+)*")


def looks_random(value: str) -> bool:
    """Not words joined by "-" or "_" (a key may hold no digit: ``sk_live_qHnoyNItpRVuEXoCwVqVjspN``)."""
    return _entropy(value) >= 3.0 and not _WORDS.fullmatch(value)


def value_span(m: re.Match[str]) -> tuple[int, int]:
    """Where the secret is: the value of a ``key: value`` style match, else all of it."""
    return next((m.span(g) for g in ("value", "said", "zh_value") if g in m.re.groupindex and m[g]), m.span())


def rule_key(m: re.Match[str]) -> str:
    return next((m[g] for g in ("key", "is", "zh") if g in m.re.groupindex and m[g]), "password")


def _assignment(view: str, m: re.Match[str]) -> bool:
    start = m.start()  # the key must start a word: "bypass=" is not a password; a Chinese one follows anything, and a
    # JSON string's escaped line break or tab ends a word ("\\n密码: ...", "\\npassword=...": a README audit)
    named = "key" in m.re.groupindex and bool(m["key"])  # a name and "=" or ":" (not "password is ...", looser)
    glued = start and view[start - 1].isascii() and view[start - 1].isalnum() and not (
        m["zh"] if "zh" in m.re.groupindex else None) and not (named and start >= 2 and view[start - 2] == "\\")
    if glued or _in_user_info(view, start):
        return False
    value, key, quoted = view[slice(*value_span(m))], rule_key(m), _quoted(view, m)
    return real_value(value, password=password_key(key), key=key, quoted=quoted) or (
        password_key(key) and ((_assigned(view, m) and _letters_password(value)) or _random_letters(value))) or (
        _SECRET_NAME.fullmatch(key) is not None and _chosen_secret(value, quoted=quoted))


def _random_letters(value: str) -> bool:
    """Letters no word is made of: 12 or more, eight of them different, at most three in ten vowels, no placeholder
    (the 16-letter app codes Chinese mail services give for SMTP, ``xclplduccmycljlq``: a red-team pass found them
    kept in INI files, where a password of letters is read only on an env line)."""
    v = value.strip("'\"")
    code = len(v) == 16 and v.islower() and len(set(v)) >= 10  # those codes' own shape
    return (len(v) >= 12 and v.isascii() and v.isalpha() and len(set(v.lower())) >= 8
            and (code or sum(c in "aeiouyAEIOUY" for c in v) * 10 <= len(v) * 3) and not _NOT_A_VALUE.fullmatch(v)
            and v.lower() not in _FIELD_WORDS and not _NAMED_SO.fullmatch(v) and not _PLACEHOLDER_WORD.search(v))


#: a word a placeholder of letters is made of (``yourpasswordhere``, ``changemechangeme``)
_PLACEHOLDER_WORD = lazy(r"(?i)pass|word|secret|token|your|here|example|change|sample|dummy|default")


#: a name whose value is a secret someone may have typed, not generated (``SECRET_KEY``, ``JWT_SECRET``,
#: ``STRIPE_API_KEY``, ``auth_token``): its value is held to a password's shape, not a random token's (a red-team
#: pass: ``SECRET_KEY = "kestrel5655"``, ``JWT_SECRET=Orchid_42!``, ``API_KEY: indigo15259`` kept, 18 of 18)
_SECRET_NAME = lazy(r"(?:[a-z0-9]+[_.-])*(?:secret(?:[_.-]?key)?|api[_.-]?key|apikey|(?:auth|access)[_.-]?token)")


def _chosen_secret(value: str, *, quoted: bool = False) -> bool:
    """A typed secret: 8 to 64 characters, letters and digits, not a placeholder, a path or words and numbers joined
    (``dev-key-2``, ``v1.2.3``, ``sk_test_123``)."""
    v = value.strip("'\"").rstrip(".,;:)")  # a "!" or "?" ending it is the secret's, not prose's: Kestrel-5655!
    symbols = any(not c.isalnum() and c not in "-_.:/" for c in v)
    return (8 <= len(v) <= 64 and v.isascii() and any(c.isalpha() for c in v)
            and (symbols or sum(c.isdigit() for c in v) >= 3)  # a name of code holds one or two: openaiKey2, dev1
            and not _not_a_value(v, quoted=quoted) and not _STRUCTURED.fullmatch(v) and "://" not in v
            and not _TIME_VALUE.fullmatch(v)
            and "\\u" not in v.lower()  # a JSON string's escaped Chinese: "secret_key: \\u4e34\\u65f6" is a word
            and not _LINE_BREAKS.search(v))  # nor a text written on two lines ("with\\nnewline": a test's value)


#: a time, a date or a duration (``1h30m45s``, ``2024-05-01T12:00:00Z``)
_TIME_VALUE = lazy(r"(?i)(?:\d+(?:ms|[wdhms]))+|\d{4}-\d\d-\d\d(?:t[\d:.]+z?)?")


#: words a schema, a form, a log line or a setting gives a password field (``password: string``,
#: ``password=hidden``, ``password=mismatch``)
_FIELD_WORDS = frozenset({
    "string", "integer", "boolean", "text", "varchar", "char", "bytes", "object", "secure", "encrypted", "hashed",
    "hash", "default", "value", "values", "prompt", "random", "generated", "unchanged", "invalid", "incorrect",
    "expired", "missing", "changed", "updated", "correct", "wrong", "forgotten", "protected", "disabled", "enabled",
    "sensitive", "confidential", "omitted", "removed", "stars", "asterisks", "secretstr", "password", "mismatch",
    "matched", "accepted", "rejected", "verified", "present", "absent", "unknown", "provided", "blank", "skipped",
    "failed", "passed", "success", "failure", "locked", "unlocked", "plaintext", "cleartext", "bcrypt", "argon",
    "scrypt", "keyring", "keychain", "interactive", "manual", "automatic", "allowed", "denied", "defined", "strict",
    "always", "never", "inherit", "ignore", "keyfile", "external", "internal", "kerberos", "system", "environment",
    "generate", "mandatory", "filtered", "censored", "scrubbed", "obfuscated", "sanitized", "private", "passphrase",
    "timeout", "pending", "ignored", "supplied", "received", "unmatched", "notset", "nonempty", "reused",
    "mismatched", "rotated", "stored", "cached", "inherited", "credentials", "secrets", "fromenv", "sameasuser",
    "nopassword", "anonymous", "yourpassword", "mypassword", "somepassword", "lastpass", "onepassword", "bitwarden",
    "vaultwarden", "hashicorp"})
#: a password's name exactly (the assignment rule's name may run on: ``password_policy``, ``password-store``; and
#: "pass" alone names other things: ``ON_PASS=continue``, ``-debug-pass=Structure``)
_PASSWORD_NAME = lazy(r"passw(?:or)?d|passphrase")
#: how far from a password's name its line's start and end are looked for
_LINE_REACH = 200
#: what may come before the name on its line: ``export`` and the rest of an env name (``DB_``, ``PG``)
_ENV_HEAD = lazy(r"(?P<indent>[ \t]*)(?:export[ \t]+)?[a-z0-9_]*")
#: what is before a JSON string's opening quote (``{"output": "``, ``["``), and after its closing one
_JSON_STRING_START = lazy(r"[:\[,{]\s*$")
_JSON_STRING_END = lazy(r'[ \t]*"\s*(?:[,}\]]|$)')
_LINE_BREAKS = lazy(r"\n|\\[nr]")
_TRAILING_COMMENT = lazy(r"\s#[^\n]*$")
#: a verb before a Chinese password key that makes it a step, not a value ("修改密码: Settings")
_ZH_ACTION = lazy(r"(?:修改|重置|设置|更改|忘记|找回|输入|更新)$")


def _assigned(view: str, m: re.Match[str]) -> bool:
    """A line of an env or config file giving a password: ``DB_PASSWORD=...``, ``export PGPASSWORD=...``,
    ``password=...`` (the name exactly, ``export`` and an env name's start alone before it on its line, "=" right
    before the value, nothing but quotes after it), or a Chinese name whose value ends its line (``密码: ...``).
    Not a schema's ``password: required``, a setting's ``password_policy=strict``, a log line's
    ``user=bob password=unmatched ip=...``, code's ``self.password=getpass`` or ``char *password=buffer;``, a YAML
    key ending a line, nor prose (two red-team passes of the first versions found each redacted)."""
    reach = min(len(view), m.end() + _LINE_REACH)  # bounded both ways: a megabyte of one line stays linear
    line_end = view.find("\n", m.end(), reach)
    if line_end < 0 and reach < len(view):
        return False  # its line goes on further than a config line's comment would
    back = max(0, m.start() - _LINE_REACH)
    found = [at + size for at, size in [(view.rfind("\n", back, m.start()), 1),
                                        *((view.rfind(f"\\{c}", back, m.start()), 2) for c in "nr")] if at >= 0]
    quote = view.rfind('"', back, m.start())  # a JSON string's first line starts at its quote (hermes' tool answers)
    opened = quote >= 0 and quote > max(found, default=-1) and _JSON_STRING_START.search(view, max(0, quote - 8), quote)
    if not found and back > 0 and not opened:
        return False  # its line starts further back than any env or config name
    line_start = quote + 1 if opened else max(found, default=0)
    in_json = opened or (line_start >= 2 and view[line_start - 2] == "\\")
    rest = view[m.end():line_end if line_end >= 0 else reach]
    if in_json and _JSON_STRING_END.match(rest):  # its last line ends at the string's end quote
        rest = ""
    rest = rest.strip(" \t\r\"'`")
    if rest and not rest.startswith(("#", "\\n", "\\r")):  # (a JSON string's line ends at its escape)
        return False
    if "zh" in m.re.groupindex and m["zh"]:  # not a step telling what to do with it ("在账户页修改密码: Security")
        return not _ZH_ACTION.search(view, max(line_start, m.start() - 4), m.start())
    if "key" not in m.re.groupindex or not m["key"] or not _PASSWORD_NAME.fullmatch(m["key"]):
        return False
    between = view[m.end("key"):m.start("value")].strip("\"'")
    head = _ENV_HEAD.fullmatch(view, line_start, m.start())
    if between not in ("=", ":=") or not head:
        return False
    # indented: an env line in a shell block, a Dockerfile's continuation or a README's code block -- but not a
    # call's last argument on its own line (the line before it ends a call's "(" or an argument's ",")
    return not head["indent"] or not _continues_a_call(view[max(0, line_start - _LINE_REACH):max(0, line_start - 1)])


def _continues_a_call(before: str) -> bool:
    """Whether the last line of code in ``before`` (comment lines and a line's own comment left out: the rest of a
    call's arguments may be commented) ends a call's ``(`` or an argument's ``,``."""
    for line in reversed(_LINE_BREAKS.split(before)):
        code = _TRAILING_COMMENT.sub("", line).rstrip()
        if code and not code.lstrip().startswith("#"):
            return code.endswith(("(", ","))
    return False


def _letters_password(value: str) -> bool:
    """A password made of letters only (``correcthorsebattery``, ``sunshine``): six or more ASCII letters, not a
    placeholder nor a word a field's description uses (a README audit: ``DB_PASSWORD=correcthorsebattery`` was kept
    whole in the archive)."""
    v = value.strip("'\"").rstrip(".,;:!?)")
    return (len(v) >= 6 and v.isascii() and v.isalpha() and not _NOT_A_VALUE.fullmatch(v)
            and v.lower() not in _FIELD_WORDS and not _NAMED_SO.fullmatch(v))


#: a word of letters that names where a password comes from, or a thing of code (``getpassword``, ``keyvault``,
#: ``secretsmanager``, ``userinput``, ``options``: a red-team pass found each redacted in code and docs), whole
_NAMED_SO = lazy(r"(?i)(?:get|read|load|fetch|user|db|new|old|current|input|plain|raw|stored|saved|temp|tmp|default|"
                 r"key|aws|azure|gcp)?(?:pass(?:word|wd)?|pwd|secrets?|token|vault|credentials?|getpass|keychain|"
                 r"secretsmanager|secretmanager|field|input|config|settings?|options?|request|session|environ|getenv|"
                 r"prompt|params?|kwargs|args|username|encoded|encrypted|decrypted|salted|hashed|readline)s?")
#: a word of letters written as a name in code, not typed as a password: a variable's camel case with a word of code
#: in it (``userPassword``, ``readPasswordFile``; ``helloWorld`` is a password), or a class whose last word is a
#: thing of code (``PasswordField``, ``SecretStr``, ``TokenBucket``) or whose words all are (``AccessToken``,
#: ``PasswordChanged``; ``SecretGarden``, ``MasterKey``, ``SuperSecret`` are passwords)
_CODE_WORDS = (r"Password|Passwd|Pwd|Pass|Secret|Token|Key|Access|Refresh|Api|Hashed|Ref|Changed|Strength|Refresher|"
               r"Spec|Id|Client|Credential|Store|Provider|Manager|Hasher|Encoder|Reset|Request|Response|Field|Policy|"
               r"Value|Name|Type|File|Path|Data|Info|Config|Bucket|Auth|Handler|Generator|Validator|Helper|Util|Service|"
               r"Str|String|Input|Hash|Form|Prompt|Var|Env|Volume|Factory|Class|Model|Schema|Error|Exception")
_CODE_CASE = lazy(rf"(?:get|set|read|load|fetch|user|db|new|old|current|admin|root|default|input|raw|plain|hashed|"
                  rf"encrypted|stored|my|the|is|has)(?:[A-Z][a-z]{{2,}}){{1,3}}|[a-z]{{2,}}(?:[A-Z][a-z]+){{0,2}}"
                  rf"(?:{_CODE_WORDS})|(?:{_CODE_WORDS}){{2,4}}|(?:[A-Z][a-z]+){{1,4}}(?:Field|Str|String|Type|Input|"
                  rf"Manager|Config|Value|Provider|Service|Form|Hash|Hasher|Policy|Prompt|Var|Env|Spec|Encoder|Request|"
                  rf"File|Bucket|Volume|Auth|Reset|Handler|Factory|Helper|Class|Model|Schema|Validator|Error|Exception)")
#: a word cased as a label a UI writes after 密码: (``Settings``, ``Recovery``, ``Google``)
_LABEL_CASE = lazy(r"[A-Z][a-z]{1,15}")


def cased_word(value: str, *, chinese_key: bool) -> bool:
    """Whether a value as written (the rules read a folded, lower-case view) is a word of letters cased as a name of
    code (:data:`_CODE_CASE`), or after a Chinese key as a UI's label (:data:`_LABEL_CASE`: "密码:
    Settings"; a password of letters in title case there, ``Sunflower``, is taken for one too)."""
    v = value.strip("'\"").rstrip(".,;:!?)")
    return v.isascii() and v.isalpha() and bool(
        _CODE_CASE.fullmatch(v) or (chinese_key and _LABEL_CASE.fullmatch(v)))


def _url_password(view: str, m: re.Match[str]) -> bool:
    """``://user:password@``: a password that is neither the user name again nor a placeholder. Dotted, it is code's
    name only when it names where a password is (``config.db_pass``, ``settings.DB_PASSWORD``): else it is one (a
    red-team pass: ``Qx7.mZ2.pL9``, ``ObUCikNAghy4.QFZRjXLCtzy`` kept; the rules read lower case, so the parts'
    case cannot tell)."""
    value = m["value"]
    return value != m["user"] and (not _NOT_A_VALUE.fullmatch(value) or (
        _DOTTED_NAME.fullmatch(value) is not None and any(c.isdigit() for c in value)
        and not _NAMES_A_PASSWORD.search(value)))  # only a dotted name's reading is set aside: a review


#: what the not-a-value list reads as code's dotted name (the rest of that list still holds in a URL)
_DOTTED_NAME = lazy("(?i)" + _DOTTED)


#: a dotted name's part that says where a password comes from
_NAMES_A_PASSWORD = lazy(r"pass|pwd|secret|token|cred|key|auth|env|conf|setting|option|param|args|self|this")


#: an app password as Google and Apple print it (``abcd efgh ijkl mnop``)
_APP_PASSWORD = lazy(r"[a-z]{4}(?: [a-z]{4}){3}")
#: digits or symbols between two letters of a word (``r3d!s``, ``p@ss``, ``w0rd``): no word of prose or a UI's label
#: ("24h", "2FA", "AES-256" put them before or after the letters: red-team passes)
_MIXED = lazy(r"[A-Za-z][0-9!@#$^&*+=~]+[A-Za-z]|[A-Za-z]{2}[0-9@#$^&*+=~]+$")  # or ending a word: horse42


def _mixed_word(value: str) -> bool:
    """Whether a word of ``value`` mixes digits or symbols between its letters or ends in them (``horse42``), after
    no more than its closing punctuation is set aside: a sentence's closing "!" or "?"
    and a format's field (``%s@%s``, ``{user}``) do not count (a red-team pass: "Passwords do not match!")."""
    return any("%" not in word and "{" not in word and _MIXED.search(word.rstrip("!?.,:;")) for word in value.split())


def _passphrase(view: str, m: re.Match[str]) -> bool:
    """A quoted value with spaces after a credential's name: an app password, or words one of which mixes letters
    with digits or symbols ("r3d!s p@ss w0rd"). A sentence ("Enter your password", "at least 8 characters") is not
    one, nor a placeholder; passphrases of plain words ("correct horse battery staple") are left (as prose is)."""
    value = m["value"].strip()
    return " " in value and not _NOT_A_VALUE.fullmatch(value) and bool(
        _APP_PASSWORD.fullmatch(value) or _mixed_word(value))


def _login_pair(view: str, m: re.Match[str]) -> bool:
    """``login: admin / Sp4rrow!Staging``: a password with more than letters and digits, not a URL's path."""
    return "://" not in m[0] and real_value(m["value"], password=True) and not m["value"].isalnum()


#: the secret rules' checks that need code, by the name rules give them: each judges a named group of the match (the
#: value, the key's full name read backwards) by its entropy, shape or words, which no search around it can
SECRET_CHECKS: dict[str, Callable[[str, re.Match[str]], bool]] = {
    "random token": _random_token,
    "secret value": lambda view, m: real_value(m["value"], password=False),
    "password value": lambda view, m: real_value(m["value"], password=True),
    "url password": _url_password,
    "credential assignment": _assignment,
    "compound credential name": _compound_assignment,
    "credential name": partial(_named, ""),
    "quoted credential name": partial(_named, "'\""),
    "credential element": partial(_named, "<"),
    "login pair": _login_pair,
    "passphrase": _passphrase,
}
