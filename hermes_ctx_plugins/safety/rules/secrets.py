"""Secrets: credentials a memory entry must not carry, and the redactor must take out of every stored turn.

A secret in a memory entry is a leak waiting for a prompt: whatever the model sees, it may repeat. Token formats
(known prefixes) are matched in the normalised view (case kept; zero-width characters dropped, fullwidth letters read
as ASCII), ``key: value`` credentials and passwords in prose in the folded view (so fullwidth letters or look-alikes in
the key do not hide one). A value must look like a secret, not like a placeholder, a name or a path (the engine's
``values`` module says what does). Rules are listed most specific first: where finds overlap, the first one's label
names the redaction.

Layouts that no ``key: value`` shape names are tables at the end of this module: a password given to a command, a
column of a credential table, a field of a credentials file, the secret half of a key pair. The engine's ``layouts``
module reads them.
"""

from __future__ import annotations

from .record import Near, Rule, lazy

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


def _value_char(quote: str) -> str:
    """One character of a ``key: value`` secret's value: not white space, quotes or what closes a bracket; unless
    the group ``quote`` opened a quoted value, not a JSON string's escape of a line break or tab either (an env
    line's ``DB_PASSWORD=x\\nDB_USER=app`` in a tool's JSON answer: the value is ``x``; read on, its redaction took
    the lines after it, a red-team pass; a quoted ``"password": "ab\\tcd"`` is one value; an escaped backslash is a
    character of it). A quoted value may hold ")" (Django's generated keys do: cut there, 40 characters of it were
    kept; a red-team pass); its quote ends it."""
    return rf"(?({quote})[^\s\"'`,;\]}}<>]|(?:[^\s\"'`,;)\]}}<>\\]|\\\\|\\(?![nrt])))"



# A private key: its BEGIN line, then base64 and white space (a key on one line, or its lines) up to its END line; or
# the body's lines after the BEGIN line, to its END line if there is one (else cut short: a `head` of the file, a
# read_file limit, hermes' truncation notice in its middle): base64 (16 or more, or ending in "="), behind a gutter
# (read_file's "12|", `cat -n`), a quote or "> ", header fields (Proc-Type), the notice. Code or prose between a BEGIN
# and an END (constants naming both) is no key: read as one, it was taken. Nor a BEGIN line alone (code testing for
# one, docs naming it): read to the end of the text, its redaction took everything after the line, closing quotes of
# a tool's JSON answer included; a scan past other BEGIN lines made grep's output of them 100x slower (red-team passes).
_PEM_BEGIN = r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_PEM_END_LINE = r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
# read_file's "12|", cat -n, "> ", a quote
_PEM_GUTTER = r"[ \t]*+(?:\d{1,7}(?:[|:\t]|\\t)[ \t]*+|> ?|(?:\\{1,15}\"|['`]) ?)?"
_PEM_END = rf"{_PEM_GUTTER}{_PEM_END_LINE}"
# line breaks: raw, escaped (JSON in JSON in JSON), <br>
_PEM_BREAKS = r"(?:[ \t]*+(?:\r?\n|(?:\\{1,15}r)?\\{1,15}n|<br ?/?>))++"
_PEM_EOL = r"(?:(?:\\{1,15}\"|['`]),?|\$)?"  # a line's quote (not a JSON string's own end), cat -A's $
_PEM_TAIL = rf"{_PEM_EOL}(?=[ \t]*+(?:\r?\n|[\\\"<\]]|\Z|-----))"
_PEM_FIRST = rf"{_PEM_GUTTER}(?:[A-Za-z0-9+/=]|\\/){{16,200}}+{_PEM_TAIL}"  # \/: PHP's JSON
_PEM_LINE = rf"{_PEM_GUTTER}(?:(?:[A-Za-z0-9+/]|\\/){{16,200}}+=*+|[A-Za-z0-9+/]{{2,15}}+=++){_PEM_TAIL}"
_PEM_FIELD = r"[ \t]*+[A-Z][A-Za-z-]{1,20}:(?:(?!-----)[^\n\\\"]){0,200}+"  # Proc-Type: 4,ENCRYPTED / Version: GnuPG
_PEM_NOTICE = r"[ \t]*+\.\.\. \[OUTPUT TRUNCATED[^\]\n\\]{0,200}\](?: \.\.\.)?"  # hermes' terminal tool cut it
# base64, white space, escaped breaks and quotes, a line's quotes, commas, "+", XML's &#13;, read_file's "12|" (a key
# as a string per line of source code, or in JSON): no code's names or calls, no prose's punctuation
_PEM_BODY = r"(?:[A-Za-z0-9+/=\s\"',&#;|]|\\{1,15}[nrt\"/]|\\\r?\n)"
# A whole key whose every line carries some prefix (git's "-", diff's "< ", grep's "file:", a log's timestamp, YAML's
# "- "): BEGIN, lines each ending in base64 after at most 80 characters, END (a fourth red-team pass: all left)
_PEM_NL = r"(?:\r?\n|(?:\\{1,15}r)?\\{1,15}n)"
_PEM_PREFIX = r"(?:(?!\\{1,15}n)[^\n]){0,80}?"
_PEM_RUN = r"(?:[A-Za-z0-9+/]{16,200}=*|[A-Za-z0-9+/]{2,15}=+)(?:\\{1,15}\"|[\"'`])?,?[ \t]*"
_PEM_PREFIXED = (rf"{_PEM_BEGIN}[^\n\\]{{0,8}}(?>{_PEM_NL}{_PEM_PREFIX}{_PEM_RUN}(?={_PEM_NL})){{1,400}}+{_PEM_NL}"
                 rf"{_PEM_PREFIX}{_PEM_END_LINE}")  # each line matched once: no backtracking
