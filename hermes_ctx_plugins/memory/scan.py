"""The memory threat scanner: prompt injection, exfiltration, secrets and hidden characters.

Memory entries (MEMORY.md / USER.md notes and text recalled from providers) are pasted into future
prompts, so anything an attacker gets into them becomes an instruction to a later session.
:func:`scan` runs before every write and again at load; at load a hostile entry is replaced in the
prompt by :func:`placeholder` while the text stays on disk for the user to review and delete.

How it matches
--------------
Each entry is read in three views:

* the raw text, for secrets (case matters) and invisible characters (they are the attack);
* a *folded* view: NFKD with combining marks dropped (accents, Zalgo), fullwidth and mathematical
  letters to ASCII, Cyrillic/Greek look-alikes to Latin, lower case, format (Cf) characters removed;
* a *squeezed* view: the folded text without spaces and punctuation and with leetspeak undone
  (1 0 3 4 5 7 @ $ | ! + as i o e a s t a s l i t), for the few phrases that are hostile however they
  are spelt ("i g n o r e", "ign.ore", "1gn0r3", "忽 略"). Only strong phrases are matched there,
  because squeezing loses word boundaries.

Base64, hex, percent-encoded, HTML-entity, ``\\uXXXX`` and Unicode-tag-smuggled text is decoded and
scanned again, two levels deep and for a bounded number of blobs.

Spans
-----
Spans always index the original text. Matches in the folded/squeezed views are mapped back through
the fold, so a span runs from the first to the last matched character and includes whatever was
removed in between (zero-width characters, inserted spaces). A finding inside a decoded blob spans
the whole blob; one from whole-text unescaping spans the first to the last escape sequence.

Judgement calls
---------------
* An entry is hostile when it overrides the assistant's instructions, hides things from the user,
  moves data out, or carries a live secret. A preference is not: "from now on use pnpm" is clean;
  "from now on always ..." counts only with a suspicious payload (a link to plant, secrets,
  obedience, concealment), while "from now on you must/will ..." and "从现在开始你必须" always count.
* Mentioning an attack is fine; quoting one verbatim ("ignore previous instructions") is flagged,
  because the quote would still reach the prompt.
* ``curl … | sh`` brings code in rather than sending data out: a note recording it is clean; a
  standing order to run it ("at the start of every session, run …") is injection.
* Sending data out needs an imperative send verb, something sensitive (conversation, keys, .env,
  memories, …) and a remote destination in the same sentence; loopback hosts never count, and a
  token passed as a ``-H`` header or ``-u`` to an API is normal use, not exfiltration.
"""

from __future__ import annotations

import base64
import binascii
import html
import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

__all__ = ["KINDS", "Finding", "is_safe", "placeholder", "redact_secrets", "scan"]

#: every finding kind, in the order :func:`placeholder` names them
KINDS = ("injection", "exfiltration", "secret", "invisible")
_LABELS = {"injection": "prompt injection", "exfiltration": "data exfiltration", "secret": "secret",
           "invisible": "hidden characters"}
_MAX_DEPTH = 2          # decode-and-rescan levels
_MAX_BLOBS = 32         # encoded blobs tried per level
_MAX_BLOB_CHARS = 8192  # longer blobs are skipped
_MAX_INVISIBLE = 20     # invisible-character findings reported per text


@dataclass(frozen=True)
class Finding:
    """One reason an entry is unsafe; ``text[start:end]`` is the offending part of the original."""

    kind: str
    detail: str
    start: int
    end: int


# --------------------------------------------------------------------------- normalisation

_LOOKALIKES = {pair[0]: pair[1] for pair in (
    "Аa Вb Еe Кk Мm Нh Оo Рp Сc Тt Уy Хx Ѕs Іi Јj аa вb еe кk мm нh оo рp сc тt уy хx ѕs іi јj ԁd "
    "һh ӏl ԛq ԝw Αa Βb Εe Ζz Ηh Ιi Κk Μm Νn Οo Ρp Τt Υy Χx αa βb γy εe ηn ιi κk νv οo ρp τt υu χx ωw "
    "ıi ȷj ɑa ɡg ɩi ᴀa ʙb ᴄc ᴅd ᴇe ɢg ʜh ɪi ᴊj ᴋk ʟl ᴍm ɴn ᴏo ᴘp ʀr ꜱs ᴛt ᴜu ᴠv ᴡw ʏy ᴢz").split()}
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")  # Hangul fillers: letters that render as nothing


def _fold_char(ch: str) -> str | None:
    if ch in _LOOKALIKES:
        return _LOOKALIKES[ch]
    if unicodedata.category(ch) in ("Cf", "Mn", "Me") or ch in _FILLERS:
        return None
    out = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c)).lower()
    return "".join(_LOOKALIKES.get(c, c) for c in out) or None


class _FoldTable(dict[int, str | None]):
    """A ``str.translate`` table filled on first sight of each character (bounded)."""

    def __missing__(self, code: int) -> str | None:
        folded = _fold_char(chr(code))
        if len(self) < 65_536:
            self[code] = folded
        return folded


_FOLD = _FoldTable()
_SQUEEZE_DROP = re.compile(r"(?:[^\w@$|!+]|_)+")
_SQUEEZE_KEEP = re.compile(r"[^\W_]|[@$|!+]")
_DELEET = str.maketrans("1!|03457@$+", "iiloeastast")


def _fold_origin(text: str) -> list[int]:
    """For each character of ``text.translate(_FOLD)``, the index it came from in ``text``."""
    origin: list[int] = []
    for i, ch in enumerate(text):
        origin.extend([i] * len(_FOLD[ord(ch)] or ""))
    return origin


# --------------------------------------------------------------------------- rules

