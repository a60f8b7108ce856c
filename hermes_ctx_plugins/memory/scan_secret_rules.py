"""Secret formats for the memory threat scanner: known token prefixes, ``key = value`` credentials, passwords in prose.

A secret in a memory entry is a leak waiting for a prompt: whatever the model sees, it may repeat. Token formats are
matched in the raw text (their case matters), ``key: value`` credentials in the folded view (so fullwidth letters or
look-alikes in the key do not hide one). A value must look like a secret, not like a placeholder, a name or a path.
:mod:`hermes_ctx_plugins.memory.scan` runs these rules and redacts what they find.
"""

from __future__ import annotations

import math
import re

from .scan_rules import rule

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


def _compound_assignment(view: str, m: re.Match[str]) -> bool:
    """``m`` starts at the credential word; the name it ends is read backwards ("storage_account_" + "key")."""
    head = _NAME_START.search(view, max(0, m.start() - 30), m.start())
    name = (head[0] if head else "") + m[0][:len(m["key"]) + 1].rstrip("\"' :=")
    return bool(head) and bool(_SECRET_KEY_NAME.search(name)) and not _PUBLISHED_KEY.search(name) and _real_value(
        view[slice(*value_span(m))], password=password_key(m["key"]), key=name)


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
    return m.lastgroup == "private_key" or (any(c.isdigit() for c in m[0]) and _entropy(m[0]) >= 3.0
                                            and "example" not in m[0].lower())


def value_span(m: re.Match[str]) -> tuple[int, int]:
    """Where the secret is: the value of a ``key: value`` style match, else all of it."""
    return next((m.span(g) for g in ("value", "said", "zh_value") if g in m.re.groupindex and m[g]), m.span())


def rule_key(m: re.Match[str]) -> str:
    return next((m[g] for g in ("key", "is", "zh") if g in m.re.groupindex and m[g]), "password")


def _assignment(view: str, m: re.Match[str]) -> bool:
    start = m.start()  # the key must start a word: "bypass=" is not a password
    return not (start and view[start - 1].isascii() and view[start - 1].isalnum()) and _real_value(
        view[slice(*value_span(m))], password=password_key(rule_key(m)), key=rule_key(m))


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
_VENDOR_ANCHORS = ",".join(a for a, _, _ in _VENDORS)
_VENDOR_TRIGGERS = ",".join(t for _, t, _ in _VENDORS)
_VENDOR_TOKENS = "|".join(r for _, _, r in _VENDORS)
SECRET_RULES = (  # most specific first (an earlier span wins an overlap); every match starts at an anchor
    rule("secret", "token", (0, 0), "-----BEGIN,sk-,ghp_,gho_,ghu_,ghs_,ghr_,github_pat_,glpat-,xox,xapp-,"
         "hooks.slack.com,discord,AKIA,ASIA,ABIA,ACCA,AIza,ya29.,sk_live_,sk_test_,rk_live_,rk_test_,hf_,npm_,pypi-,"
         "SG.,:AA,eyJ", r"(?P<private_key>-----BEGIN[A-Z0-9 ]"
         r"{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z))|"
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
