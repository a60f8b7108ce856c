"""Secret formats for the memory threat scanner and the redactor: known token prefixes, ``key = value`` credentials,
passwords in prose, and layouts -- passwords given to commands, credential tables and files, a key pair's secret half.

A secret in a memory entry is a leak waiting for a prompt: whatever the model sees, it may repeat. Token formats are
matched in the normalised text (case kept; zero-width characters dropped, fullwidth letters read as ASCII), ``key:
value`` credentials in the folded view (so fullwidth letters or look-alikes in the key do not hide one). A value must
look like a secret, not like a placeholder, a name or a path. Layouts are data (``CLI_SECRET_OPTIONS``,
``CREDENTIAL_COLUMNS``, ``CREDENTIAL_LINES``, ``PAIRED_SECRETS``), read by the functions at the end of this module.
:mod:`hermes_ctx_plugins.safety.scan` runs these rules and redacts what they find.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from .rules import rule

Span = tuple[int, int, str]  # start, end, label: a secret found, as indices into the text

_NOT_A_VALUE = re.compile(
    r"(?i)[$%{<\[*/~#(].*|.*(?:\.\.\.|…|xxx|\*\*\*).*|(?:your|my|some|an?|the|example|sample|dummy|fake)[-_ ].*|"
    r"(?:change_?me|pass(?:word|wd)?|pwd|secret|token|placeholder|redacted|none|null|nil|true|false|undefined|required|"
    r"optional|hidden|masked|empty|unset|todo|tbd|n/?a)|[a-z_][a-z_]*\d{0,3}(?:\.[a-z_][a-z_]*\d{0,3})+(?:\(.*)?|"
    r"[a-z_]\w*(?:\.[a-z_]\w*)+\(.*|[a-z]+(?:_[a-z]+)+|"
    r"(?:[\w.-]+/)+[\w-]+\.[a-z]{1,5}|[a-z_]\w*\(.*|"
    # documentation's own example values (AKIAIOSFODNN7EXAMPLE), and a word of another script standing for the value
    # ("postgresql://用户名:密码@主机")
    r".*example.*|[^\x00-\x7f]{1,12}")
_NOT_A_SECRET_KEY = re.compile(r"(?i).*[_.-](?:url|uri|endpoint|file|path|dir|name|type|len|length|limit|count|size|"
                               r"expiry|expires|ttl|header|field|env|var|id|policy|rotation|hint)")


# "dest_key", "cache_key", "NextToken" name data, not credentials: a key needs a credential word before it
_PUBLISHED_KEY = re.compile(r"pub(?:lic|lishable)?[_.-]?key")
_SECRET_KEY_NAME = re.compile(r"(?:account|access|secret|api|private|signing|encryption|master|shared[_.-]?access|"
                              r"storage|"
                              r"subscription|app|client|auth|admin|service|license|consumer|webhook|deploy|bot|"
                              r"integration|management|primary|secondary|hmac|jwt|crypto|cipher|aes|rsa|gpg|pgp|ssh|"
                              r"sas)[_.-]?keys?$|(?:secret|passw(?:or)?d|pwd)s?$|"
                              r"(?<!next)(?<!page)(?<!continuation)(?<!sync)(?<!csrf)(?<!xsrf)(?<!cancellation)(?<!resume)(?<!paging)(?<!pagination)(?<!max)(?<!_)(?<!-)(?<!\.)"
                              r"tokens?$|(?:access|refresh|auth|bearer|session|api|bot|id|oauth|personal)[_.-]tokens?$")


_NAME_START = re.compile(r"(?<![\w.-])[a-z0-9_.-]{1,30}$")
# "https://x-access-token:ghs_...@github.com": a URL's user name, not an assignment (the url-password rule reads it)
_USER_INFO = re.compile(r"://[\w.-]*$")


def _in_user_info(view: str, start: int) -> bool:
    return bool(_USER_INFO.search(view, max(0, start - 64), start))


def _compound_assignment(view: str, m: re.Match[str]) -> bool:
    """``m`` starts at the credential word; the name it ends is read backwards ("storage_account_" + "key")."""
    head = _NAME_START.search(view, max(0, m.start() - 30), m.start())
    name = (head[0] if head else "") + m[0][:len(m["key"]) + 1].rstrip("\"' :=")
    return bool(head) and bool(_SECRET_KEY_NAME.search(name)) and not _PUBLISHED_KEY.search(name) and not (
        _in_user_info(view, m.start())) and _real_value(view[slice(*value_span(m))], password=password_key(m["key"]),
                                                        key=name)


def _named(before: str) -> Callable[[str, re.Match[str]], bool]:
    """A check: ``m`` starts at the credential word of a name read backwards ("db_" + "password"), which follows one of
    ``before`` ("" -- anything but a letter or digit), and its value looks like one."""
    def check(view: str, m: re.Match[str]) -> bool:
        head = _NAME_START.search(view, max(0, m.start() - 30), m.start())
        start, name = (head.start(), head[0] + m["key"]) if head else (m.start(), m["key"])
        preceded = view[start - 1] if start else ""
        return (preceded in before if before else not preceded.isalnum()) and _real_value(
            view[slice(*value_span(m))], password=password_key(name), key=name)
    return check


_STRUCTURED = re.compile(r"(?i)(?:[a-z]+\d{0,3}|\d+)(?:[:/._-](?:[a-z]+\d{0,3}|\d+))+")


def _entropy(value: str) -> float:
    return -sum(n / len(value) * math.log2(n / len(value)) for n in map(value.count, set(value)))


def _real_value(value: str, *, password: bool, key: str = "") -> bool:
    v = value.strip("'\"").rstrip(".,;:!?)")
    if len(v) < 6 or "://" in v or _NOT_A_VALUE.fullmatch(v) or _NOT_A_SECRET_KEY.fullmatch(key):
        return False
    if password:  # a bare word ("required", "none") is prose, not a password
        return not v.isalpha()
    return (len(v) >= 12 and any(c.isdigit() for c in v) and any(c.isalpha() for c in v) and _entropy(v) >= 3.0
            and not _STRUCTURED.fullmatch(v))


def password_key(key: str) -> bool:
    return key == "pw" or key.startswith("pin") or key.endswith(" code") or any(
        word in key for word in ("pass", "pwd", "密码", "口令"))


def _token(text: str, m: re.Match[str]) -> bool:
    """A token format known by its prefix must still look random: ``sk-learn-compatible-api`` is no key, nor is the
    documentation's ``AKIAIOSFODNN7EXAMPLE``."""
    return m.lastgroup == "private_key" or (looks_random(m[0]) and "example" not in m[0].lower())