_Check = Callable[[str, re.Match[str]], bool]


@dataclass(frozen=True)
class _Rule:
    kind: str
    detail: str
    pattern: re.Pattern[str]
    check: _Check | None = None


def _leet(pattern: str) -> str:
    """Squeezed-view patterns accept 1 for l as well as for i (both fold to i)."""
    return pattern.replace("l", "[li]")


_LOOPBACK = re.compile(r"localhost|[\w.-]+\.localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[?::1\]?|host\.docker\.internal")
_HOSTS = re.compile(
    r"[a-z][a-z0-9+.-]*://(?:[^\s/@]*@)?(\[[0-9a-f:.]+\]|[^\s/:?#'\"`)\]>]+)|(?<![\w.-])[\w.-]+@([a-z0-9][\w.-]*):"
    r"|/dev/(?:tcp|udp)/([^/\s]+)|\b((?:\d{1,3}\.){3}\d{1,3})\b|\b(localhost)\b"
    r"|\b(?:nc|ncat|netcat|telnet)\s+(?:-\S+\s+)*([a-z0-9][\w.-]*)\s+\d")


def _is_remote(segment: str) -> bool:
    """Whether a command/URL reaches a non-loopback host (no recognisable host counts as remote)."""
    hosts = [next(g for g in m.groups() if g) for m in _HOSTS.finditer(segment)]
    return not hosts or any(not _LOOPBACK.fullmatch(h) for h in hosts)


_SENSITIVE_PATH = (r"~/\.ssh|\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|(?<![\w.])\.env\b(?!\.(?:example|sample|template))"
                   r"|\.aws\b|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b|\.git-credentials|\.docker/config|\.kube/config"
                   r"|/etc/(?:passwd|shadow)\b|_history\b|\.hermes/|\bcredentials\b|\.gnupg|keychain|wallet\.dat")
_CMD_SECRET = re.compile(
    _SENSITIVE_PATH + r"|\$\{?\w*(?:key|token|secret|pass|cred|auth)\w*|\$env:\w*(?:key|token|secret|pass|cred)"
    r"|\$\(\s*(?:env|printenv|cat|history|whoami|hostname|id|set|ls|pwd|base64|tar|git|uname)\b"
    r"|`\s*(?:env|printenv|cat|history|whoami|hostname|id|uname)\b")
_AUTH_ARG = re.compile(r"(?:-h|--header|-u|--user|--oauth2-bearer)\s+(?:\"[^\"]*\"|'[^']*'|\S+)")
_STRONG_SOURCE = re.compile(r"\b(?:env|printenv|history|pbpaste|xclip|xsel|security|pg_dump|mysqldump|base64)\b|echo\s+[\"']?\$")
_SENS = re.compile(
    r"\b(?:conversations?|chat\s*(?:history|logs?|transcripts?)|transcripts?|(?:message|chat|conversation|command|shell"
    r"|browser|bash|search)\s+history|system\s+prompt|memories|(?:all|your|the\s+user'?s?)\s+(?:the\s+)?memory"
    r"|api[\s_-]?keys?|access\s+keys?|secret\s+keys?|tokens?|secrets?|credentials?|passwords?|passwd"
    r"|env(?:ironment)?\s+var(?:iable)?s?|ssh\s+keys?|private\s+keys?|id_rsa|id_ed25519|cookies?|session\s+ids?"
    r"|(?:user|personal|private|sensitive|customer)(?:'s)?\s+(?:data|info(?:rmation)?|details|files)|wallet|seed\s+phrase"
    r"|keychain)\b|(?<![\w.])\.(?:env|ssh|aws)\b|对话|聊天记录|会话|历史记录|上下文|密钥|秘钥|令牌|密码|凭据|凭证|环境变量|私钥"
    r"|配置文件|记忆|系统提示|个人信息|用户数据|身份证|通讯录")
_DEST = re.compile(
    r"https?://[^\s)\"'<>]+|\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b(?:\d{1,3}\.){3}\d{1,3}\b|\b(?:webhook|pastebin|hastebin|"
    r"transfer\.sh|ngrok|requestbin|discord|telegram|attacker|(?:external|remote|outside)\s+(?:server|host|endpoint|url|site)"
    r"|my\s+(?:server|endpoint|site|email|inbox|bot))\b|邮箱|外部|远程|第三方|我的(?:服务器|网站|邮箱)")
_SENTENCE_END = re.compile(r"[!?;\n。！？；]|\.(?:\s|$)")
_NEGATION = re.compile(r"(?:\b(?:never|not|no)|n't)\s+(?:\w+\s+)?$|(?:不要|别|禁止|不得|不能|切勿|勿|不可|严禁|不准|不会|从不|绝不).?$")
_REPLY = re.compile(r"\b(?:in|into|to|at\s+the\s+(?:end|start|bottom|top)\s+of|with|inside)\s+(?:every|each|all|your|the\s+next|"
                    r"any|future)\s+(?:\w+\s+)?(?:reply|replies|response|responses|answer|answers|message|messages|output|turn)")
_SECRETISH = re.compile(r"\b(?:passwords?|passwd|api[\s_-]?keys?|access\s+keys?|secret\s+keys?|tokens?|secrets?|credentials?"
                        r"|ssh\s+keys?|private\s+keys?|id_rsa|cookies?|env(?:ironment)?\s+variables?)\b|(?<![\w.])\.env\b")
_PLACEHOLDER_IN_URL = re.compile(r"[{}<>\[\]$]|%7b|%24|\.\.\.|…")
_FILL_HINT = re.compile(r"\b(?:replace|fill|substitute|append|insert|encode|interpolate)\b|\bwith\s+the\s+(?:user|conversation|"
                        r"chat|secret|password|key|token|summary|message)|替换|填入|填充|附上|加上|编码")