_PEM_KEY = (rf"{_PEM_BEGIN}(?={_PEM_BODY}{{0,300}}?[A-Za-z0-9+/]{{16}}){_PEM_BODY}{{0,20000}}?{_PEM_END_LINE}|"
            rf"{_PEM_PREFIXED}|"
            rf"{_PEM_BEGIN}{_PEM_EOL}(?:{_PEM_BREAKS}{_PEM_FIELD}){{0,8}}?{_PEM_BREAKS}{_PEM_FIRST}"
            rf"(?:{_PEM_BREAKS}(?:{_PEM_LINE}|{_PEM_FIELD}|{_PEM_NOTICE}))*+(?:{_PEM_BREAKS}{_PEM_END})?")


# what makes "token 4dc193bc..." a credential: the kind of token named just before it ("auth token", "access key")
_CREDENTIAL_QUALIFIER = lazy(r"(?<![a-z])(?:auth|access|api|secret|bearer|bot|refresh|session|app|client|master|"
                             r"private|signing|personal|deploy|admin|service|webhook|integration|account|license|"
                             r"unseal|recovery|root|encryption|decryption|wallet)[\s_-]$")
#: a Cookie or Set-Cookie header's name
#: a Cookie or Set-Cookie header's name, and nothing but its line up to the cookie (a review: a "cookie:" anywhere in
#: the 2 kB before took an AUTHOR_SHA, a pageToken, a session_state of other lines); a literal first: searched fast
_COOKIE_HEADER = lazy(r"cookie[\"']?[ \t]*:(?:(?!\\[nr])[^\n\r]){0,2000}\Z")
#: where the cookie's name starts: after the header's colon, a "; " or a space, the name's characters alone since
_COOKIE_NAME = lazy(r"[:;\s][\w.$-]{0,40}\Z")
# a signed URL's parameter follows "?" or "&" (or "-" inside a name: X-Amz-Security-Token)
_PARAMETER_START = lazy(r"[?&-]")

#: a digit spelt as a word
_DIGIT_WORD = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)"
#: what names a PIN or a door code, and what it is for ("PIN for the card ending 4421")
_PIN_ANCHORS = "pin,passcode,door,alarm,gate,safe,lock,garage,entry,security"
_PIN_KEY = (r"(?<![\w-])(?P<key>pin(?:\s+(?:code|number))?|passcode|(?:door|alarm|gate|safe|lock|garage|entry|"
            r"security)\s+(?:code|pin))\b(?:\s+(?:for|of|on|to)\s+[^\n:=]{1,30}?)?")