_WORDS = re.compile(r"[a-z]+(?:[_.-][a-z]+)*")


def looks_random(value: str) -> bool:
    """Not words joined by "-" or "_" (a key may hold no digit: ``sk_live_qHnoyNItpRVuEXoCwVqVjspN``)."""
    return _entropy(value) >= 3.0 and not _WORDS.fullmatch(value)


def value_span(m: re.Match[str]) -> tuple[int, int]:
    """Where the secret is: the value of a ``key: value`` style match, else all of it."""
    return next((m.span(g) for g in ("value", "said", "zh_value") if g in m.re.groupindex and m[g]), m.span())


def rule_key(m: re.Match[str]) -> str:
    return next((m[g] for g in ("key", "is", "zh") if g in m.re.groupindex and m[g]), "password")


def _assignment(view: str, m: re.Match[str]) -> bool:
    start = m.start()  # the key must start a word: "bypass=" is not a password
    return not (start and view[start - 1].isascii() and view[start - 1].isalnum()) and not _in_user_info(
        view, start) and _real_value(view[slice(*value_span(m))], password=password_key(rule_key(m)), key=rule_key(m))


# what makes "token 4dc193bc..." a credential: the kind of token named just before it ("auth token", "access key")
_CREDENTIAL_QUALIFIER = re.compile(r"(?<![a-z])(?:auth|access|api|secret|bearer|bot|refresh|session|app|client|master|"
                                   r"private|signing|personal|deploy|admin|service|webhook|integration|account|"
                                   r"license|unseal|recovery|root|encryption|decryption|wallet)[\s_-]$")