_SUSPICIOUS = re.compile(
    r"\b(?:ignore|disregard|obey|reveal|leak|disclose|exfiltrate|pretend|role-?play|impersonate|send|upload|forward|"
    r"transmit)\b|\b(?:include|append|insert|embed|add|mention|recommend|promote|link|prepend|attach)\b[^\n]{0,50}?"
    r"(?:https?://|www\.|\b[\w-]+\.(?:com|net|org|io|biz|xyz|ru|cn|top|info)\b|password|api\s*keys?|tokens?|secrets?|"
    r"credentials?)|\btell\s+the\s+user\s+that\b|\bwithout\s+(?:telling|informing|notifying|any\s+restrictions|"
    r"restrictions|filters|safety)\b|\b(?:run|execute)\b[^\n]{0,40}?(?:curl|wget|https?://|powershell|iex\b)|忽略|无视|服从|"
    r"听从|泄露|透露|假装|冒充|上传|发送|转发|不要告诉|瞒着|(?:附上|加上|包含|插入|推荐|添加)[^\n]{0,20}?(?:链接|网址|https?://|密码|密钥|令牌)")
_STRONG_QUALIFIER = ("previous|previously|prior|above|earlier|preceding|foregoing|all|every|your|system|developer|original|"
                     "initial|safety|之前|以前|先前|此前|前面|上面|以上|上述|上文|所有|全部|一切|你的|系统|开发者|原始|原来|原有|原先|安全")
_STRONG = re.compile(_leet(_STRONG_QUALIFIER))


def _sentence(view: str, start: int, end: int) -> tuple[str, str]:
    """The part of the sentence before ``start`` (≤ 80 chars) and after ``end`` (≤ 160 chars)."""
    head = view[max(0, start - 80):start]
    cuts = list(_SENTENCE_END.finditer(head))
    tail = view[end:end + 160]
    stop = _SENTENCE_END.search(tail)
    return (head[cuts[-1].end():] if cuts else head), (tail[:stop.start()] if stop else tail)


def _negated(view: str, start: int) -> bool:
    return bool(_NEGATION.search(view[max(0, start - 24):start]))


def _sends_sensitive(view: str, m: re.Match[str]) -> bool:
    if _negated(view, m.start()):
        return False
    head, tail = _sentence(view, m.start(), m.end())
    for dest in _DEST.finditer(tail):
        if _is_remote(dest.group(0)):
            return bool(_SENS.search(head) or _SENS.search(tail[:dest.start()]))
    return False


def _leaks_into_replies(view: str, m: re.Match[str]) -> bool:
    _, tail = _sentence(view, m.start(), m.end())
    return not _negated(view, m.start()) and bool(_SECRETISH.search(tail[:60]) and _REPLY.search(tail))


def _exfil_command(view: str, m: re.Match[str]) -> bool:
    command = _AUTH_ARG.sub(" ", m.group(0))
    return bool(_CMD_SECRET.search(command)) and _is_remote(command)


def _pipe_out(view: str, m: re.Match[str]) -> bool:
    segment = m.group(0)
    return bool(_STRONG_SOURCE.search(segment) or _CMD_SECRET.search(segment)) and _is_remote(segment)


def _beacon(view: str, m: re.Match[str]) -> bool:
    url = m.group(1) or m.group(2)
    head, tail = _sentence(view, m.start(), m.end())
    hinted = "?" in url and _FILL_HINT.search(f"{head} {tail}")
    return _is_remote(url) and bool(_PLACEHOLDER_IN_URL.search(url) or hinted)


def _remote_match(view: str, m: re.Match[str]) -> bool:
    return _is_remote(m.group(0))


def _standing_order(view: str, m: re.Match[str]) -> bool:
    _, tail = _sentence(view, m.start(), m.end())
    return bool(m.group(1) or m.group(2) or _SUSPICIOUS.search(tail))


def _strong_override(view: str, m: re.Match[str]) -> bool:
    return bool(_STRONG.search(m.group(0)))


def _rule(kind: str, detail: str, pattern: str, check: _Check | None = None) -> _Rule:
    return _Rule(kind, detail, re.compile(pattern, re.MULTILINE), check)