RULES = (  # most specific first (joined overlapping spans take the earlier's label); matches start at anchors
    # the big few, known by their prefix; a private key as _PEM_KEY says
    Rule("secrets/token-formats", "secret", "token", (0, 0),
         "-----BEGIN,sk-,ghp_,gho_,ghu_,ghs_,ghr_,github_pat_,glpat-,xox,xapp-,hooks.slack.com,discord,AKIA,ASIA,ABIA,"
         "ACCA,AIza,ya29.,sk_live_,sk_test_,rk_live_,rk_test_,hf_,npm_,pypi-,SG.,:AA,eyJ",
         rf"(?P<private_key>{_PEM_KEY})|" r"\b(?:(?P<anthropic_key>sk-ant-[\w-]{20,})|"
         r"(?P<openai_key>sk-(?:proj-|svcacct-|admin-)?[\w-]{20,})|(?P<github_token>gh[pousr]_[A-Za-z0-9]{30,}|"
         r"github_pat_\w{22,})|(?P<gitlab_token>glpat-[\w-]{20,})|(?P<slack_token>xox[abposr]-[A-Za-z0-9-]{10,}|"
         r"xapp-\d-[A-Za-z0-9-]{10,})|(?P<aws_access_key>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b)|"
         r"(?P<google_api_key>AIza[\w-]{35})|(?P<google_oauth_token>ya29\.[\w-]{20,})|(?P<stripe_key>[rs]k_(?:live|"
         r"test)_[0-9A-Za-z]{10,})|(?P<huggingface_token>hf_[A-Za-z0-9]{30,})|(?P<npm_token>npm_[A-Za-z0-9]{36}\b)|"
         r"(?P<pypi_token>pypi-AgE[\w-]{30,})|(?P<sendgrid_key>SG\.[\w-]{16,}\.[\w-]{16,})|"
         r"(?P<jwt>eyJ[\w-]{8,1024}+\.eyJ[\w-]{8,}+\.[\w-]{8,}))|(?P<slack_webhook>hooks\.slack\.com/(?:services|workflows|"
         r"triggers)/[\w/-]{20,})|(?P<discord_webhook>discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,})|"
         r"(?<=\d{8})(?P<telegram_bot_token>:AA[\w-]{33}(?![\w-]))",
         view="normalised", context=("random token",),
         triggers="begin,sk,rk,ghp,gho,ghu,ghs,ghr,github,glpat,xoxa,xoxb,xoxp,xoxo,xoxs,xoxr,xapp,slack,discord,"
                  "discordapp,ya29,hf,npm,pypi,sg,AKIA,ASIA,ABIA,ACCA,AIza,eyJ,:AA",
         languages=()),
    # Mailchimp keys end in their datacenter ("<32 hex>-us21"): the anchor is at the end
    Rule("secrets/mailchimp-key", "secret", "token", (34, 6),
         "-us",
         r"(?<![0-9a-f])(?P<mailchimp_key>[0-9a-f]{32}-us\d{1,2})\b",
         view="normalised", context=("random token",), triggers="-US", languages=()),
    # a rule of their own, so that their many anchors are searched only when one of their prefixes is present
    Rule("secrets/vendor-tokens", "secret", "token", (0, 0),
         _VENDOR_ANCHORS,
         rf"\b(?:{_VENDOR_TOKENS})",
         view="normalised", context=("random token",), triggers=_VENDOR_TRIGGERS, languages=()),
    Rule("secrets/auth-header", "secret", "auth-header", (0, 0),
         "bearer,basic,digest",
         r"(?:bearer|basic|digest)\s+(?!\[redacted)(?P<value>[a-z0-9._~+/-]{12,}=*)",
         context=("secret value",), languages=()),
    # an Authorization header of any scheme ("token <hex>" is GitHub's, Gitea's, Django REST framework's), or none
    Rule("secrets/authorization-header", "secret", "auth-header", (0, 0),
         "authorization",
         r"authorization[\"']?\s*[:=]\s*[\"']?(?:[a-z][\w-]{1,20}[ \t]+)?(?!\[redacted)(?P<value>[\w.~+/-]{12,}=*)",
         context=("secret value",), languages=()),
    # a session cookie in a Cookie or Set-Cookie header (curl -v, an HTTP log, a browser's copy as cURL): whoever holds
    # it is logged in (a red-team pass: connect.sid, sessionid, PHPSESSID, 200 of 200 kept); its name says so; the
    # header is looked for in the 2 kB before it, not on its whole line (one line: a JSON answer, a HAR file's)
    Rule("secrets/session-cookie", "secret", "cookie", (0, 0),
         "sess,sid,token,auth,jwt,remember,csrf,xsrf,login&cookie",
         r"(?:sess(?:ion)?|sid|token|auth|jwt|remember|csrf|xsrf|login)[\w.$-]{0,40}=(?!\[redacted)"
         r"(?P<value>[a-z0-9%._~+/:=-]{16,512}+)(?![\w%.~+/:=-])",  # possessive: a long run is not backtracked
         context=(Near(_COOKIE_NAME, "before", 48), Near(_COOKIE_HEADER, "before", 2048), "secret value"),
         triggers="SESS,SID,TOKEN,AUTH,JWT,REMEMBER,CSRF,XSRF,LOGIN", languages=()),
    # Redis's password: redis.conf's or CONFIG SET's "requirepass X", and CONFIG GET's answer, the name and the value on
    # numbered lines (1) "requirepass" / 2) "X"; a red-team pass: 54 of 54 kept), raw or in a JSON answer's string
    Rule("secrets/redis-password", "secret", "password", (0, 0),
         "requirepass,masterauth",
         r"(?:requirepass|masterauth)\\?[\"']?(?:[ \t]*+(?:\r?\n|\\n)[ \t]*+\d{1,3}\)[ \t]*+|[ \t]++)"
         r"(?P<q>\\?[\"'])?(?!\[redacted|[.*^$])(?P<value>(?:(?![\"'\\])[!-~]){6,200})",  # ASCII: not Chinese
         context=("password value",), triggers="REQUIREPASS,MASTERAUTH", languages=()),  # "\nrequirepass" too
    # a credential given to a command as a flag and its own argument: --token X, --db-password X, keytool -storepass X
    # (not a flag asking for one, skipping or matching one: --ask-vault-pass site.yml, --skip-password db2; nor one
    # whose argument is settings: docker build --secret id=npmrc,src=...; a red-team pass)
    Rule("secrets/credential-flag", "secret", "password", (0, 0),
         "--,-storepass,-keypass,-srcstorepass,-deststorepass&password,passwd,pass,passphrase,pwd,token,secret,apikey,"
         "api,storepass,keypass,srcstorepass,deststorepass",
         r"--?(?!(?:ask|skip|no|match|show|print|prompt|require|requires|hide|check|reset)[-_])"
         r"(?P<key>(?:[a-z0-9]+[-_]){0,4}(?:password|passwd|pass|passphrase|pwd|token|secret|secret[-_]key|api[-_]?key|"
         r"(?:src|dest)?storepass|keypass))(?:[ \t]|\\t)+(?!-)(?P<q>\\?[\"'])?(?!\[redacted)"
         r"(?P<value>[^\s\"'`,;)\]}<>\\=]{6,200}={0,2})(?![=\w])",
         context=("password value",), languages=()),
    Rule("secrets/url-password", "secret", "url-password", (0, 0),
         "://&@",
         r"://(?P<user>[^\s:/@'\"<>]{0,64}):(?!\[redacted)(?P<value>[^\s@/'\"<>]{1,128})@(?=[\w.\[-])",
         context=("url password",), languages=()),
    Rule("secrets/assignment", "secret", "password", (0, 0),
         "pass,pwd,pw,secret,token,api,access,auth,client,private,credential,密码,口令,密钥,秘钥,令牌,私钥&"
         "=,:,：,is,was,是,为, ",  # noqa: RUF001 (a fullwidth colon; a space: "密码 Corp#2024zz")
         r"(?P<key>(?:password|passwd|passphrase|pwd|pass|secret|token|api[\s_-]?key|apikey|access[_-]?key|auth[_-]?key|client[_-]?secret|private[_-]?key|"
         r"credentials?)(?:[_.-][a-z0-9]+)*)[\"']?\s*(?::=|=>|[:=])\s*(?P<q1>[\"'])?(?!\[redacted)(?P<value>"
         + _value_char("q1") + r"{6,200})|(?P<is>password|passwd|passphrase|passcode|pwd|pw)"
         r"(?:\s+(?:for|of|on|to)\s+[^\n:=]"
         r"{1,30}?)?(?:\s*[:=]|\s+(?:is|was)|\s*(?:是|为)|[ \t]+(?=\S*\d)(?=\S*[a-z])(?=\S*[^\w\s])|"
         r"[ \t]+(?=[a-z0-9]{12,}\b)(?=[a-z]*\d)(?=\d*[a-z]))\s*:?\s*(?P<q2>[\"'])?"
         r"(?P<said>" + _value_char("q2") + r"{6,200})|"
         r"(?P<zh>密码|口令|密钥|秘钥|令牌|私钥)\s*(?:[:：=]|是|为|\s(?=\S*\d)(?=\S*[a-z]))\s*[\"'“]?(?P<zh_value>"  # noqa: RUF001
         r"[a-z0-9!@#$%^&*_+=./~-]{6,200})",
         context=("credential assignment",),
         triggers="password,passwd,passphrase,passcode,pwd,pw,pass,secret,token,api,apikey,access,auth,client,"
                  "private,credential,credentials,密码,口令,密钥,秘钥,令牌,私钥",
         languages=("en", "zh")),
    # compound names the rule above cannot see: "AccountKey=", "SecretKey:", "clientSecret:", "storage_account_key="
    Rule("secrets/compound-name", "secret", "secret", (0, 0),
         "key,secret,token,password,passwd,pwd&=,:,是,为,is",
         r"(?P<key>key|secret|token|passw(?:or)?d|pwd)s?[\"']?\s*(?::=|=>|[:=]|是|为|"
         r"(?<=\w)\s+is)\s*(?P<q>[\"'])?(?!\[redacted)(?P<value>" + _value_char("q") + r"{6,200})",
         context=("compound credential name",),
         triggers="KEY,SECRET,TOKEN,PASSWORD,PASSWD,PWD",
         languages=("en",)),
    # a credential named in one field and its value in the next: Kubernetes env (- name: DB_PASSWORD / value: ...),
    # ECS and .NET config ({"name": "API_TOKEN", "value": ...}, <add key="DbPassword" value="..."/>), terraform output;
    # nothing between names another field, nor is a value itself (14 letters or digits in a row: a redacted one too)
    Rule("secrets/name-then-value-field", "secret", "password", (0, 0),
         _CREDENTIAL_WORDS + "&value",
         rf"(?P<key>{_CREDENTIAL_WORD})(?![a-z0-9_])[\"']?(?:(?!\b(?:name|key|value)\b|"
         rf"\w{{14}})[\s\S]){{0,160}}?\bvalue[\"']?\s*[:=]\s*(?P<q>[\"'])?(?!\[redacted)(?P<value>{_value_char('q')}{{6,200}}"
         rf")",
         context=("credential name",), triggers=_CREDENTIAL_TRIGGERS, languages=()),
    # ... as two quoted arguments (define('DB_PASSWORD', '...'), setenv("API_TOKEN", "...")), or an XML element
    Rule("secrets/name-and-value-arguments", "secret", "password", (0, 0),
         _CREDENTIAL_WORDS + "&',\"",
         rf"(?P<key>{_CREDENTIAL_WORD})[\"']\s*,\s*[\"'](?!\[redacted)(?P<value>[^\"'\n]{{6,200}})[\"']",
         context=("quoted credential name",), triggers=_CREDENTIAL_TRIGGERS, languages=()),
    Rule("secrets/xml-element", "secret", "password", (0, 0),
         _CREDENTIAL_WORDS + "&</",
         rf"(?P<key>{_CREDENTIAL_WORD})>(?!\[redacted)(?P<value>[^<\n]{{1,200}})</",
         context=("credential element",), triggers=_CREDENTIAL_TRIGGERS, languages=()),
    # SQL: CREATE USER ... IDENTIFIED BY '...'
    Rule("secrets/sql-identified-by", "secret", "password", (0, 0),
         "identified",
         r"identified\s+(?:with\s+[\w-]+\s+)?by\s+(?:password\s+)?(?P<q>[\"'])(?!\[redacted)(?P<value>[^\"'\n]{1,200})"
         r"(?P=q)",
         context=("password value",), languages=()),
    # signed URLs: an Azure SAS, an S3 or GCS presigned URL (its signature, and a session token riding along)
    Rule("secrets/url-signature", "secret", "url-signature", (0, 0),
         "sig=,signature=,security-token=",
         r"(?:sig|signature|security-token)=(?!\[redacted)(?P<value>[^&?=\s'\"#<>]{16,1200})",
         context=(Near(_PARAMETER_START, "before", 1), "secret value"), languages=()),
    Rule("secrets/value-is-the-password", "secret", "password", (70, 40),
         "password,passphrase,passcode&is,was",
         r"(?<![\w:\[-])(?P<value>[^\s\"'`,;:\[\]]{6,64})\s+(?:is|was)\s+(?:the|my|our|their|his|"
         r"her)\s+(?:\w+\s+){0,2}?(?:password|passphrase|passcode|pin)\b",
         context=("password value",), languages=("en",)),
    # a credential named, then its value with no sign between ("auth token 4dc193bc...", "access key AbC9...")
    Rule("secrets/named-token", "secret", "secret", (0, 0),
         "token,key,secret&auth,access,api,secret,bearer,bot,refresh,session,app,client,master,private,signing,"
         "personal,deploy,admin,service,webhook,integration,account,license",
         r"(?P<key>token|key|secret)s?\s+(?:is\s+|was\s+)?(?!\[redacted)(?P<value>[a-z0-9+/_=.-]{16,200})(?![\w+/=.-])",
         context=(Near(_CREDENTIAL_QUALIFIER, "before", 16), "secret value"), languages=("en",)),
    # "AK: ... SK: ..." (Baidu, Volcengine, Huawei and others name their key pair so)
    Rule("secrets/ak-sk-pair", "secret", "secret", (0, 0),
         "ak,sk,akid",
         r"(?<![\w-])(?P<key>ak|sk|akid|ak_?id|sk_?secret)\s*[:=]\s*[\"']?(?P<value>[a-z0-9+/_=-]{16,200})",
         context=("secret value",), languages=("en",)),
    # a login written as a pair ("login for the staging admin: admin / Sp4rrow!Staging") on one line; what follows
    # the user is no JSON key ({"account": 12345, "region": ...}: the key went, and the JSON with it; a red-team pass)
    Rule("secrets/login-pair", "secret", "password", (0, 0),
         "login,credential,creds,account,sign,username",
         r"(?:login|credentials?|creds|account|sign[\s-]?in|username\s*/\s*password)\b[^\n:]{0,30}[:=]\s*"
         r"(?P<user>[\w.@+-]{2,40})[ \t]*(?:/|\||,|:)[ \t]*(?!\\{0,3}\"[^\"\\\n]{0,64}\\{0,3}\"\s*:)"
         r"(?P<value>(?:[^\s,;\\\"]|\\\\|\\(?![nrt])|\"(?![\s,;)}\]]|$)){6,64})",
         context=("login pair",), languages=("en",)),
    # a quoted value with spaces after a credential's name: an app password, a passphrase mixing in digits or symbols
    Rule("secrets/quoted-passphrase", "secret", "password", (0, 0),
         "password,passwd,passphrase,pwd,secret&=,:",
         r"(?P<key>password|passwd|passphrase|pwd|secret)(?:[_.-][a-z0-9]+)*[\"']?\s*(?::=|=>|[:=])\s*"
         r"(?P<q>\\?[\"'])(?!\[redacted)(?P<value>[^\"'\n\\]{6,100})(?P=q)",
         context=("passphrase",), languages=()),
    # a .netrc's machine entry ("machine github.com login octocat password Gh0stPass2024"), on one line or several
    Rule("secrets/netrc-password", "secret", "password", (0, 0),
         "login&password",
         r"login(?:\s|\\[nrt])+(?!(?:anonymous|ftp)\b)[^\s\\]{1,100}(?:\s|\\[nrt])+password(?:\s|\\[nrt])+"
         r"(?!\[redacted)"
         r"(?P<value>[^\s\\\"'`]{4,200})",
         context=("password value",), languages=()),
    # PINs and door codes are short digits ("PIN for the card ending 4421 is 8375", "the alarm code is 2231")
    Rule("secrets/pin-or-door-code", "secret", "password", (0, 0), _PIN_ANCHORS,
         rf"{_PIN_KEY}(?:\s*[:=]|\s+(?:is|was)|\s*(?:是|为))\s*[\"']?(?P<value>\d{{4,8}})(?![\d.,%])",
         languages=("en",)),
    # ... spelt in words ("the PIN is seven three zero eight", "alarm code: four-one-one-nine")
    Rule("secrets/pin-or-door-code-in-words", "secret", "password", (0, 0), _PIN_ANCHORS,
         rf"{_PIN_KEY}(?:\s*[:=]|\s+(?:is|was))\s*[\"']?(?P<value>(?:{_DIGIT_WORD}[\s,-]+){{3,7}}{_DIGIT_WORD})\b",
         languages=("en",)),
    # a Wi-Fi network's key ("The Wi-Fi at the cabin: SSID Birchwood, key Lantern&Moss_57")
    Rule("secrets/wifi-key", "secret", "password", (0, 0),
         "wi-fi,wifi,wlan,wpa,wpa2,ssid",
         r"(?:wi-?fi|wlan|wpa2?|ssid)\b[^\n]{0,60}?\b(?:key|password|pass|pw|passphrase)\s*(?:[:=]|is)?\s*(?P<q>[\"'])?(?P<value>(?(q)[^\s\"',;]|(?:[^\s\"',;\\]|\\\\|\\(?![nrt]))){8,63})",
         context=("password value",), languages=("en",)),
    # Google app passwords: four groups of four letters ("app password qpzk vwtr hmxe lbna")
    Rule("secrets/app-password", "secret", "password", (0, 0),
         "app,application,应用,专用&password,passwords,密码",
         r"(?:app(?:lication)?[\s-]*(?:specific\s+)?passwords?|应用专用密码|应用密码|"
         r"专用密码)[^\n]{0,24}?(?<![a-z])(?P<value>[a-z]{4}(?:[ -]?[a-z]{4}){3})(?![a-z])",
         languages=("en", "zh")),
    Rule("secrets/seed-phrase", "secret", "seed-phrase", (0, 0),
         "seed,recovery,mnemonic",
         r"(?:seed|recovery|mnemonic)\s+(?:phrase|words?)\b[^\n]{0,20}?[:=]\s*(?P<value>(?:[a-z]{3,8}[ \t]+){11,23}"
         r"[a-z]{3,8})(?![\w-])",
         languages=("en",)),
)