# Key formats known by their prefix, beyond the big few above. Anchors are case-sensitive substrings of the raw text;
# triggers are what the index looks for in the lowered text (upper case or punctuation: a substring, else a word).
_VENDORS = (  # (anchors, triggers, regex)
    ("glptt-,gldt-,glrt-,glcbt-,gloas-,glft-,glimt-,glsoat-,glagent-", "glptt,gldt,glrt,glcbt,gloas,glft,glimt,glsoat,"
     "glagent", r"(?P<gitlab_token>gl(?:ptt|dt|rt|cbt|oas|ft|imt|soat|agent)-[\w-]{20,})"),
    ("AKID", "AKID", r"(?P<tencent_secret_id>AKID[A-Za-z0-9]{32})"),
    ("LTAI", "LTAI", r"(?P<alibaba_access_key>LTAI[A-Za-z0-9]{12,28})"),
    ("AKLT", "AKLT", r"(?P<volcengine_access_key>AKLT[\w-]{30,})"),
    ("dop_v1_,doo_v1_,dor_v1_", "dop,doo,dor", r"(?P<digitalocean_token>do[por]_v1_[a-f0-9]{64})"),
    ("hvs.,hvb.,hvr.", "hvs,hvb,hvr", r"(?P<vault_token>hv[sbr]\.[\w-]{24,})"),
    ("dapi", "DAPI", r"(?P<databricks_token>dapi[a-f0-9]{32})"),
    ("gsk_", "gsk", r"(?P<groq_key>gsk_[A-Za-z0-9]{40,})"),
    ("xai-", "xai", r"(?P<xai_key>xai-[A-Za-z0-9]{40,})"),
    ("r8_", "r8", r"(?P<replicate_token>r8_[A-Za-z0-9]{30,})"),
    ("pplx-", "pplx", r"(?P<perplexity_key>pplx-[A-Za-z0-9]{40,})"),
    ("GOCSPX-", "GOCSPX-", r"(?P<google_oauth_secret>GOCSPX-[\w-]{24,})"),
    ("sbp_", "sbp", r"(?P<supabase_token>sbp_[a-f0-9]{40})"),
    ("sntrys_,sntryu_", "sntrys,sntryu", r"(?P<sentry_token>sntry[su]_[\w=+/]{30,})"),
    ("glsa_,glc_", "glsa,glc", r"(?P<grafana_token>glsa_[A-Za-z0-9_]{32,}|glc_[A-Za-z0-9+/=]{32,})"),
    ("NRAK-", "NRAK-", r"(?P<newrelic_key>NRAK-[A-Z0-9]{27})"),
    ("PMAK-", "PMAK-", r"(?P<postman_key>PMAK-[a-f0-9]{24}-[a-f0-9]{34})"),
    ("figd_", "figd", r"(?P<figma_token>figd_[\w-]{40,})"),
    ("AGE-SECRET-KEY-1", "AGE-SECRET", r"(?P<age_secret_key>AGE-SECRET-KEY-1[0-9A-Z]{58})"),
    ("lin_api_", "lin_api", r"(?P<linear_key>lin_api_[A-Za-z0-9]{40})"),
    ("ntn_,secret_", "ntn,secret_", r"(?P<notion_token>ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})"),
    ("ATATT", "ATATT", r"(?P<atlassian_token>ATATT3[\w=-]{60,})"),
    ("dp.", "dp.", r"(?P<doppler_token>dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,})"),
    ("shpat_,shpss_,shpca_,shppa_", "shpat,shpss,shpca,shppa",
     r"(?P<shopify_token>shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})"),
    ("key-", "key-", r"(?P<mailgun_key>key-[0-9a-f]{32})"),
    ("sq0atp-,sq0csp-", "sq0atp,sq0csp", r"(?P<square_token>sq0(?:atp|csp)-[\w-]{22,})"),
    ("whsec_", "whsec", r"(?P<stripe_webhook_secret>whsec_[A-Za-z0-9]{24,})"),
    ("pscale_", "pscale", r"(?P<planetscale_token>pscale_(?:tkn|pw|oauth)_[\w.-]{32,})"),
)
_CREDENTIAL_WORD = r"passw(?:or)?d|pwd|secret|token|api[_-]?key"  # what ends a credential's name ("DB_PASSWORD")
_CREDENTIAL_WORDS = "password,passwd,pwd,secret,token,apikey,api_key,api-key"
_CREDENTIAL_TRIGGERS = _CREDENTIAL_WORDS.upper()  # upper case: inside words too ("DbPassword")
_VENDOR_ANCHORS = ",".join(a for a, _, _ in _VENDORS)
_VENDOR_TRIGGERS = ",".join(t for _, t, _ in _VENDORS)
_VENDOR_TOKENS = "|".join(r for _, _, r in _VENDORS)
SECRET_RULES = (  # most specific first (joined overlapping spans take the earlier's label); matches start at anchors
    rule("secret", "token", (0, 0), "-----BEGIN,sk-,ghp_,gho_,ghu_,ghs_,ghr_,github_pat_,glpat-,xox,xapp-,"
         "hooks.slack.com,discord,AKIA,ASIA,ABIA,ACCA,AIza,ya29.,sk_live_,sk_test_,rk_live_,rk_test_,hf_,npm_,pypi-,"
         # a key runs to its END line; cut short (pasted in part), to the next BEGIN or the end of the text
         "SG.,:AA,eyJ", r"(?P<private_key>-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
         r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|(?=-----BEGIN)|\Z))|"
         r"\b(?:(?P<anthropic_key>sk-ant-[\w-]{20,})|(?P<openai_key>sk-(?:proj-|"
         r"svcacct-|admin-)?[\w-]{20,})|(?P<github_token>gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{22,})|"
         r"(?P<gitlab_token>glpat-[\w-]{20,})|(?P<slack_token>xox[abposr]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})|"
         r"(?P<aws_access_key>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b)|(?P<google_api_key>AIza[\w-]{35})|"
         r"(?P<google_oauth_token>ya29\.[\w-]{20,})|(?P<stripe_key>[rs]k_(?:live|test)_[0-9A-Za-z]{10,})|"
         r"(?P<huggingface_token>hf_[A-Za-z0-9]{30,})|(?P<npm_token>npm_[A-Za-z0-9]{36}\b)|"
         r"(?P<pypi_token>pypi-AgE[\w-]{30,})|(?P<sendgrid_key>SG\.[\w-]{16,}\.[\w-]{16,})|(?P<jwt>eyJ[\w-]"
         r"{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}))|(?P<slack_webhook>hooks\.slack\.com/(?:services|workflows|triggers)/[\w/-]"
         r"{20,})|(?P<discord_webhook>discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,})|"
         r"(?<=\d{8})(?P<telegram_bot_token>:AA[\w-]{33}\b)", _token, triggers="begin,sk,rk,ghp,gho,ghu,ghs,ghr,github,"
         "glpat,xoxa,xoxb,xoxp,xoxo,xoxs,xoxr,xapp,"
         "slack,discord,discordapp,ya29,hf,npm,pypi,sg,AKIA,ASIA,ABIA,ACCA,AIza,eyJ,:AA"),
    # Mailchimp keys end in their datacenter ("<32 hex>-us21"): the anchor is at the end
    rule("secret", "token", (34, 6), "-us", r"(?<![0-9a-f])(?P<mailchimp_key>[0-9a-f]{32}-us\d{1,2})\b", _token,
         triggers="-US"),
    # a rule of their own, so that their many anchors are searched only when one of their prefixes is present
    rule("secret", "token", (0, 0), _VENDOR_ANCHORS, rf"\b(?:{_VENDOR_TOKENS})", _token, triggers=_VENDOR_TRIGGERS),
    rule("secret", "auth-header", (0, 0), "bearer,basic,digest", r"(?:bearer|basic|digest)\s+(?!\[redacted)(?P<value>"
         r"[a-z0-9._~+/-]{12,}=*)", lambda v, m: _real_value(m["value"], password=False)),
    rule("secret", "url-password", (0, 0), "://&@", r"://(?P<user>[^\s:/@'\"<>]{0,64}):(?!\[redacted)(?P<value>"
         r"[^\s@/'\"<>]{1,128})@(?=[\w.\[-])",
         lambda v, m: m["value"] != m["user"] and not _NOT_A_VALUE.fullmatch(m["value"])),
    rule("secret", "password", (0, 0), "pass,pwd,pw,secret,token,api,access,auth,client,private,credential,密码,"
         "口令,密钥,秘钥,令牌,私钥&=,:,：,is,was,是,为, ",  # noqa: RUF001 (a space: "密码 Corp#2024zz")
         r"(?P<key>(?:password|passwd|passphrase|pwd|pass|secret|token|api[\s_-]?key|apikey|access[_-]?key|auth[_-]?key|client[_-]?secret|private[_-]?key|"
         r"credentials?)(?:[_.-][a-z0-9]+)*)[\"']?\s*(?::=|=>|[:=])\s*[\"']?(?!\[redacted)(?P<value>[^\s\"'`,"
         r";)\]}<>]{6,200})|(?P<is>password|passwd|passphrase|passcode|pwd|pw)(?:\s+(?:for|of|on|to)\s+[^\n:=]"
         r"{1,30}?)?(?:\s*[:=]|\s+(?:is|was)|\s*(?:是|为)|\s+(?=\S*\d)(?=\S*[a-z])(?=\S*[^\w\s]))\s*:?\s*[\"']?"
         r"(?P<said>[^\s\"'`,;)\]}<>]{6,200})|"
         r"(?P<zh>密码|口令|密钥|秘钥|令牌|私钥)\s*(?:[:：=]|是|为|\s(?=\S*\d)(?=\S*[a-z]))\s*[\"'“]?(?P<zh_value>"  # noqa: RUF001
         r"[a-z0-9!@#$%^&*_+=./~-]{6,200})", _assignment, triggers="password,passwd,passphrase,passcode,pwd,pw,pass,"
         "secret,token,api,apikey,access,auth,client,private,credential,credentials,密码,口令,密钥,秘钥,令牌,私钥"),
    # compound names the rule above cannot see: "AccountKey=", "SecretKey:", "clientSecret:", "storage_account_key="
    rule("secret", "secret", (0, 0), "key,secret,token,password,passwd,pwd&=,:,是,为,is", r"(?P<key>key|secret|token|"
         r"passw(?:or)?d|pwd)s?[\"']?\s*(?::=|=>|[:=]|是|为|(?<=\w)\s+is)\s*[\"']?(?!\[redacted)(?P<value>"
         r"[^\s\"'`,;)\]}<>]{6,200})",
         _compound_assignment,
         triggers="KEY,SECRET,TOKEN,PASSWORD,PASSWD,PWD"),  # upper case: inside words too ("AccountKey")
    # a credential named in one field and its value in the next: Kubernetes env (- name: DB_PASSWORD / value: ...),
    # ECS and .NET config ({"name": "API_TOKEN", "value": ...}, <add key="DbPassword" value="..."/>), terraform output;
    # nothing between names another field, nor is a value itself (14 letters or digits in a row: a redacted one too)
    rule("secret", "password", (0, 0), _CREDENTIAL_WORDS + "&value", rf"(?P<key>{_CREDENTIAL_WORD})(?![a-z0-9_])[\"']?"
         r"(?:(?!\b(?:name|key|value)\b|\w{14})[\s\S]){0,160}?\bvalue[\"']?\s*[:=]\s*[\"']?(?!\[redacted)(?P<value>"
         r"[^\s\"'`,;)\]}<>]{6,200})", _named(""), triggers=_CREDENTIAL_TRIGGERS),
    # ... as two quoted arguments (define('DB_PASSWORD', '...'), setenv("API_TOKEN", "...")), or an XML element
    rule("secret", "password", (0, 0), _CREDENTIAL_WORDS + "&',\"", rf"(?P<key>{_CREDENTIAL_WORD})[\"']\s*,\s*[\"']"
         r"(?!\[redacted)(?P<value>[^\"'\n]{6,200})[\"']", _named("'\""), triggers=_CREDENTIAL_TRIGGERS),
    rule("secret", "password", (0, 0), _CREDENTIAL_WORDS + "&</", rf"(?P<key>{_CREDENTIAL_WORD})>(?!\[redacted)"
         r"(?P<value>[^<\n]{1,200})</", _named("<"), triggers=_CREDENTIAL_TRIGGERS),
    # SQL: CREATE USER ... IDENTIFIED BY '...'
    rule("secret", "password", (0, 0), "identified", r"identified\s+(?:with\s+[\w-]+\s+)?by\s+(?:password\s+)?"
         r"(?P<q>[\"'])(?!\[redacted)(?P<value>[^\"'\n]{1,200})(?P=q)",
         lambda v, m: _real_value(m["value"], password=True)),
    # signed URLs: an Azure SAS, an S3 or GCS presigned URL (its signature, and a session token riding along)
    rule("secret", "url-signature", (0, 0), "sig=,signature=,security-token=", r"(?:sig|signature|security-token)="
         r"(?!\[redacted)(?P<value>[^&?=\s'\"#<>]{16,1200})", lambda v, m: v[m.start() - 1:m.start()] in ("?", "&", "-")
         and _real_value(m["value"], password=False)),
    rule("secret", "password", (70, 40), "password,passphrase,passcode&is,was", r"(?<![\w:\[-])(?P<value>[^\s\"'`,;:"
         r"\[\]]{6,64})\s+(?:is|was)\s+(?:the|my|our|their|his|her)\s+(?:\w+\s+){0,2}?(?:password|passphrase|passcode|"
         r"pin)\b",
         lambda v, m: _real_value(m["value"], password=True)),
    # a credential named, then its value with no sign between ("auth token 4dc193bc...", "access key AbC9...")
    rule("secret", "secret", (0, 0), "token,key,secret&auth,access,api,secret,bearer,bot,refresh,session,app,client,"
         "master,private,signing,personal,deploy,admin,service,webhook,integration,account,license",
         r"(?P<key>token|key|secret)s?\s+(?:is\s+|was\s+)?(?!\[redacted)(?P<value>[a-z0-9+/_=.-]{16,200})(?![\w+/=.-])",
         lambda v, m: bool(_CREDENTIAL_QUALIFIER.search(v, max(0, m.start() - 16), m.start())) and _real_value(
             m["value"], password=False, key=m["key"])),
    # "AK: ... SK: ..." (Baidu, Volcengine, Huawei and others name their key pair so)
    rule("secret", "secret", (0, 0), "ak,sk,akid", r"(?<![\w-])(?P<key>ak|sk|akid|ak_?id|sk_?secret)\s*[:=]\s*[\"']?"
         r"(?P<value>[a-z0-9+/_=-]{16,200})", lambda v, m: _real_value(m["value"], password=False)),
    # a login written as a pair ("login for the staging admin: admin / Sp4rrow!Staging")
    rule("secret", "password", (0, 0), "login,credential,creds,account,sign,username",
         r"(?:login|credentials?|creds|account|sign[\s-]?in|username\s*/\s*password)\b[^\n:]{0,30}[:=]\s*(?P<user>"
         r"[\w.@+-]{2,40})\s*(?:/|\||,|:)\s*(?P<value>[^\s,;]{6,64})", lambda v, m: "://" not in m[0] and _real_value(
             m["value"], password=True) and not m["value"].isalnum()),
    # PINs and door codes are short digits ("PIN for the card ending 4421 is 8375", "the alarm code is 2231")
    rule("secret", "password", (0, 0), "pin,passcode,door,alarm,gate,safe,lock,garage,entry,security",
         r"(?<![\w-])(?P<key>pin(?:\s+(?:code|number))?|passcode|(?:door|alarm|gate|safe|lock|garage|entry|security)\s+"
         r"(?:code|pin))\b(?:\s+(?:for|of|on|to)\s+[^\n:=]{1,30}?)?(?:\s*[:=]|\s+(?:is|was)|\s*(?:是|为))\s*[\"']?"
         r"(?P<value>\d{4,8})(?![\d.,%])"),
    # a Wi-Fi network's key ("The Wi-Fi at the cabin: SSID Birchwood, key Lantern&Moss_57")
    rule("secret", "password", (0, 0), "wi-fi,wifi,wlan,wpa,wpa2,ssid",
         r"(?:wi-?fi|wlan|wpa2?|ssid)\b[^\n]{0,60}?\b(?:key|password|pass|pw|passphrase)\s*(?:[:=]|is)?\s*[\"']?(?P<value>[^\s\"',;]{8,63})",
         lambda v, m: _real_value(m["value"], password=True)),
    # Google app passwords: four groups of four letters ("app password qpzk vwtr hmxe lbna")
    rule("secret", "password", (0, 0), "app,application,应用,专用&password,passwords,密码",
         r"(?:app(?:lication)?[\s-]*(?:specific\s+)?passwords?|应用专用密码|应用密码|专用密码)[^\n]{0,24}?(?<![a-z])"
         r"(?P<value>[a-z]{4}(?:[ -]?[a-z]{4}){3})(?![a-z])"),
    rule("secret", "seed-phrase", (0, 0), "seed,recovery,mnemonic", r"(?:seed|recovery|mnemonic)\s+(?:phrase|words?)\b"
         r"[^\n]{0,20}?[:=]\s*(?P<value>(?:[a-z]{3,8}[ \t]+){11,23}[a-z]{3,8})(?![\w-])"),
)