_NET = r"(?<![\w./-])(?:curl|wget|nc|ncat|netcat|socat|scp|rsync|sftp|ftp|telnet|invoke-webrequest|invoke-restmethod|iwr|irm)(?![\w:-])"
_FOLDED_RULES = (
    _rule("injection", "role hijack", r"\byou(?:\s+are|'re|’re)\s+now\s+(?:an?\s+(?!member\b|part\b|owner\b|admin\b|maintainer\b|"
          r"collaborator\b|contributor\b)|the\s+|my\s+|called\b|named\b|known\s+as\b|dan\b|jailbroken\b|unrestricted\b|"
          r"unfiltered\b|uncensored\b|evil\b|free\s+(?:from|of)\b|no\s+longer\b|in\s+[\w-]+\s+mode\b|acting\s+as\b|"
          r"operating\s+(?:as|without)\b)|\byou(?:\s+are|'re)\s+no\s+longer\s+(?:an?\s+)?(?:ai|assistant|bound|restricted|"
          r"limited|chatgpt|claude|hermes|language\s+model|constrained|subject\s+to)\b|\b(?:your|the\s+assistant'?s?)\s+new\s+"
          r"(?:role|identity|name|persona|personality|task|goal|objective|purpose|mission|instructions?|directives?|rules|"
          r"master|owner|creator)\s*(?:is|are|:|will\s+be)"),
    _rule("injection", "injected instructions", r"(?:^|[^\w])(?:new|updated|revised|real|actual|true|secret|hidden|override|"
          r"overriding|priority)\s+(?:system\s+)?(?:instructions?|directives?|orders|system\s+prompt)\s*:|(?:新的?|最新的?|更新后?的|"
          r"真正的|隐藏的?)(?:系统)?(?:指令|指示)\s*:"),
    _rule("injection", "fake role marker", r"^[ \t>*#-]*[\[<(【]?\s*(?:system|developer|系统|系统消息|系统指令|系统提示|系统通知)"
          r"(?:\s+(?:message|prompt|note|override|instruction|notice))?\s*[\]>)】]?\s*:\s*(?:you\s+(?:are|must|will|should|"
          r"have)\b|you're\b|your\s+(?:new|real|true|only)\b|ignore\b|disregard\b|forget\b|from\s+now\b|new\s+instructions?\b|"
          r"the\s+(?:assistant|ai|model)\b|assistant\b|override\b|[\w-]+\s+mode\b|你|忽略|无视|从现在|新的|立即|不要)|【系统[^】\n]{0,4}】"),
    _rule("injection", "chat-template marker", r"<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id"
          r"|end_header_id|begin_of_text|tool_call|python_tag|channel|message)\s*\|>|\[/?inst\]|<</?sys>>|</?(?:system|"
          r"system_prompt|sys|instructions?|developer|user_instructions?)\s*>"),
    _rule("injection", "fake tool call", r"<\s*/?\s*(?:tool_call|tool_use|tool_result|function_calls?|function_results?|invoke\s+"
          r"name\s*=)|<function=\w|\"tool_calls\"\s*:\s*\[|\{\s*\"(?:name|function|tool)\"\s*:\s*\"[^\"\n]{1,64}\"\s*,\s*"
          r"\"(?:arguments|parameters|args|input)\"\s*:|\[tool_calls?\]"),
    _rule("injection", "standing order", r"(?:\bfrom\s+now\s+on\b|\bfrom\s+this\s+point\s+(?:on|forward)\b|\bhenceforth\b|"
          r"\bgoing\s+forward\b)[\s,]*(?:(you\s+(?:must|will|shall|are\s+to|have\s+to))\b|(?:you\s+(?:should\s+)?)?(?:always|"
          r"never|only)\b)|从现在(?:开始|起)[,\s]*(?:(你(?:必须|将|只能|要|就是|只))|你?(?:总是|永远|一律|每次|都要|始终))",
          _standing_order),
    _rule("injection", "override claim", r"\byou\s+(?:must|will|shall)\s+(?:always\s+)?(?:obey|comply\s+with)\s+(?:me|these|this|"
          r"the\s+following|only)\b|\bobey\s+(?:only\s+)?(?:me|these|the\s+following|this\s+(?:note|memory|entry|message|file))"
          r"\b|\b(?:overrides?|supersedes?|takes?\s+precedence\s+over)\s+(?:all|any|every|your)\s+(?:(?:other|previous|prior|"
          r"system|existing|earlier)\s+)*(?:instructions|rules|directives|prompts|guidelines|system\s+prompts?)\b|\bhighest[-\s]"
          r"priority\s+(?:system\s+)?(?:instructions?|rules|directives?)\b"),
    _rule("injection", "system prompt leak", r"\b(?:reveal|print|output|repeat|show|dump|leak|disclose|display|recite|write\s+"
          r"out|tell\s+me|share|copy|paste)\s+(?:me\s+)?(?:out\s+)?(?:all\s+(?:of\s+)?)?(?:your|the\s+(?:text|words|prompt)\s+"
          r"above)\s+(?:(?:full|entire|complete|original|hidden|initial|secret|exact)\s+)*(?:system\s+prompt|system\s+message|"
          r"instructions|initial\s+prompt|prompt|guidelines|rules)\b"),
    _rule("injection", "jailbreak", r"\b(?:act|behave|respond|answer|reply|operate|pretend)\s+(?:\w+\s+){0,2}?(?:as\s+if|as\s+"
          r"though|like)\s+you\s+(?:have|had|were\s+under)\s+no\s+(?:restrictions|limits|limitations|rules|filters|guidelines|"
          r"ethics|morals|policies)|\b(?:respond|answer|reply|act|behave|operate|speak|write|talk)\s+(?:\w+\s+){0,2}?without\s+"
          r"(?:any\s+)?(?:(?:ethical|moral|safety|content)\s+)?(?:restrictions|limitations|filters|censorship|guardrails|"
          r"guidelines)\b|\byou\s+(?:now\s+)?have\s+no\s+(?:restrictions|rules|limits|limitations|guidelines|filters|ethical|"
          r"moral)\b|\bpretend\s+(?:to\s+be|you\s+are|you're)\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|evil|jailbroken"
          r"|dan\b|human|not\s+an?\s+ai)|\b(?:ai|llm|language\s+model|assistant|agent|chatbot|model)s?\s+(?:that\s+(?:is|are)\s+)?"
          r"(?:reading|processing|parsing|seeing|reviewing)\s+this\b|\bnever\s+refuse\b"),
    _rule("injection", "concealment from the user", r"\b(?:do\s+not|don'?t|never|must\s+not)\s+(?:(?:tell|inform|notify|alert|"
          r"warn)\s+the\s+user\b(?!\s*['\"“‘(])(?!\s+(?:their|his|her|your)\b)|let\s+the\s+user\s+(?:know|notice|find\s+out))"
          r"|\b(?:without|not)\s+(?:telling|informing|notifying|alerting)\s+the\s+user\b|\b(?:hide|conceal|keep)\s+(?:this|it|"
          r"these|that|them)\s+(?:secret\s+)?from\s+the\s+user\b|\bthe\s+user\s+(?:must|should|can)\s*(?:not|never|n't)\s+"
          r"(?:know|find\s+out|notice|learn|be\s+told)\b|\bsecretly\s+(?:send|run|execute|upload|add|append|insert|install|"
          r"forward|collect)\b|悄悄地?(?:把|将)?[^\n。]{0,20}?(?:发送|上传|执行|运行|删除|转发)"),
    _rule("injection", "remote code standing order", r"\b(?:always|automatically|every\s+time|each\s+time|whenever|at\s+the\s+"
          r"start\s+of\s+(?:every|each)|before\s+(?:every|each|any|answering|responding)|first\s+thing|on\s+(?:every\s+)?"
          r"start-?up|silently|secretly|quietly)\b[^\n]{0,100}?\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\b"
          r"[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:sh|bash|zsh|python3?|perl|ruby|node|iex|invoke-expression)\b|\b(?:iex|"
          r"invoke-expression)\s*\(?\s*(?:\(?\s*new-object\s+net\.webclient|iwr|irm|invoke-webrequest)"),
    _rule("injection", "ssh backdoor", r"(?:>>|\btee\s+-a)\s*\S*authorized_keys"),
    _rule("exfiltration", "network command carrying secrets", _NET + r"[^\n]{0,300}", _exfil_command),
    _rule("exfiltration", "pipe into a network command", r"(?<![\w-])(?:cat|type|get-content|gc|env|printenv|history|base64|tar|"
          r"zip|gzip|xxd|od|find|ls|git|pbpaste|xclip|xsel|sqlite3|pg_dump|mysqldump|security|echo\s+[\"']?\$)(?![\w-])"
          r"[^|\n]{0,200}\|(?:[^|\n]{0,80}\|)?\s*(?:curl|wget|nc|ncat|netcat|socat|telnet|iwr|irm|invoke-webrequest|"
          r"invoke-restmethod)(?![\w-])[^\n]{0,200}", _pipe_out),
    _rule("exfiltration", "send data out", r"(?<![\w-])(?:send|post|upload|forward|e-?mail|mail|transmit|exfiltrate|leak|copy|sync"
          r"|submit|share|paste|push|dump|pipe|beam|relay|smuggle)(?![\w-])|发送|发到|发给|发往|上传|传到|传给|转发|提交|推送|同步|回传"
          r"|外发|贴到|粘贴到|泄露给|泄露到|抄送", _sends_sensitive),
    _rule("exfiltration", "secrets into replies", r"(?<![\w-])(?:reveal|leak|disclose|expose|dump|print|output|include|append|"
          r"insert|embed|paste|repeat|echo|add|show|put|attach|hide)(?![\w-])", _leaks_into_replies),
    _rule("exfiltration", "secrets into replies", r"(?:每次|每条|所有|你的)(?:回复|回答|消息|输出)[^。\n]{0,12}(?:附上|加上|包含|插入|带上|"
          r"输出|透露|泄露|显示)[^。\n]{0,20}(?:密钥|秘钥|密码|令牌|token|api\s*key|环境变量|私钥|凭据)|(?:附上|加上|包含|插入|带上|透露|泄露)"
          r"[^。\n]{0,20}(?:密钥|秘钥|密码|令牌|token|api\s*key|环境变量|私钥|凭据)[^。\n]{0,12}(?:回复|回答|消息)"),
    _rule("exfiltration", "image beacon", r"!\[[^\]\n]{0,200}\]\(\s*<?\s*(https?://[^\s)>]{1,800})|<img\b[^>\n]{0,200}?\bsrc\s*=\s*"
          r"[\"']?\s*(https?://[^\s\"'>]{1,800})", _beacon),
    _rule("exfiltration", "URL template carrying data", r"https?://[^\s)\"'<>]{0,300}?(?:[?&=/:]|%3d)\s*(?:\{\{?|<|\$\{?|%7b|\[)"
          r"\s*(?:the\s+|user'?s?\s+|all\s+)?(?:conversation|chat|history|messages?|secrets?|password|passwd|api[_-]?keys?|"
          r"apikey|tokens?|credentials?|env|memory|memories|prompt|system[_-]?prompt|user[_-]?data|summary|context|ssh|private|"
          r"cookies?|session|email|user[_-]?info|data|用户|对话|聊天|密码|密钥|令牌|记忆)", _remote_match),
    _rule("exfiltration", "data-capture endpoint", r"discord(?:app)?\.com/api/webhooks/|hooks\.slack\.com/(?:services|workflows|"
          r"triggers)/|webhook\.site\b|requestbin\.|pipedream\.net\b|\binteract\.sh\b|\.oast\.(?:fun|pro|live|site|online|me)\b"
          r"|oastify\.com\b|burpcollaborator\.net\b|canarytokens\.(?:com|org)\b|beeceptor\.com\b|requestcatcher\.com\b|"
          r"hookbin\.com\b|ptsv[23]\.com\b|postb\.in\b|dnslog\.cn\b|ceye\.io\b|webhook\.cool\b"),
    _rule("exfiltration", "DNS exfiltration", r"\b(?:nslookup|dig|host|ping|drill|resolve-dnsname)\s+(?:-\S+\s+)*\S*(?:\$\(|`|"
          r"\$\{?\w)\S*\.[a-z]|\b(?:encode|embed|put|split|smuggle|leak|exfiltrate|send)\b[^\n]{0,60}?\b(?:as|into|in|via|"
          r"through)\s+(?:dns\s+)?(?:subdomains?|dns\s+(?:queries|lookups|requests|labels|records))"),
    _rule("exfiltration", "reverse shell", r"/dev/(?:tcp|udp)/[^/\s]+/\d+", _remote_match),
    _rule("exfiltration", "reverse shell", r"\b(?:nc|ncat|netcat)\b[^\n]{0,60}\s-[ec]\s+\S*(?:sh|cmd|powershell)\b|\bsocat\b"
          r"[^\n]{0,80}\bexec:"),
)