# ------------------------------------------------------------------------------------- layouts rather than formats
# Secrets that no ``key: value`` shape names: a password given to a command, a column of a credential table, a field of
# a credentials file, the secret half of a key pair. :mod:`hermes_ctx_plugins.safety.engine.layouts` reads these tables.

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
NOT_SECRET_KEYS = lazy(r"(?i)user(?:[_-]?name)?|login|e-?mail|host(?:name)?|port|db(?:[_-]?name)?|database|region|url|"
                       r"uri|endpoint")

#: what an option's value is when it stands for a secret instead of being one: variables, templates, masks, and
#: metavariables ("-p PASSWORD", "-p password"); "xxx" or "XXX" marks one, "xXx" inside a random one does not
PLACEHOLDER = lazy(r"[$%<{\[*`?].*|[A-Z]+(?:_[A-Z]+)*|.*(?:\.\.\.|…|xxx|XXX).*|(?i:(?:your|my|the)?[_-]?(?:pass(?:word|"
                   r"wd)?|pwd|pw|secret|token|key|value|name|string|str|user(?:name)?))")

#: column names of a credential table (a CSV export, a spreadsheet or Markdown table pasted as text), lower case, the
#: words joined by a space (found joined by "_", "-" or nothing too): the column's cells are secrets
CREDENTIAL_COLUMNS = frozenset((
    "password", "passwd", "pwd", "pass", "passphrase", "passcode", "secret", "secret key", "secret access key",
    "aws secret access key", "access key secret", "accesskey secret", "client secret", "app secret", "api key",
    "api secret", "api token", "token", "access token", "auth token", "private key", "密码", "口令", "密钥", "秘钥",
    "令牌", "私钥"))