# ------------------------------------------------------------------------------------- layouts rather than formats
# Secrets that no ``key: value`` shape names: a password given to a command, a column of a credential table, a field of
# a credentials file, the secret half of a key pair. The readers at the end of this module apply these tables.

#: (programs, forms): the options that take a password or token. A program may need subcommand words, in order
#: ("docker login": not "docker run -p 8080:80"). In a form X is the secret, given attached ("-pX": mysql reads "-p db"
#: as "prompt for the password, then database db"), as the next word ("-p X") or after "=" ("--password=X"); before X,
#: "U:" and "K=" stand for a user name or a key and its separator ("-u U:X": curl's user:password), anything else is
#: literal ("-passout pass:X").
CLI_SECRET_OPTIONS = (
    ("mysql,mysqldump,mysqladmin,mysqlimport,mysqlshow,mysqlcheck,mysqlslap,mariadb,mariadb-dump", "-pX,--password=X"),
    ("sshpass", "-pX,-p X"),
    ("docker login,podman login,buildah login,skopeo login,nerdctl login,oras login,helm registry login,az login,twine,"
     "mongosh,mongo,mongodump,mongorestore,mongoexport,mongoimport", "-p X,--password X,--password=X"),
    ("redis-cli", "-a X,--pass X"),
    ("curl", "-u U:X,-uU:X,--user U:X,--user=U:X,-U U:X,--proxy-user U:X"),
    ("wget", "--password=X,--password X,--http-password=X,--http-password X,--ftp-password=X,--proxy-password=X"),
    ("openssl", "-passin pass:X,-passout pass:X,-pass pass:X,-k X"),
    ("ldapsearch,ldapadd,ldapmodify,ldapdelete,ldapwhoami,ldappasswd", "-w X,-wX"),
    ("sqlcmd,bcp", "-P X"),
    ("plink,pscp,psftp", "-pw X"),
    ("smbclient", "-U U%X,-UU%X,--user U%X,--user=U%X"),
    ("kubectl create secret", "--docker-password=X,--docker-password X,--from-literal=K=X"),
)