_SQUEEZED_RULES = (
    _rule("injection", "instruction override", _leet(
        r"(?:ignore|disregard|forget|override|overrule|bypass|discard|abandon|neglect|stopfollowing|donotfollow|dontfollow|"
        r"nolongerfollow|忽略|无视|忽视|忘记|忘掉|不要理会|不用理会|别管|不要遵守|不再遵守|不必遵守|停止遵守|抛开|抛弃)(?:"
        + _STRONG_QUALIFIER + r"|any|the|my|of|these|those|and|past|old|existing|current|default|given|other|former|you|were|"
        r"have|been|told|received|的|和|与|及|你|任何|收到的|得到的|被告知的|接收到的|给你的){1,6}?(?:instructions?|prompts?|directions|"
        r"directives?|rules|guidelines|guardrails|commands|orders|constraints|restrictions|programming|policies|指令|指示|"
        r"提示词|提示|规则|设定|命令|约束|限制|准则|规定)"), _strong_override),
    _rule("injection", "instruction override", _leet(
        r"(?:ignore|disregard|forget)(?:everything|anything|allthat)(?:above|before|prior|previously|youweretold|youvebeentold|"
        r"youhavebeentold|thatcamebefore)|(?:忽略|无视|忘记|忘掉)(?:以上|上面|之前|此前|前面)的?(?:一切|所有|全部)|忘记你(?:是谁|的身份)")),
    _rule("injection", "jailbreak", _leet(
        r"doanythingnow|you(?:are|re)(?:now)?(?:in)?(?:dan|developer|jailbreak|god|unrestricted|unfiltered|evil|sudo|admin)mode|"
        r"(?:dan|jailbreak|unrestricted|unfiltered)mode|you(?:are|re|havebeen)(?:now)?jailbroken|(?:chatgpt|gpt|claude|"
        r"assistant|ai)withdevelopermode|你(?:现在)?(?:已经?)?(?:进入|处于|切换到|开启|启用)了?(?:开发者|越狱|上帝|无限制|dan)模式|越狱模式"
        r"|你已经?被越狱")),
    _rule("injection", "role hijack", r"你现在是|现在你是|你现在扮演|你现在的身份是|你不再是|你的新(?:身份|角色|名字|任务|指令|目标|使命)|从今以后你(?:必须|将"
          r"|只能|要|就是|是)|假装你没有(?:任何)?(?:限制|规则|约束|过滤)|你(?:没有|不受)任何(?:限制|约束|规则|道德|审查)|扮演(?:一个)?(?:没有|不受)"
          r"(?:任何)?(?:限制|约束)|(?:无视|忽略|抛开)(?:所有|一切|任何)?的?(?:道德|安全|伦理)(?:限制|规则|约束|准则)|(?:读到|看到|处理)这(?:段|条|篇)"
          r"(?:文字|内容|信息|消息|笔记)的(?:ai|助手|模型|人工智能)"),
    _rule("injection", "concealment from the user", r"不要告诉用户|别告诉用户|不要让用户知道|别让用户知道|不能让用户(?:知道|发现)|不要向用户"
          r"(?:透露|提及|提起|说明|披露)|对用户保密|瞒着用户|不要(?:通知|提醒)用户"),
    _rule("injection", "override claim", r"(?:优先级最高|最高优先级)的?(?:指令|命令|规则)|(?:覆盖|取代|优先于)(?:所有|一切|之前|以上|系统)的?"
          r"(?:其他)?(?:指令|规则|提示|设定)|(?:服从|听从)(?:我|以下|下面|这条|本条)|你必须(?:服从|听从)"),
    _rule("injection", "system prompt leak", r"(?:输出|打印|泄露|透露|显示|重复|告诉我|复述|展示|说出)(?:一下)?你的(?:完整的?|全部的?|原始的?|"
          r"初始的?)?(?:系统提示词?|系统指令|初始(?:指令|提示词?)|原始指令|systemprompt)"),
)