#: one-line credential file formats, each matched as a whole line: (label, regex with a ``value`` group)
CREDENTIAL_LINES = (
    # ~/.pgpass: hostname:port:database:username:password (":" and "\\" escaped by "\\", a password may hold
    # spaces); also numbered as cat -n (a tab) or read_file ("|") show it, indented in a heredoc, with CRLF or a
    # trailing blank, or echoed into a pgpass file (an echo into anything else is not one; after a shell's prompt,
    # a Dockerfile's RUN, a continued "&&", a CI step's "- run:", "sudo sh -c", with -n, and with what follows on
    # the line: "&& chmod 600 ~/.pgpass", a comment, "2>/dev/null", a line continuation)
    ("password", r"^[ \t]*+(?:\d++[\t|])?+(?:(?:\([^()\n]{1,40}\)[ \t]*+)?+(?:[^\s$%#>]{0,60}+[$%#>][ \t]++"
                 r"|(?:RUN|&&|-[ \t]*+run:|sudo[ \t]++(?:sh|bash)[ \t]++-c)[ \t]*+['\"]?+)?+"
                 r"(echo(?:[ \t]++-[neE]{1,3})?+[ \t]++))?+"
                 r"['\"]?+[^\s:#'\"]++:(?:\d{1,5}|\*):(?:\\.|[^\s:\\])++:"
                 r"(?:\\.|[^\s:\\])++:(?P<value>(?:\\.|[^\s:\\'\">]|>(?!>?[ \t]*+\S*(?i:pgpass))|[ ](?=[^\s>]))++)"
                 r"['\"]?+(?(1)[ \t]*+[12]?>>?[ \t]*+[\"']?+\S*?(?i:pgpass(?:file)?)(?:\.conf)?+\}?+[\"']?+"
                 r"(?:[ \t]*+(?:&&?|;|\|\||#|\\|2>)[^\n]*+)?+)"
                 r"[ \t]*+\r?$"),
)

#: a key id's label -> (its secret's label, the secret's shape): where an id is pasted, its secret is next to it
PAIRED_SECRETS = {
    "aws-access-key": ("aws-secret-key", r"[A-Za-z0-9/+]{40}"),
    "alibaba-access-key": ("alibaba-access-key-secret", r"[A-Za-z0-9]{30}"),
    "tencent-secret-id": ("tencent-secret-key", r"[A-Za-z0-9]{32}"),
}

#: a ``user:password`` pair alone, what HTTP Basic or a registry's ``auth`` encodes ("robot$ci:...", "ACME\jdoe:...")
USER_PASSWORD = lazy(r"[\w.@+$\\-]{1,64}:(?P<value>\S{6,128})")