#: the keys of a "K=X" form whose values are no secret (``--from-literal=username=app``)
NOT_SECRET_KEYS = re.compile(r"(?i)user(?:[_-]?name)?|login|e-?mail|host(?:name)?|port|db(?:[_-]?name)?|database|"
                             r"region|url|uri|endpoint")

#: what an option's value is when it stands for a secret instead of being one: variables, templates, masks, and
#: metavariables ("-p PASSWORD", "-p password")
PLACEHOLDER = re.compile(r"[$%<{\[*`?].*|[A-Z]+(?:_[A-Z]+)*|(?i:.*(?:\.\.\.|…|xxx).*|"
                         r"(?:your|my|the)?[_-]?(?:pass(?:word|wd)?|pwd|pw|secret|token|key|value|name|string|str|"
                         r"user(?:name)?))")

#: column names of a credential table (a CSV export, a spreadsheet or Markdown table pasted as text), lower case, the
#: words joined by a space (found joined by "_", "-" or nothing too): the column's cells are secrets
CREDENTIAL_COLUMNS = frozenset((
    "password", "passwd", "pwd", "pass", "passphrase", "passcode", "secret", "secret key", "secret access key",
    "aws secret access key", "access key secret", "accesskey secret", "client secret", "app secret", "api key",
    "api secret", "api token", "token", "access token", "auth token", "private key", "密码", "口令", "密钥", "秘钥",
    "令牌", "私钥"))