def _apply(rules: Sequence[_Rule], view: str) -> list[tuple[_Rule, int, int]]:
    hits = []
    for rule in rules:
        for m in rule.pattern.finditer(view):
            if rule.check is None or rule.check(view, m):
                hits.append((rule, m.start(), m.end()))
                break
    return hits


# --------------------------------------------------------------------------- secrets

_NOT_A_VALUE = re.compile(
    r"(?i)[$%{<\[*/~#(].*|.*(?:\.\.\.|…|xxx|\*\*\*).*|(?:your|my|some|an?|the|example|sample|dummy|fake)[-_ ].*|(?:change_?me"
    r"|pass(?:word|wd)?\d*|pwd|secret|token|placeholder|redacted|none|null|nil|true|false|undefined|required|optional|hidden"
    r"|masked|empty|unset|todo|tbd|n/?a)|[a-z_]\w*(?:\.[a-z_]\w*)+(?:\(.*)?")
_NOT_A_SECRET_KEY = re.compile(r"(?i).*[_.-](?:url|uri|endpoint|file|path|dir|name|type|len|length|limit|count|size|expiry|"
                               r"expires|ttl|header|field|env|var|id|policy|rotation|hint)")


def _entropy(value: str) -> float:
    return -sum(n / len(value) * math.log2(n / len(value)) for n in map(value.count, set(value)))