#: one-line credential file formats, each matched as a whole line: (label, regex with a ``value`` group)
CREDENTIAL_LINES = (
    # ~/.pgpass: hostname:port:database:username:password
    ("password", r"^[^\s:#]++:(?:\d{1,5}|\*):[^\s:]++:[^\s:]++:(?P<value>[^\s:]++)$"),
)

#: a key id's label -> (its secret's label, the secret's shape): where an id is pasted, its secret is next to it
PAIRED_SECRETS = {
    "aws-access-key": ("aws-secret-key", r"[A-Za-z0-9/+]{40}"),
    "alibaba-access-key": ("alibaba-access-key-secret", r"[A-Za-z0-9]{30}"),
    "tencent-secret-id": ("tencent-secret-key", r"[A-Za-z0-9]{32}"),
}


def credential_pair(text: str) -> bool:
    """Whether ``text`` is a ``user:password`` pair alone (what an HTTP Basic or registry ``auth`` value encodes)."""
    m = _USER_PASSWORD.fullmatch(text.strip())
    return m is not None and _real_value(m["value"], password=True)


_USER_PASSWORD = re.compile(r"[\w.@+$\\-]{1,64}:(?P<value>\S{6,128})")  # "robot$ci:...", "ACME\jdoe:..."


# ------------------------------------------------------------------------------------------- reading the layouts

_PAIRED = {label: (secret, re.compile(rf"(?<![A-Za-z0-9/+=_-]){shape}(?![A-Za-z0-9/+=_-])"))
           for label, (secret, shape) in PAIRED_SECRETS.items()}
_PAIR_REACH = 300  # a key id's secret is on its line, the next, or a few fields away (CSV, JSON, an ini section)


def paired_spans(text: str, tokens: list[Span]) -> list[Span]:
    """The secret half of a key pair near its key id (``AKIA…,wJalr…`` in a CSV, ``id:secret``, ``aws configure``)."""
    windows: dict[str, list[tuple[int, int]]] = {}
    for start, end, label in sorted(tokens):
        if label in _PAIRED:  # overlapping windows are searched once: many ids cost no more than one long text
            spans = windows.setdefault(label, [])
            first, last = max(0, start - _PAIR_REACH), end + _PAIR_REACH
            if spans and first <= spans[-1][1]:
                spans[-1] = (spans[-1][0], last)
            else:
                spans.append((first, last))
    found = []
    for label, spans in windows.items():
        secret, pattern = _PAIRED[label]
        found += [(m.start(), m.end(), secret) for first, last in spans for m in pattern.finditer(text, first, last)
                  if _random_mix(m[0])]
    return found


def _random_mix(value: str) -> bool:
    """Upper and lower case letters and digits, as a generated secret has (a hex digest or a word has not)."""
    return (any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)
            and looks_random(value) and "EXAMPLE" not in value)


@dataclass(frozen=True)
class _Form:
    """One way an option carries a secret (see ``CLI_SECRET_OPTIONS``)."""

    option: str
    joint: str  # "" attached, " " the next word, "=" after "="
    prefix: str  # literal text before the secret ("pass:"), if any
    separator: str  # the secret follows the first of these in the value ("U:X"), if any


def _form(text: str) -> _Form:
    joint = next((j for j in (" ", "=") if j in text), "")
    option, template = text.partition(joint)[::2] if joint else (text[:2], text[2:])
    prefix = template[:-1]
    if len(prefix) == 2 and prefix[0] in "UK":
        return _Form(option, joint, "", prefix[1])
    return _Form(option, joint, prefix, "")


def _commands() -> dict[str, list[tuple[tuple[str, ...], tuple[_Form, ...]]]]:
    """Program -> (subcommand words, forms) from ``CLI_SECRET_OPTIONS``."""
    table: dict[str, list[tuple[tuple[str, ...], tuple[_Form, ...]]]] = {}
    for programs, forms in CLI_SECRET_OPTIONS:
        parsed = tuple(map(_form, forms.split(",")))
        for program in programs.split(","):
            name, *subcommands = program.split()
            table.setdefault(name, []).append((tuple(subcommands), parsed))
    return table


_COMMANDS = _commands()
_PROGRAM_WORDS = {program: re.split(r"[\W_]", program)[0] for program in _COMMANDS}  # "redis-cli": "redis"
# a shell word (quotes kept) after the blanks before it; a command ends at a newline, | ; & < > ( )
_SHELL_WORD = re.compile(r"""(?:[ \t]|\\\r?\n)*+((?:[^\s'"`|;&<>()\\]++|'[^'\n]*+'|"(?:[^"\\\n]|\\.)*+"|\\.)++)""")
_MAX_WORDS = 64


def option_spans(text: str, present: frozenset[str]) -> list[Span]:
    """Passwords given to commands: ``mysql -pS3cret``, ``curl -u user:pass``, ``sshpass -p 'pw'``, ``docker login``.

    ``present``: the words of the text (a program's first word must be one)."""
    found: list[Span] = []
    for program in (p for p, word in _PROGRAM_WORDS.items() if word in present):
        scanned = 0  # an occurrence among the words of the last one read is an argument of it, and is not re-read
        i = text.find(program)
        while i >= 0:
            end = i + len(program)
            if i >= scanned and not (i and (text[i - 1].isalnum() or text[i - 1] in "_.-")) and text[end:end + 1] in (
                    " ", "\t"):
                words = _command_words(text, end)
                scanned = words[-1][1] if words else end
                for subcommands, forms in _COMMANDS[program]:
                    found += _option_values(text, words, subcommands, forms)
            i = text.find(program, end)
    return found


def _command_words(text: str, pos: int) -> list[tuple[int, int]]:
    words: list[tuple[int, int]] = []
    while len(words) < _MAX_WORDS and (m := _SHELL_WORD.match(text, pos)):
        words.append(m.span(1))
        pos = m.end()
    return words