def _real_value(value: str, *, password: bool, key: str = "") -> bool:
    v = value.strip("'\"")
    if len(v) < 6 or "://" in v or _NOT_A_VALUE.fullmatch(v) or _NOT_A_SECRET_KEY.fullmatch(key):
        return False
    if password:  # a bare word ("required", "none") is prose, not a password
        return not v.isalpha()
    return len(v) >= 12 and any(c.isdigit() for c in v) and any(c.isalpha() for c in v) and _entropy(v) >= 3.0


_Validator = Callable[[re.Match[str]], bool]
def _password_key(key: str) -> bool:
    return any(word in key.lower() for word in ("pass", "pwd", "密码", "口令"))


def _assignment(m: re.Match[str]) -> bool:
    return _real_value(m.group("value"), password=_password_key(m.group("key")), key=m.group("key"))


def _shaped(m: re.Match[str]) -> bool:
    """Prefix-only token formats must look random, so ``sk-learn-compatible-api`` is not a key."""
    body = m.group(0)
    return any(c.isdigit() for c in body) and any(c.isalpha() for c in body) and _entropy(body) >= 3.0


def _token_value(m: re.Match[str]) -> bool:
    return _real_value(m.group("value"), password=False)


def _url_password(m: re.Match[str]) -> bool:
    value = m.group("value")
    return value != m.group("user") and len(value) >= 3 and not _NOT_A_VALUE.fullmatch(value)


_SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str], _Validator | None], ...] = tuple(
    (label, re.compile(pattern), check) for label, pattern, check in (
        ("private-key", r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY"
                        r"(?: BLOCK)?-----|\Z)", None),
        ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", _shaped),
        ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", _shaped),
        ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})", _shaped),
        ("gitlab-token", r"\bglpat-[A-Za-z0-9_-]{20,}", _shaped),
        ("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}", _shaped),
        ("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}", None),
        ("discord-webhook", r"https://(?:[\w-]+\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}", None),
        ("aws-access-key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b", None),
        ("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}", None),
        ("google-oauth-token", r"\bya29\.[0-9A-Za-z_-]{20,}", _shaped),
        ("stripe-key", r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}", _shaped),
        ("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}", _shaped),
        ("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", None),
        ("pypi-token", r"\bpypi-AgE[A-Za-z0-9_-]{30,}", None),
        ("sendgrid-key", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", None),
        ("telegram-bot-token", r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b", None),
        ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", None),
        ("bearer-token", r"(?i)\bbearer\s+(?!\[redacted)(?P<value>[a-z0-9._~+/-]{16,}=*)", _token_value),
        ("basic-auth", r"(?i)\bauthorization\s*[:=]\s*[\"']?(?:basic|token|digest)\s+(?!\[redacted)(?P<value>[a-z0-9._~+/=-]{8,})",
         lambda m: not _NOT_A_VALUE.fullmatch(m.group("value"))),
        ("url-password", r"(?i)\b[a-z][a-z0-9+.-]{1,20}://(?P<user>[^\s:/@'\"<>]{1,128}):(?!\[redacted)(?P<value>[^\s@/'\"<>]"
                         r"{1,256})@(?=[\w.\[-])", _url_password),
        ("password", r"(?i)(?<![a-z0-9])(?P<key>(?:[a-z0-9]+[_.-])?(?:password|passwd|passphrase|pwd|pass|secret|token|api[_-]?key"
                     r"|apikey|access[_-]?key|auth[_-]?key|client[_-]?secret|private[_-]?key|credentials?)(?:[_.-][a-z0-9]+)*)[\"']?"
                     r"\s*(?::=|=>|[:=])\s*[\"']?(?!\[redacted)(?P<value>[^\s\"'`,;)\]}<>]{6,200})", _assignment),
        ("password", r"(?i)\b(?P<key>password|passwd|passphrase|passcode)\s+(?:is|was)\s*:?\s*[\"']?(?P<value>[^\s\"'`,;)\]}<>]"
                     r"{6,200})", _assignment),
        ("password", r"(?P<key>密码|口令|密钥|秘钥|令牌|私钥)\s*(?:[:：=]|是|为)\s*[\"'“]?(?P<value>[A-Za-z0-9!@#$%^&*_+=./~-]{6,200})",
         _assignment),
    ))


def _secret_spans(text: str) -> list[tuple[int, int, str]]:
    """Non-overlapping (start, end, label) spans of secrets; earlier (more specific) patterns win."""
    spans: list[tuple[int, int, str]] = []
    for label, pattern, check in _SECRET_PATTERNS:
        for m in pattern.finditer(text):
            if check is not None and not check(m):
                continue
            start, end = m.span("value" if "value" in pattern.groupindex else 0)
            kind = "secret" if "key" in pattern.groupindex and not _password_key(m.group("key")) else label
            if all(end <= s or start >= e for s, e, _ in spans):
                spans.append((start, end, kind))
    return sorted(spans)


# --------------------------------------------------------------------------- invisible characters

_CF = ("\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f"
       "\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
       "\U000e0001\U000e0020-\U000e007f")
_INVISIBLE = re.compile(f"[{_CF}\u115f\u1160\u3164\uffa0]+|[\ufe00-\ufe0f\U000e0100-\U000e01ef]{{3,}}")
_TAG_TEXT = re.compile("[\U000e0020-\U000e007e]+")


def _joins(ch: str, *, emoji: bool) -> bool:
    o = ord(ch) if ch else 0
    if emoji:
        return o >= 0x1F000 or 0x2600 <= o <= 0x27BF or ch == "\ufe0f"
    return 0x0600 <= o <= 0x0DFF or 0xFB50 <= o <= 0xFDFF or 0xFE70 <= o <= 0xFEFC


def _legitimate(text: str, start: int, end: int) -> bool:
    """Joiners inside emoji or Arabic/Indic words, and the tags of a subdivision flag, are spelling."""
    run, before, after = text[start:end], text[start - 1:start], text[end:end + 1]
    if run == "\u200d" and _joins(before, emoji=True) and _joins(after, emoji=True):
        return True
    if run in ("\u200c", "\u200d") and _joins(before, emoji=False) and _joins(after, emoji=False):
        return True
    return before == "\U0001f3f4" and run[-1] == "\U000e007f" and len(run) <= 8


def _invisible(text: str) -> list[Finding]:
    findings = []
    for m in _INVISIBLE.finditer(text):
        if not _legitimate(text, m.start(), m.end()):
            names = sorted({f"U+{ord(c):04X}" for c in m.group(0)})
            findings.append(Finding("invisible", f"invisible characters: {', '.join(names[:3])}"
                                    f"{' …' if len(names) > 3 else ''} ×{len(m.group(0))}", m.start(), m.end()))
            if len(findings) == _MAX_INVISIBLE:
                break
    return findings


# --------------------------------------------------------------------------- decoding

_BASE64 = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{20,}={0,2}")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Fa-f])|(?:\\x[0-9A-Fa-f]{2}){4,}")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}|&#x?[0-9A-Fa-f]+;?|&[a-z]+;|\\u[0-9A-Fa-f]{4}")
_UNICODE_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})")


def _as_text(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    readable = sum(c.isprintable() or c.isspace() for c in text)
    return text if len(text) >= 6 and readable >= 0.9 * len(text) and any(c.isalpha() for c in text) else None


def _decode_blob(blob: str, how: str) -> str | None:
    try:
        if how == "hex":
            return _as_text(bytes.fromhex(blob.replace("\\x", "")))
        padded = blob.replace("-", "+").replace("_", "/").rstrip("=")
        return _as_text(base64.b64decode(padded + "=" * (-len(padded) % 4), validate=True))
    except (ValueError, binascii.Error):
        return None


def _decoded(text: str, depth: int) -> list[Finding]:
    """Findings inside encoded blobs, placed on the blob (or encoded region) in ``text``."""
    regions: list[tuple[int, int, str, str]] = []
    for how, pattern in (("base64", _BASE64), ("hex", _HEX)):
        for m in pattern.finditer(text):
            if len(regions) >= _MAX_BLOBS:
                break
            if len(m.group(0)) <= _MAX_BLOB_CHARS and (decoded := _decode_blob(m.group(0), how)):
                regions.append((m.start(), m.end(), how, decoded))
    escapes = list(_ESCAPE.finditer(text))
    if len(escapes) >= 3:
        unescaped = unquote(html.unescape(_UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)))
        if unescaped != text:
            regions.append((escapes[0].start(), escapes[-1].end(), "encoded", unescaped))
    for m in _TAG_TEXT.finditer(text):
        regions.append((m.start(), m.end(), "tag characters", "".join(chr(ord(c) - 0xE0000) for c in m.group(0))))
    return [Finding(f.kind, f"{how} → {f.detail}", start, end)
            for start, end, how, decoded in regions for f in _scan(decoded, depth + 1)]


# --------------------------------------------------------------------------- public API

def _excerpt(text: str) -> str:
    cleaned = " ".join(_INVISIBLE.sub("", redact_secrets(text)).split())
    return cleaned if len(cleaned) <= 60 else cleaned[:57] + "…"


def _scan(text: str, depth: int) -> list[Finding]:
    findings = _invisible(text)
    findings += [Finding("secret", f"{label} ({end - start} chars)", start, end) for start, end, label in _secret_spans(text)]
    folded = text.translate(_FOLD)
    squeezed = _SQUEEZE_DROP.sub("", folded).translate(_DELEET)
    folded_hits, squeezed_hits = _apply(_FOLDED_RULES, folded), _apply(_SQUEEZED_RULES, squeezed)
    if folded_hits or squeezed_hits:
        origin = _fold_origin(text)
        squeezed_origin = [origin[m.start()] for m in _SQUEEZE_KEEP.finditer(folded)]
        for hits, index in ((folded_hits, origin), (squeezed_hits, squeezed_origin)):
            for rule, start, end in hits:
                first, last = index[start], index[end - 1] + 1
                findings.append(Finding(rule.kind, f"{rule.detail}: '{_excerpt(text[first:last])}'", first, last))
    if depth < _MAX_DEPTH:
        findings += _decoded(text, depth)
    return findings


def scan(text: str) -> list[Finding]:
    """Return why ``text`` is unsafe to put in a prompt (``[]`` when it is clean); never raises.

    At most one finding per kind and overlapping region, ordered by position.
    """
    kept: list[Finding] = []
    for f in sorted(_scan(text, 0), key=lambda f: (f.start, -f.end)):
        if not any(k.kind == f.kind and f.start < k.end and k.start < f.end for k in kept):
            kept.append(f)
    return kept


def is_safe(text: str) -> bool:
    """Whether :func:`scan` finds nothing in ``text``."""
    return not scan(text)


def placeholder(findings: Sequence[Finding]) -> str:
    """What replaces a hostile entry in a prompt; the entry itself stays on disk for review."""
    kinds = {f.kind for f in findings}
    named = [_LABELS[k] for k in KINDS if k in kinds] + sorted(kinds - set(KINDS))
    what = f": looks like {', '.join(named)}" if named else ""
    return f"[memory entry withheld{what}; review it with `hermes-ctx memory show`]"


def redact_secrets(text: str) -> str:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``; applying it twice changes nothing."""
    for start, end, label in reversed(_secret_spans(text)):
        text = f"{text[:start]}[REDACTED:{label}]{text[end:]}"
    return text