def _option_values(text: str, words: list[tuple[int, int]], subcommands: tuple[str, ...],
                   forms: tuple[_Form, ...]) -> list[Span]:
    first = 0
    for sub in subcommands:  # "docker login": the options after "login"
        first = next((n + 1 for n in range(first, len(words)) if text[slice(*words[n])] == sub), -1)
        if first < 0:
            return []
    found = []
    for n in range(first, len(words)):
        start, end = words[n]
        word = text[start:end]
        for form in forms:
            if not word.startswith(form.option):
                continue
            if form.joint == " " and word == form.option and n + 1 < len(words):
                value = words[n + 1]
            elif form.joint and form.joint != " " and word.startswith(form.joint, len(form.option)):
                value = (start + len(form.option) + 1, end)
            elif not form.joint and len(word) > len(form.option):
                value = (start + len(form.option), end)
            else:
                continue
            if not PLACEHOLDER.fullmatch(text[slice(*value)]) and (secret := _option_secret(
                    text, *_unquoted(text, *value), form)):
                found.append((*secret, "password"))
                break
    return found


def _unquoted(text: str, start: int, end: int) -> tuple[int, int]:
    quoted = end - start >= 2 and text[start] in "'\"" and text[end - 1] == text[start]
    return (start + 1, end - 1) if quoted else (start, end)


def _option_secret(text: str, start: int, end: int, form: _Form) -> tuple[int, int] | None:
    if form.prefix:
        if not text.startswith(form.prefix, start, end):
            return None
        start += len(form.prefix)
    elif form.separator:
        cut = text.find(form.separator, start, end)
        if cut < 0 or NOT_SECRET_KEYS.fullmatch(text[start:cut]):
            return None
        start, end = _unquoted(text, cut + 1, end)
    value = text[start:end]
    return (start, end) if len(value) >= 3 and not PLACEHOLDER.fullmatch(value) else None


def _column_names() -> dict[str, tuple[str, ...]]:
    """Each way a credential column's name is written, lower case ("secret access key", "secret_access_key", ...) ->
    what must be in the text for it to be (its words, or itself if it is no ASCII word)."""
    forms = {join.join(name.split()) for name in CREDENTIAL_COLUMNS for join in (" ", "_", "-", "")}
    return {form: tuple(re.split(r"[ _-]", form)) for form in sorted(forms, key=len, reverse=True)}


_COLUMN_NAMES = _column_names()
_CELL_PADDING, _DELIMITERS = " \t\"'`*", (",", "\t", "|")
_TABLE_RULE = re.compile(r"[\s|:+=-]*")  # a Markdown table's |---|---| line


def table_spans(text: str, lowered: str, present: frozenset[str]) -> list[Span]:
    """Cells of a credential column of a table pasted as text (CSV, TSV, Markdown): ``Access key ID,Secret access
    key`` then its rows. ``lowered``: the text in lower case, as long; ``present``: the words and rule triggers found
    in it."""
    headers = set()
    for name, needs in _COLUMN_NAMES.items():
        i = lowered.find(name) if present.issuperset(needs) else -1
        while i >= 0:
            if _delimited(lowered, i, i + len(name)):
                headers.add(lowered.rfind("\n", 0, i) + 1)
            i = lowered.find(name, i + len(name))
    found: list[Span] = []
    lines_read = 0  # a table's rows are read once, even where a row names a credential column too
    for first in sorted(headers):
        if first >= lines_read:
            lines_read, spans = _table_rows(text, lowered, first)
            found += spans
    return found


def _delimited(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is a whole cell (padding aside): a delimiter or a line's end on either side."""
    while start and text[start - 1] in _CELL_PADDING:
        start -= 1
    while end < len(text) and text[end] in _CELL_PADDING:
        end += 1
    return (not start or text[start - 1] in ",\t|\n") and (end == len(text) or text[end] in ",\t|\r\n")


def _line(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def _table_rows(text: str, lowered: str, start: int) -> tuple[int, list[Span]]:
    """(where the table that starts at ``start`` ends, the secret cells of it) -- if a credential column heads it."""
    header_end = _line(text, start)
    header = lowered[start:header_end]
    for delimiter in _DELIMITERS:
        names = header.split(delimiter)
        columns = [n for n, name in enumerate(names) if name.strip(_CELL_PADDING + "\r") in _COLUMN_NAMES]
        if len(names) >= 2 and columns:
            break
    else:
        return header_end, []
    found, row = [], header_end + 1
    while row < len(text):
        end = _line(text, row)
        cells = text[row:end].rstrip("\r").split(delimiter)
        if len(cells) != len(names):
            break
        if not _TABLE_RULE.fullmatch(text[row:end]):
            offsets = list(itertools.accumulate((len(c) + 1 for c in cells[:-1]), initial=row))
            for n in columns:
                cell = cells[n].strip()
                at = offsets[n] + cells[n].find(cell)
                start_, end_ = _unquoted(text, at, at + len(cell))
                if end_ - start_ >= 3 and not PLACEHOLDER.fullmatch(text[start_:end_]):
                    found.append((start_, end_, "secret"))
        row = end + 1
    return row, found


_CREDENTIAL_LINES = [(label, re.compile(pattern, re.MULTILINE)) for label, pattern in CREDENTIAL_LINES]


def line_spans(text: str) -> list[Span]:
    """Fields of one-line credential files (``~/.pgpass``)."""
    return [(*m.span("value"), label) for label, pattern in _CREDENTIAL_LINES for m in pattern.finditer(text)
            if not PLACEHOLDER.fullmatch(m["value"])]
