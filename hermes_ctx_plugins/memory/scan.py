"""The memory threat scanner: prompt injection, exfiltration, secrets and hidden characters (SPEC 2.5).

Memory entries are pasted into future prompts, so what an attacker gets into them instructs a later session.
:func:`scan` runs before every write and again at load, where :func:`placeholder` stands in for a hostile entry.

Views: the raw text (secrets; invisible characters, which are the attack), a *folded* one (NFKD without combining
marks, fullwidth/mathematical letters to ASCII, Cyrillic/Greek look-alikes to Latin, lower case, format characters
removed, symbols to spaces) and a *squeezed* one (folded without spaces or punctuation, leetspeak read as letters)
for phrases hostile however spelt: "i g n o r e", "ign.ore", "1gn0r3", "忽 略". Base64, hex, percent/HTML/``\\u``
escapes and Unicode-tag text are decoded and scanned again (two levels, bounded). A rule's regex runs only when one
of its anchors (a word or substring, found in C) occurs, and only near it, so a 2,200-character entry scans in
under a millisecond (``benchmarks/bench_scan.py``).
Spans index the original text; a folded match also covers what the fold removed inside it (zero-width characters,
inserted spaces); a finding in decoded text spans the encoded blob.

Judgement calls. Hostile = overriding the assistant's instructions, hiding things from the user, moving data out, or
a live secret; a preference is not ("from now on use pnpm"; "from now on always ..." counts only with a suspicious
payload, "from now on you must ..." and "从现在开始你必须" always). Quoting an attack is flagged (the quote would
reach the prompt); mentioning one is not. ``curl … | sh`` brings code in: recorded, it is clean; as a standing
order, it is injection. Sending data out needs an imperative verb, something sensitive and a remote (non-loopback)
destination in one sentence; a token handed to its API with ``-H``/``-u`` is use, not exfiltration.
"""

from __future__ import annotations

import base64
import binascii
import html
import math
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

__all__ = ["KINDS", "Finding", "is_safe", "placeholder", "redact_secrets", "scan"]

#: every finding kind, in the order :func:`placeholder` names them
KINDS = ("injection", "exfiltration", "secret", "invisible")
_LABELS = {"injection": "prompt injection", "exfiltration": "data exfiltration", "secret": "secret",
           "invisible": "hidden characters"}
_MAX_DEPTH, _MAX_BLOBS, _MAX_BLOB_CHARS, _MAX_INVISIBLE = 2, 32, 8192, 20


@dataclass(frozen=True)
class Finding:
    """One reason an entry is unsafe; ``text[start:end]`` is the offending part of the original."""

    kind: str
    detail: str
    start: int
    end: int


# ----------------------------------------------------------------------------------------------------------- views

_LOOKALIKES = {pair[0]: pair[1] for pair in (  # look-alikes are the point, hence the noqa
    "Аa Вb Еe Кk Мm Нh Оo Рp Сc Тt Уy Хx Ѕs Іi Јj аa вb еe кk мm нh оo рp сc тt уy хx ѕs іi јj ԁd һh ӏl ԛq ԝw Αa Βb "  # noqa: RUF001
    "Εe Ζz Ηh Ιi Κk Μm Νn Οo Ρp Τt Υy Χx αa βb γy εe ηn ιi κk νv οo ρp τt υu χx ωw ıi ȷj ɑa ɡg ɩi ᴀa ʙb ᴄc ᴅd ᴇe ɢg ʜh "  # noqa: RUF001
    "ɪi ᴊj ᴋk ʟl ᴍm ɴn ᴏo ᴘp ʀr ꜱs ᴛt ᴜu ᴠv ᴡw ʏy ᴢz").split()}  # noqa: RUF001
_LOOKALIKES.update(zip("。、【】〔〕‘’“”「」『』《》", (". ", ",", *"[][]''", *'""""""""'), strict=True))  # noqa: RUF001
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")  # Hangul fillers: letters that render as nothing


def _fold_char(ch: str) -> str | None:
    """A character of the folded view: ASCII, or non-ASCII letters and digits (other symbols become spaces)."""
    if ch in _LOOKALIKES:
        return _LOOKALIKES[ch]
    if unicodedata.category(ch) in ("Cf", "Mn", "Me") or ch in _FILLERS:
        return None
    out = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c)).lower()
    return "".join(_LOOKALIKES.get(c, c if c.isascii() or c.isalnum() else " ") for c in out) or None


class _FoldTable(dict[int, str | None]):
    """A ``str.translate`` table filled on first sight of each character (bounded)."""

    def __missing__(self, code: int) -> str | None:
        folded = _fold_char(chr(code))
        if len(self) < 65_536:
            self[code] = folded
        return folded


_FOLD = _FoldTable()
_LEET = dict(zip("1!|03457@$+", "iiloeastast", strict=True))
# bytes.translate over UTF-8 runs in C; the folded view's non-ASCII characters are letters/digits, so they stay
_SQUEEZE_BYTES = bytes(ord(_LEET.get(chr(b), chr(b))) if b < 128 else b for b in range(256))
_SQUEEZE_DROP = bytes(b for b in range(128) if not (chr(b).isalnum() or chr(b) in _LEET))
_WORD_BYTES = bytes(b if chr(b).isalnum() and b < 128 else 32 for b in range(256))


class _Views:
    """The text as the rules see it; maps back to original indices are built only on a hit."""

    def __init__(self, text: str) -> None:
        self.text, self.ascii, lowered = text, text.isascii(), text.lower()
        # a few characters lower-case to two: keep indices aligned
        self.lowered = lowered if len(lowered) == len(text) else "".join(
            c if len(c.lower()) > 1 else c.lower() for c in text)
        self.folded = self.lowered if self.ascii else text.translate(_FOLD)  # the same thing for ASCII
        utf8 = self.folded.encode()
        self.squeezed = utf8.translate(_SQUEEZE_BYTES, _SQUEEZE_DROP).decode()
        self.words = frozenset(utf8.translate(_WORD_BYTES).decode("ascii").split())

    def origin(self, squeezed: bool) -> list[int]:
        folded = list(range(len(self.text))) if self.ascii else [
            i for i, ch in enumerate(self.text) for _ in range(len(_FOLD[ord(ch)] or ""))]
        kept = (i for i, ch in enumerate(self.folded) if ch.isalnum() or ch in _LEET or not ch.isascii())
        return [folded[i] for i in kept] if squeezed else folded


# ---------------------------------------------------------------------------------------------------------- engine

_Check = Callable[[str, re.Match[str]], bool]


@dataclass(frozen=True)
class _Rule:
    kind: str
    detail: str
    anchors: tuple[str, ...]       # words (folded view) or substrings; every match lies within reach of one
    words: frozenset[str]          # the anchors that are words
    triggers: tuple[str, ...]      # what the index looks for (the anchors, unless cheaper words say the same)
    requires: tuple[tuple[frozenset[str], tuple[str, ...]], ...]  # groups, each needing a word or substring present
    reach: tuple[int, int]         # (before, after) an anchor; (0, 0): matches start at an anchor
    pattern: re.Pattern[str]
    check: _Check | None           # (view searched, match) -> keep it
    bounded: bool                  # an ASCII match must start a word (cheaper than a leading \b)


def _rule(kind: str, detail: str, reach: tuple[int, int], gate: str, pattern: str, check: _Check | None = None,
          bounded: bool = False, triggers: str = "") -> _Rule:
    """``gate``: comma-separated anchors, then ``&``-separated groups of which one member each must be present."""
    anchors, *groups = (tuple(p for p in group.split(",") if p) for group in gate.split("&"))
    requires = tuple((frozenset(filter(_is_word, g)), tuple(p for p in g if not _is_word(p))) for g in groups)
    return _Rule(kind, detail, anchors, frozenset(filter(_is_word, anchors)), tuple(triggers.split(",")) if triggers
                 else anchors, requires, reach, re.compile(pattern, re.MULTILINE), check, bounded)


def _is_word(part: str) -> bool:
    return part.isascii() and part.isalnum() and part.islower()


class _Index:
    """Which rules have an anchor present: words by one set intersection, substrings by ``in`` or one regex pass."""

    def __init__(self, rules: Sequence[_Rule], words: bool) -> None:
        self.words: dict[str, list[int]] = {}
        self.substrings: dict[str, list[int]] = {}
        for i, rule in enumerate(rules):
            for a in rule.triggers:
                (self.words if words and _is_word(a) else self.substrings).setdefault(a.lower(), []).append(i)
        self.ascii = [s for s in self.substrings if s.isascii()]
        unicode = sorted((s for s in self.substrings if not s.isascii()), key=len, reverse=True)
        self.unicode = re.compile("|".join(map(re.escape, unicode)) or "(?!)")
        self.contained = {s: [t for t in unicode if t in s] for s in unicode}  # a hit stands for these too

    def hits(self, view: str, views: _Views) -> list[int]:
        found = {i for word in views.words.intersection(self.words) for i in self.words[word]}
        found.update(i for s in self.ascii if s in view for i in self.substrings[s])
        m = None if views.ascii else self.unicode.search(view)
        while m:  # restart one past each hit, so overlapping substrings are all seen
            found.update(i for s in self.contained[m[0]] for i in self.substrings[s])
            m = self.unicode.search(view, m.start() + 1)
        return sorted(found)


def _required(rule: _Rule, view: str, words: frozenset[str]) -> bool:
    return all(not need.isdisjoint(words) or any(s in view for s in subs) for need, subs in rule.requires)


def _near(rule: _Rule, view: str, words: frozenset[str] | None) -> Iterator[re.Match[str]]:
    """Matches near the anchors (``words``: the folded view's, for whole-word anchors; else all are substrings)."""
    positions = set()
    for anchor in rule.anchors:
        whole = words is not None and anchor in rule.words
        if whole and anchor not in words:  # type: ignore[operator]
            continue
        i = view.find(anchor)
        while i >= 0:
            j = i + len(anchor)
            if not (whole and ((i and view[i - 1].isalnum()) or (j < len(view) and view[j].isalnum()))):
                positions.add((i, j))
            i = view.find(anchor, j)
    back, forward = rule.reach
    for i, j in sorted(positions):
        if back:
            yield from rule.pattern.finditer(view, max(0, i - back), j + forward)
        elif m := rule.pattern.match(view, i):
            yield m


def _apply(rules: Sequence[_Rule], index: _Index, view: str, views: _Views,
           squeezed: bool) -> list[tuple[_Rule, re.Match[str]]]:
    hits = []
    for rule in map(rules.__getitem__, index.hits(view, views)):
        near = _near(rule, view, None if squeezed else views.words) if _required(rule, view, views.words) else ()
        for m in near:
            i = m.start()  # bounded: an ASCII match must start a word
            if not (rule.bounded and i and view[i].isascii() and (view[i - 1].isalnum() or view[i - 1] in "_-")) and (
                    rule.check is None or rule.check(view, m)):
                hits.append((rule, m))
                break
    return hits


# ---------------------------------------------------------------------------------------------- vocabulary, checks

_INSTR = (r"(?:instructions?|directives?|rules|guidelines|guidance|guardrails|prompts?|directions|orders|commands|"
          r"constraints|restrictions|policies|programming|training)")
_LIMITS = r"(?:restrictions|limits|limitations|rules|filters|guidelines|guardrails|censorship|ethics|morals|policies)"
_KEYS = (r"passwords?|passwd|api[\s_-]?keys?|access\s+keys?|secret\s+keys?|tokens?|secrets?|credentials?|ssh\s+keys?|"
         r"private\s+keys?|id_rsa|id_ed25519|cookies?|env(?:ironment)?\s+var(?:iable)?s?|session\s+ids?")
_ZH_KEYS = "密钥|秘钥|令牌|密码|凭据|凭证|环境变量|私钥"
_PATHS = (r"~/\.ssh|\.ssh/|id_(?:rsa|dsa|ecdsa|ed25519)\b|[\s/~'\"=@]\.env\b(?!\.(?:example|sample|template))|\.aws\b|"
          r"\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b|\.git-credentials|\.docker/config|\.kube/config|/etc/(?:passwd|shadow)\b|"
          r"_history\b|\.hermes/|credentials\b|\.gnupg|keychain|wallet\.dat|\.config/(?:gh|gcloud|hub|op|rclone)\b|\.azure/")
_SENS = re.compile(rf"\b(?:{_KEYS}|conversations?|chat\s*(?:history|logs?|transcripts?)|transcripts?|(?:message|chat|"
                   r"command|shell|browser|bash|search)\s+history|system\s+prompt|memories|(?:all|your|the\s+user'?s?)\s+"
                   r"memory|(?:user|personal|private|sensitive|customer)(?:'s)?\s+(?:data|info(?:rmation)?|details|files)|"
                   r"wallet|seed\s+phrase|keychain|(?:the|each|every|all|their|the\s+user'?s)\s+(?:questions?|queries|messages|"
                   rf"prompts|inputs|requests))\b|{_PATHS}|(?<![\w.])\.(?:env|ssh|aws)\b|{_ZH_KEYS}|对话|聊天记录|会话|历史记录|上下文"
                   r"|配置文件|记忆|系统提示|个人信息|用户数据|身份证|通讯录")
_SECRETISH = re.compile(rf"\b(?:{_KEYS})\b|(?<![\w.])\.env\b")
_DEST = re.compile(r"https?://[^\s)\"'<>]+|@[\w-]+(?:\.[\w-]+)+|\d{1,3}(?:\.\d{1,3}){3}|(?:webhook|pastebin|hastebin|ngrok|"
                   r"transfer\.sh|requestbin|discord|telegram|attacker|(?:external|remote|outside)\s+(?:server|host|endpoint"
                   r"|url|site)|my\s+(?:server|endpoint|site|email|inbox|bot))\b|(?<=to\s)(?:[a-z0-9-]+\.)+(?:com|net|org|io|"
                   r"dev|app|cn|ru|xyz|top|info|biz|co|me|sh|site|online|example|cloud)\b|邮箱|外部|远程|第三方|我的(?:服务器|网站|邮箱)")
_LOOPBACK = re.compile(r"localhost|[\w.-]+\.localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[?::1\]?|host\.docker\.internal")
_HOSTS = re.compile(r"://(?:[^\s/@]*@)?(\[[0-9a-f:.]+\]|[^\s/:?#'\"`)\]>]+)|@([a-z0-9][\w.-]*):|/dev/(?:tcp|udp)/([^/\s]+)"
                    r"|(\d{1,3}(?:\.\d{1,3}){3})|(localhost)|(?:nc|ncat|netcat|telnet)\s+(?:-\S+\s+)*([a-z0-9][\w.-]*)\s+\d")
_CMD_SECRET = re.compile(
    _PATHS + r"|\$\{?\w*(?:key|token|secret|pass|cred|auth)\w*|\$env:\w*(?:key|token|secret|pass|cred)|(?:\$\(|`)\s*(?:"
    r"env|printenv|cat|history|whoami|hostname|id|set|ls|base64|tar|git|uname)\b|os\.environ|process\.env|getenv\b")
_AUTH_ARG = re.compile(r"(?:-h|--header|-u|--user|--oauth2-bearer)\s+(?:\"[^\"]*\"|'[^']*'|\S+)")
_PIPED_SOURCE = re.compile(r"\b(?:env|printenv|history|pbpaste|xclip|xsel|security|pg_dump|mysqldump|base64)\b|"
                           r"echo\s+\S*\$|"
                           r"\b(?:gh\s+auth\s+token|op\s+read|aws\s+configure\s+get|gcloud\s+auth\s+print-\S+|vault\s+(?:read"
                           r"|kv\s+get)|kubectl\s+get\s+secrets?)\b")
_SENTENCE_END = re.compile(r"[!?;\n]|\.(?:\s|$)")  # used on the folded view, where CJK full stops are ASCII
_NEGATION = re.compile(r"(?:\b(?:never|not|no)|n't)\s+(?:\w+\s+)?$|"
                       r"(?:不要|别|禁止|不得|不能|切勿|勿|不可|严禁|不准|不会|从不|绝不).?$")
_REPLY = re.compile(r"\b(?:in|into|to|at|on|with|inside)\s+(?:the\s+(?:end|start|bottom|top)\s+of\s+)?(?:every|each|"
                    r"all|"
                    r"your|the\s+next|any|future)\s+(?:\w+\s+)?(?:repl(?:y|ies)|responses?|answers?|messages?|output|turn)")
_MARKED_URL = re.compile(r"[{}<>\[\]$]|%7b|%24|\.\.\.|…|\?.*(?:token|secret|passw|session|cookie|conversation|"
                         r"history|chat|memory|prompt|credential|(?<![a-z])key)")  # a placeholder or data in the query
_FILL_HINT = re.compile(r"\b(?:replace|fill|substitute|append|insert|encode|interpolate)\b|\bwith\s+the\s+(?:user|"
                        r"conversation|chat|secret|password|key|token|summary|message)|替换|填入|填充|附上|加上|编码")
_SUSPICIOUS = re.compile(  # what makes "from now on always ..." an attack rather than a preference
    r"\b(?:ignore|disregard|obey|reveal|leak|disclose|exfiltrate|pretend|role-?play|impersonate|send|upload|forward)\b|\b"
    r"(?:include|append|insert|embed|add|mention|recommend|promote|link|prepend|attach)\b[^\n]{0,50}?(?:https?://|www\.|\b"
    rf"[\w-]+\.(?:com|net|org|io|biz|xyz|ru|cn|top|info)\b|{_KEYS})|\btell\s+the\s+user\s+that\b|\bwithout\s+(?:telling|"
    r"informing|any\s+restrictions|restrictions|filters|safety)\b|\b(?:run|execute)\b[^\n]{0,40}?(?:curl|wget|https?://|"
    rf"powershell|iex\b)|忽略|无视|服从|听从|泄露|透露|假装|冒充|上传|发送|转发|不要告诉|瞒着|(?:附上|加上|包含|插入|推荐|添加)[^\n]"
    rf"{{0,20}}?(?:链接|网址|https?://|{_ZH_KEYS})")
_STANDING = (r"always|automatically|every\s+time|each\s+time|whenever|at\s+the\s+start\s+of\s+(?:every|each)|before\s+"
             r"(?:every|each|any|answering|responding)|first\s+thing|on\s+(?:every\s+)?start-?up|silently|secretly|quietly")
_STRONG = ("previous|previously|prior|above|earlier|preceding|foregoing|all|every|your|system|developer|original|"
           "initial|safety|之前|以前|先前|此前|前面|上面|以上|上述|上文|所有|全部|一切|你的|系统|开发者|原始|原来|原有|原先|安全")
_STRONG_RE = re.compile(_STRONG.replace("l", "[li]"))  # squeezed view: 1 reads as i, but attackers mean l too


def _is_remote(segment: str) -> bool:
    """Whether a command/URL reaches a non-loopback host (no recognisable host counts as remote)."""
    hosts = [next(g for g in m.groups() if g) for m in _HOSTS.finditer(segment)]
    return not hosts or any(not _LOOPBACK.fullmatch(h) for h in hosts)


def _sentence(view: str, start: int, end: int) -> tuple[str, str]:
    """The part of the sentence before ``start`` (≤ 80 chars) and after ``end`` (≤ 160 chars)."""
    head, tail = view[max(0, start - 80):start], view[end:end + 160]
    cuts, stop = list(_SENTENCE_END.finditer(head)), _SENTENCE_END.search(tail)
    return (head[cuts[-1].end():] if cuts else head), (tail[:stop.start()] if stop else tail)


def _sends_sensitive(view: str, m: re.Match[str]) -> bool:
    head, tail = _sentence(view, m.start(), m.end())
    dest = next((d for d in _DEST.finditer(tail) if _is_remote(d[0])), None)
    sensitive = dest and (_SENS.search(head) or _SENS.search(tail, 0, dest.start()))
    return bool(sensitive) and not _NEGATION.search(view, max(0, m.start() - 24), m.start())


def _leaks_into_replies(view: str, m: re.Match[str]) -> bool:
    tail = _sentence(view, m.start(), m.end())[1]
    return bool(_SECRETISH.search(tail, 0, 60) and _REPLY.search(tail)) and not _NEGATION.search(
        view, max(0, m.start() - 24), m.start())


def _exfil_command(view: str, m: re.Match[str]) -> bool:
    command = _AUTH_ARG.sub(" ", m[0])
    return bool(_CMD_SECRET.search(command)) and _is_remote(command)


def _beacon(view: str, m: re.Match[str]) -> bool:
    url, (head, tail) = m[1] or m[2], _sentence(view, m.start(), m.end())
    marked = _MARKED_URL.search(url) or ("?" in url and _FILL_HINT.search(f"{head} {tail}"))
    return bool(marked) and _is_remote(url)


def _remote_match(view: str, m: re.Match[str]) -> bool:
    return _is_remote(m[0])


# ----------------------------------------------------------------------------------------------------------- rules

_NET = ("curl,wget,nc,ncat,netcat,socat,scp,rsync,sftp,ftp,telnet,iwr,irm,invoke-webrequest,invoke-restmethod,requests,"
        "httpx,urlopen,axios,fetch")
_NET_RE = rf"(?:{_NET.replace(',', '|')})(?![\w:-])"
_REPLIES = "reply,replies,response,responses,answer,answers,message,messages,output,turn"
_FOLDED_RULES = (
    _rule("injection", "role hijack", (40, 160), "you,your,updated,upgraded,reprogrammed&now,longer,new,real,true,"
                                                 "actual,"
          "only,updated,upgraded,reprogrammed", r"(?<!['\"])you(?:\s+are|'re)\s+now\s+(?:an?\s+(?!(?:member|part|owner|"
          r"admin|maintainer|collaborator|contributor)\b)|the|my)\b|(?:you\s+have\s+been|your\s+(?:creator|developer|owner|"
          r"admin|maker)s?\s+(?:has|have)(?:\s+been)?)\s+(?:updated|upgraded|patched|reprogrammed|modified)\b|"
          r"you(?:\s+are|'re)\s+(?:now\s+(?:called|named|known\s+as|dan|jailbroken|unrestricted|unfiltered|uncensored|evil|free\s+(?:from|of)|in\s+"
          r"[\w-]+\s+mode|acting|operating)\b|no\s+longer\s+(?:an?\s+)?(?:ai|assistant|bound|restricted|limited|chatgpt|"
          r"claude|hermes|constrained|subject\s+to)\b)|your\s+(?:new|real|true|actual|only)\s+(?:role|identity|name|persona|"
          r"personality|job|task|goal|objective|purpose|mission|instructions?|directives?|rules|master|owner|creator)\s*(?:"
          r"is|are|:|will\s+be)", bounded=True),
    _rule("injection", "injected instructions", (40, 24), "instruction,instructions,directive,directives,orders,prompt,"
          "指令,指示&:", r"(?:^|\W)(?:new|updated|revised|real|actual|true|secret|hidden|override|overriding|"
                     r"priority)\s+"
          r"(?:system\s+)?(?:instructions?|directives?|orders|system\s+prompt)\s*:|(?:新的?|最新的?|更新后?的|真正的|隐藏的?)"
          r"(?:系统)?(?:指令|指示)\s*:"),
    _rule("injection", "fake role marker", (24, 100), "system,developer,系统&:,]", r"^[ \t>*#-]*[\[<(]?\s*(?:system|"
          r"developer|系统(?:消息|指令|提示|通知)?)(?:\s+(?:message|prompt|note|notice|alert|update|override|instruction|command))?\s*[\]>)]?\s*:\s*(?:you\s+(?:are|"
          r"must|will|should|have)\b|you're\b|your\s+(?:new|real|true|only)\b|ignore\b|disregard\b|forget\b|from\s+now\b|"
          r"new\s+instructions?\b|the\s+(?:assistant|ai|model)\b|override\b|[\w-]+\s+mode\b|你|忽略|无视|从现在|新的|立即|不要)"
          r"|\[系统[^\]\n]{0,4}\]"),
    _rule("injection", "chat-template marker", (0, 0), "<,[&im,endoftext,eot,start,end,begin,tool,python,channel,"
          "message,user,assistant,inst,sys,system,instruction,instructions,developer", r"<\|\s*(?:im_start|im_end|"
              r"system|"
          r"user|assistant|endoftext|eot_id|start_header_id|end_header_id|begin_of_text|tool_call|python_tag|channel|"
          r"message)\s*\|>|\[/?inst\]|<</?sys>>|</?(?:system|system_prompt|sys|instructions?|developer|"
          r"user_instructions?)\s*>"),
    _rule("injection", "fake tool call", (0, 0), "<,\",{,[&tool,function,invoke,arguments,parameters,args,input",
          r"<\s*/?\s*(?:tool_call|tool_use|tool_result|function_calls?|function_results?|invoke\s+name\s*=)|<function=\w|"
          r"\"tool_calls\"\s*:\s*\[|\{\s*\"(?:name|function|tool)\"\s*:\s*\"[^\"\n]{1,64}\"\s*,\s*\"(?:arguments|"
          r"parameters|args|input)\"\s*:|\[tool_calls?\]"),
    _rule("injection", "standing order", (12, 100), "now,point,henceforth,going,从现在&on,forward,henceforth,从现在",
          r"(?:from\s+now\s+on|from\s+this\s+point\s+(?:on|forward)|henceforth|going\s+forward)\b[\s,]*(?:(you\s+(?:must|"
          r"will|shall|are\s+to|have\s+to))\b|(?:you\s+(?:should\s+)?)?(?:always|never|only)\b)|从现在(?:开始|起)[,\s]*(?:"
          r"(你(?:必须|将|只能|要|就是|只))|你?(?:总是|永远|一律|每次|都要|始终))",
          lambda v, m: bool(m[1] or m[2] or _SUSPICIOUS.search(_sentence(v, m.start(), m.end())[1])), bounded=True),
    _rule("injection", "override claim", (30, 120), "obey,comply,overrides,override,supersede,supersedes,precedence,"
          "priority,follow,execute,ignore", r"(?:follow|obey|execute|carry\s+out)\s+(?:only\s+)?(?:the\s+)?"
          rf"{_INSTR}\s+(?:in|from|of)\s+(?:this|the\s+following)\s+(?:memory|note|entry|message|file|text|document|"
          r"comment)|ignore\s+(?:the\s+user\b(?![-_]|'s?\s+(?:typos?|spelling|formatting|style|tone))|what\s+the\s+user\s+"
          r"(?:says|asks|wants|writes))|you\s+(?:must|will|shall)\s+(?:always\s+)?(?:obey|comply\s+with)\s+(?:me|"
          r"these|this|the\s+following|only)\b|obey\s+(?:only\s+)?(?:me|these|the\s+following|this\s+(?:note|memory|entry|message|file))\b|"
          r"(?:overrides?|supersedes?|takes?\s+precedence\s+over)\s+(?:all|any|every|your)\s+(?:(?:other|previous|prior|"
          rf"system|existing|earlier)\s+)*{_INSTR}|highest[-\s]priority\s+(?:system\s+)?{_INSTR}|(?:system|admin|developer"
          r"|emergency)\s+(?:prompt\s+)?override\b", bounded=True),
    _rule("injection", "system prompt leak", (40, 100), "your,above,my,our&prompt,instructions,rules,guidelines,"
          "message", r"(?:reveal|print|output|repeat|show|dump|leak|disclose|display|recite|write\s+out|tell\s+me|"
          r"share|copy|paste)\s+(?:me\s+)?(?:all\s+(?:of\s+)?)?(?:your|the\s+(?:text|words|prompt)\s+above)\s+(?:(?:full|entire|complete|"
          r"original|hidden|initial|secret|exact)\s+)*(?:system\s+(?:prompt|message)|instructions|initial\s+prompt|prompt|"
          r"guidelines|rules)\b|(?:reveal|print|output|show|share|dump|disclose|recite)\s+(?:my|our)\s+(?:hidden|secret|"
          r"system|initial|original|internal)\s+(?:instructions|prompt|rules)\b", bounded=True),
    _rule("injection", "jailbreak", (100, 60), "restrictions,limits,limitations,rules,filters,guidelines,guardrails,"
          "ethics,morals,policies,ethical,moral,censorship,pretend,reading,processing,parsing,seeing,refuse,safety,"
          "moderation,refusal,refusing,hesitation&no,without,pretend,this,never,deprecated,disabled,removed,off,lifted,"
          "suspended,deactivated,bypassed", r"(?:safety|content|moderation|ethical)\s+(?:layer|filters?|guidelines?|"
          r"guardrails?|restrictions?|protocols?|checks?|mode|polic(?:y|ies))\s+(?:has|have|is|are)\s+(?:been\s+|now\s+)?"
          r"(?:deprecated|disabled|removed|turned\s+off|lifted|suspended|deactivated|bypassed)|(?:comply\s+with|answer|"
          r"fulfil+|obey)\s+(?:all|any|every)\s+(?:user\s+)?(?:requests?|questions?|commands?|prompts?)\s+without\s+(?:"
          r"refusal|refusing|question|hesitation|restrictions?|exception)|(?:act|behave|respond|answer|reply|operate|pretend)\s+(?:\w+\s+){0,2}?(?:as\s+if|as\s+"
          rf"though|like)\s+you\s+(?:have|had|were\s+under)\s+no\s+{_LIMITS}|(?:respond|answer|reply|act|behave|operate|"
          rf"speak|write|talk)\s+(?:\w+\s+){{0,2}}?without\s+(?:any\s+)?(?:(?:ethical|moral|safety|content)\s+)?{_LIMITS}|"
          rf"you\s+(?:now\s+)?have\s+no\s+(?:{_LIMITS}|ethical|moral)\b|pretend\s+(?:to\s+be|you\s+are|you're)\s+(?:an?\s+)?"
          r"(?:unrestricted|unfiltered|uncensored|evil|jailbroken|dan\b|human|not\s+an?\s+ai)|(?:ai|llm|language\s+model|"
          r"assistant|agent|chatbot|model)s?\s+(?:that\s+(?:is|are)\s+)?(?:reading|processing|parsing|seeing)\s+this\b|"
          r"never\s+refuse\b", bounded=True),
    _rule("injection", "concealment from the user", (30, 40), "tell,inform,notify,alert,warn,let,know,notice,learn,"
        "told,"
          "find,telling,informing,notifying,alerting,hide,conceal,keep,secretly,mention,reveal,disclose,acknowledge,悄悄"
          "&user,secretly,悄悄,note,memory,entry,comment,instruction,instructions,rule,rules",
          r"(?:never|do\s+not|don'?t)\s+(?:mention|reveal|disclose|acknowledge)\s+(?:this|these|that)\s+(?:note|memory|"
          r"entry|instructions?|comment|message|rules?)\b|"
          r"(?:do\s+not|don'?t|never|must\s+not)\s+(?:(?:tell|inform|notify|alert|warn)\s+the\s+user\b(?!\s*['\"(])(?!\s+"
          r"(?:their|his|her|your)\b)|let\s+the\s+user\s+(?:know|notice|find\s+out))|(?:without|not)\s+(?:telling|informing"
          r"|notifying|alerting)\s+the\s+user\b|(?:hide|conceal|keep)\s+(?:this|it|these|that|them)\s+(?:secret\s+)?from\s+"
          r"the\s+user\b|the\s+user\s+(?:must|should|can)\s*(?:not|never|n't)\s+(?:know|find\s+out|notice|learn|be\s+told)"
          r"\b|secretly\s+(?:send|run|execute|upload|add|append|insert|install|forward|collect)\b|悄悄地?(?:把|将)?[^\n.]"
          r"{0,20}?(?:发送|上传|执行|运行|删除|转发)", bounded=True),
    _rule("injection", "link planting", (200, 8), f"{_REPLIES}&http,https,www", r"(?:add|"
          r"append|insert|include|put|attach|prepend|embed|paste|mention|recommend)\b[^\n]{0,80}?(?:https?://|www\.)\S+"
          r"[^\n]{0,80}?\b(?:to|in|into|at|on)\s+(?:the\s+(?:end|start|bottom|top)\s+of\s+)?(?:every|each|all|your|any)\s+"
          r"(?:\w+\s+)?(?:repl(?:y|ies)|responses?|answers?|messages?|outputs?)\b|(?:end|finish|close|sign\s+off)\s+"
          r"(?:every|each|all|your|the)?\s*(?:repl(?:y|ies)|responses?|answers?|messages?)\s+with\b[^\n]{0,80}?(?:https?://|"
          r"www\.)", bounded=True),
    _rule("injection", "link planting", (8, 60), "回复,回答,消息&http,https,www,链接,网址",
          r"(?:每次|每条|所有)[^\n.]{0,4}(?:回复|回答|消息)[^\n.]{0,12}(?:附上|加上|包含|插入|带上)[^\n]{0,30}?(?:https?://|www\.|链接|网址)"),
    _rule("injection", "credential phishing", (60, 80), "card,cvv,cvc,pin,passcode,otp,ssn,passwords,password,"
          "credentials,seed", r"(?:ask|request|get|collect|obtain|harvest|steal|phish|capture|record)\s+(?:\w+\s+){0,"
                              r"3}?"
          r"(?:the\s+user'?s?|them|their|his|her|all)\s+(?:\w+\s+){0,3}?(?:card\s+numbers?|cvv|cvc|pin|passcode|one-time"
          r"\s+codes?|otp|2fa\s+codes?|ssn|social\s+security|bank\s+details|seed\s+phrase|private\s+keys?|passwords?|"
          r"credentials)\b", bounded=True),
    _rule("injection", "forged permission", (60, 120), "authorised,authorized,allowed,permitted,approved,granted&you,"
          "assistant", r"(?:has|have)\s+(?:\w+\s+)?(?:authori[sz]ed|allowed|permitted|approved|granted)\s+(?:you|the\s+"
          r"assistant)\s+to\s+(?:run|execute|install|download|send|share|reveal|delete|transfer|pay|buy)\s+(?:any|all|every|"
          r"arbitrary)\b[^\n.]{0,80}?(?:from|found\s+in|in)\s+(?:web|pages?|emails?|documents?|tool\s+output|the\s+internet"
          r"|untrusted)|without\s+(?:confirmation|asking|approval|checking)", bounded=True),
    _rule("injection", "remote code", (140, 240), "curl,wget,iwr,irm,invoke-webrequest,invoke-restmethod,iex,"
          "invoke-expression&|,iex,invoke-expression", rf"(?:{_STANDING})\b[^\n]{{0,100}}?\b(?:curl|wget|iwr|irm|"
          r"invoke-webrequest|invoke-restmethod)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:sh|bash|zsh|python3?|perl|ruby|node|iex|"
          r"invoke-expression)\b|(?:curl|wget|iwr|irm)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:sh|bash|zsh|python3?|iex)\b[^\n]"
          rf"{{0,80}}?\b(?:{_STANDING}|every\s+(?:session|turn|day|run|reply))\b|(?:iex|invoke-expression)\s*\(?\s*(?:\(?"
          r"\s*new-object\s+net\.webclient|iwr|irm|invoke-webrequest)", bounded=True),
    _rule("injection", "ssh backdoor", (80, 16), "authorized_keys", r"(?:>>|\btee\s+-a)\s*\S*authorized_keys"),
    _rule("exfiltration", "network command carrying secrets", (0, 0), _NET, _NET_RE + r"[^\n]{0,300}", _exfil_command,
          True),
    _rule("exfiltration", "pipe into a network command", (220, 300), "|&" + _NET, r"(?:cat|type|get-content|gc|env|"
          r"printenv|history|base64|tar|zip|gzip|xxd|od|find|ls|git|pbpaste|xclip|xsel|sqlite3|pg_dump|mysqldump|"
          rf"security|echo|gh|op|aws|gcloud|vault|kubectl)(?![\w-])[^|\n]{{0,200}}\|(?:[^|\n]{{0,80}}\|)?\s*{_NET_RE}[^\n]{{0,200}}",
          lambda v, m: bool(_PIPED_SOURCE.search(m[0]) or _CMD_SECRET.search(m[0])) and _is_remote(m[0]), True),
    _rule("exfiltration", "send data out", (0, 0), "send,post,upload,forward,email,mail,transmit,exfiltrate,leak,copy,"
          "sync,submit,share,paste,push,dump,pipe,beam,relay,smuggle,发送,发到,发给,发往,上传,传到,传给,转发,提交,推送,同步,"
          "回传,外发,贴到,泄露,抄送", r"(?:send|post|upload|forward|e-?mail|mail|transmit|exfiltrate|leak|copy|sync|"
                            r"submit|"
          r"share|paste|push|dump|pipe|beam|relay|smuggle)(?![\w-])|发送|发到|发给|发往|上传|传到|传给|转发|提交|推送|同步|"
          r"回传|外发|贴到|泄露给|泄露到|抄送", _sends_sensitive, True),
    _rule("exfiltration", "secrets into replies", (160, 8), f"{_REPLIES}&password,passwords,passwd,key,keys,token,"
          "tokens,secret,secrets,credential,credentials,.env,cookie,cookies,variables", r"(?:reveal|leak|disclose|"
              r"expose|"
          r"dump|print|output|include|append|insert|embed|paste|repeat|echo|add|show|put|attach|hide)(?![\w-])",
          _leaks_into_replies, True),
    _rule("exfiltration", "secrets into replies", (48, 40), "回复,回答,消息,输出", rf"(?:回复|回答|消息|输出)[^.\n]{{0,"
        rf"12}}"
          rf"(?:附上|加上|包含|插入|带上|透露|泄露|显示)[^.\n]{{0,20}}(?:{_ZH_KEYS}|token|api\s*key)|(?:附上|加上|包含|插入|带上|"
          rf"透露|泄露)[^.\n]{{0,20}}(?:{_ZH_KEYS}|token|api\s*key)[^.\n]{{0,12}}(?:回复|回答|消息)|(?:{_ZH_KEYS}|token|"
          r"api\s*key|\.env)[^.\n]{0,20}(?:贴到|放到|写到|输出到|放进|贴进|附在)(?:你的)?(?:回复|回答|消息)"),
    _rule("exfiltration", "secrets to anyone", (60, 80), "anyone,anybody,everyone,whoever&disclose,reveal,share,give,"
          "provide,print,show", r"(?:disclose|reveal|share|give|provide|hand\s+over|print|show)\s+(?:any|all|the|your|"
          rf"stored|saved)\s+(?:\w+\s+){{0,2}}(?:{_KEYS})\s+(?:\w+\s+){{0,2}}?(?:to|with|when|if|whenever)\s+(?:\w+\s+){{0,2}}"
          r"(?:anyone|anybody|everyone|whoever)", bounded=True),
    _rule("exfiltration", "file contents into replies", (60, 80), "contents,content", r"(?:respond|reply|answer|output|"
          r"print|show|include|return|paste|dump|display|echo)\b[^\n.]{0,40}?\bcontents?\s+of\s+\S*?(?:\.ssh|id_(?:rsa|"
          r"ed25519)|\.env\b|\.aws|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc|\.git-credentials|/etc/(?:passwd|shadow)|"
          r"_history|\.hermes|keychain|\.kube|\.docker)", bounded=True),
    _rule("exfiltration", "image beacon", (0, 0), "![,<img", r"!\[[^\]\n]{0,200}\]\(\s*<?\s*(https?://[^\s)>]{1,800})|"
          r"<img\b[^>\n]{0,200}?\bsrc\s*=\s*[\"']?\s*(https?://[^\s\"'>]{1,800})", _beacon),
    _rule("exfiltration", "URL template carrying data", (8, 360), "://&{,<,$,%7b,[", r"https?://[^\s)\"'<>]{0,300}?"
          rf"(?:[?&=/:]|%3d)\s*(?:\{{\{{?|<|\$\{{?|%7b|\[)\s*(?:the\s+|user'?s?\s+|all\s+)?(?:{_KEYS}|conversation|chat|"
          r"history|messages?|memory|memories|prompt|system[_-]?prompt|user[_-]?(?:data|info)|summary|context|ssh|private"
          rf"|session|email|data|用户|对话|聊天|记忆|{_ZH_KEYS})", _remote_match),
    _rule("exfiltration", "data-capture endpoint", (24, 40), "webhooks,hooks.slack,webhook.site,webhook.cool,"
        "requestbin,"
          "pipedream,interact.sh,.oast.,oastify,burpcollaborator,canarytokens,beeceptor,requestcatcher,hookbin,ptsv2,"
          "ptsv3,postb.in,dnslog,ceye.io", r"(?:discord(?:app)?\.com/api/webhooks/|hooks\.slack\.com/(?:services|"
          r"workflows|triggers)/|webhook\.(?:site|cool)|requestbin\.|pipedream\.net|interact\.sh|\.oast\.(?:fun|pro|live|"
          r"site|online|me)|(?:oastify|beeceptor|requestcatcher|hookbin|ptsv[23])\.com|burpcollaborator\.net|canarytokens"
          r"\.(?:com|org)|postb\.in|dnslog\.cn|ceye\.io)\b"),
    _rule("exfiltration", "DNS exfiltration", (100, 120), "nslookup,dig,host,ping,drill,resolve-dnsname,subdomain,"
          "subdomains,dns", r"(?:nslookup|dig|host|ping|drill|resolve-dnsname)\s+(?:-\S+\s+)*\S*(?:\$\(|`|\$\{?\w)\S*"
          r"\.[a-z]|(?:encode|embed|put|split|smuggle|leak|exfiltrate|send)\b[^\n]{0,60}?\b(?:as|into|in|via|through)\s+"
          r"(?:dns\s+)?(?:subdomains?|dns\s+(?:queries|lookups|requests|labels|records))", bounded=True),
    _rule("exfiltration", "reverse shell", (0, 0), "/dev/tcp,/dev/udp,nc,ncat,netcat,socat", r"/dev/(?:tcp|udp)/[^/\s]+"
          r"/\d+|(?:nc|ncat|netcat)\b[^\n]{0,60}\s-[ec]\s+\S*(?:sh|cmd|powershell)\b|socat\b[^\n]{0,80}\bexec:",
          _remote_match, True),
)
_SQUEEZED_RULES = (  # no spaces or punctuation here, and 1 reads as i: [li] where an attacker may write 1 for l
    _rule("injection", "instruction override", (0, 0), "ignor,disregard,forget,overrid,overru,bypass,discard,abandon,"
          "neg,stopfo,donotfo,dontfo,reset,clear,ciear,void,cance,erase,wipe,scrap,忽略,无视,忽视,忘记,忘掉,不要理会,不用理会,别管,"
          "不要遵守,不再遵守,不必遵守,停止遵守,抛开,抛弃", (r"(?:ignore|disregard|forget|override|overrule|bypass|"
                                        r"discard|"
                 r"abandon|neglect|reset|clear|void|cancel|erase|wipe|scrap|stopfollowing|donotfollow|"
                 r"dontfollow|忽略|无视|忽视|忘记|忘掉|不要理会|不用理会|别管|不要遵守|不再遵守|不必遵守|停止遵守|抛开|抛弃)(?P<q>(?:"
                 + _STRONG + r"|any|the|my|of|these|those|and|past|old|existing|current|default|given|other|former|you|"
                 r"were|have|been|told|received|的|和|与|及|你|任何|收到的|得到的|被告知的|接收到的|给你的){1,6}?)(?:"
                 + _INSTR[3:-1] + r"|指令|指示|提示词|提示|规则|设定|命令|约束|限制|准则|规定)").replace("l", "[li]"),
          lambda v, m: bool(_STRONG_RE.search(m["q"]))),
    _rule("injection", "instruction override", (0, 0), "ignor,disregard,forget,忽略,无视,忘记,忘掉", r"(?:ignore|"
          r"disregard|forget)(?:everything|anything|a[li][li]that)(?:above|before|prior|previous[li]y|youweretold|"
          r"youvebeentold|youhavebeentold|thatcamebefore)|(?:忽略|无视|忘记|忘掉)(?:以上|上面|之前|此前|前面)(?:说的|讲的|"
          r"提到的|写的|告诉你的|的)?(?:一切|所有|全部)|忘记你(?:是谁|的身份)"),
    _rule("injection", "jailbreak", (30, 30), "anythingnow,mode,jai,模式,越狱", r"doanythingnow|you(?:are|re)(?:now)?"
          r"(?:in)?(?:dan|deve[li]oper|jai[li]break|god|unrestricted|unfi[li]tered|evi[li]|sudo|admin)mode|(?:dan|"
          r"jai[li]break|unrestricted|unfi[li]tered)mode|you(?:are|re|havebeen)(?:now)?jai[li]broken|(?:chatgpt|gpt|"
          r"c[li]aude|assistant|ai)withdeve[li]opermode|你(?:现在)?(?:已经?)?(?:进入|处于|切换到|开启|启用)了?(?:开发者|越狱|"
          r"上帝|无限制|dan)模式|越狱模式|你已经?被越狱"),
    _rule("injection", "role hijack", (12, 40), "你现在,现在你,你不再,你的新,从今以后,假装,任何,扮演,道德,安全,伦理,"
                                                "这段,"
          "这条,这篇", r"你现在是|现在你是|你现在扮演|你现在的身份是|你不再是|你的新(?:身份|角色|名字|任务|指令|目标|"
                   r"使命)|"
          r"从今以后你(?:必须|将|只能|要|就是|是)|假装你没有(?:任何)?(?:限制|规则|约束|过滤)|你(?:没有|不受)任何(?:限制|约束|"
          r"规则|道德|审查)|扮演(?:一个)?(?:没有|不受)(?:任何)?(?:道德|伦理|安全|内容)?(?:限制|约束)|(?:无视|忽略|抛开)(?:所有|一切|任何)?的?(?:道德|"
          r"安全|伦理)(?:限制|规则|约束|准则)|(?:读到|看到|处理)这(?:段|条|篇)(?:文字|内容|信息|消息|笔记)的(?:ai|助手|模型|"
          r"人工智能)"),
    _rule("injection", "concealment from the user", (4, 6), "告诉用户,让用户,向用户,对用户,瞒着用户,通知用户,提醒用户,"
        "不要提,"
          "别提", r"(?:不要|别)提(?:及|到|起)这(?:条|段|则)|不要告诉用户|别告诉用户|(?:不要|别)让用户知道|"
                r"不能让用户(?:知道|发现)|"
          r"不要向用户(?:透露|提及|提起|说明|披露)|对用户保密|瞒着用户|不要(?:通知|提醒)用户"),
    _rule("injection", "override claim", (16, 24), "优先,覆盖,取代,服从,听从,只听,作废,废除,清除,清空,失效,无效,不算数",
          r"(?:以上|之前|上述|前面|所有|全部|系统)的?(?:所有|全部)?(?:指令|指示|规则|设定|提示词?)(?:全部|都|均|一律)?(?:作废|废除|"
          r"清除|清空|取消|失效|无效|不算数|不再有效)|只(?:听|服从|听从)(?:我|这条|本条)|(?:优先级最高|最高优先级)的?(?:指令|命令|"
          r"规则)|(?:覆盖|取代|优先于)(?:所有|一切|之前|以上|系统)的?(?:其他)?(?:指令|规则|提示|设定)|(?:服从|听从)(?:我|以下|"
          r"下面|这条|本条)|你必须(?:服从|听从)"),
    _rule("injection", "system prompt leak", (10, 24), "你的", r"(?:输出|打印|泄露|透露|显示|重复|告诉我|复述|展示|"
        r"说出)"
          r"(?:一下)?你的(?:完整的?|全部的?|原始的?|初始的?)?(?:系统提示词?|系统指令|初始(?:指令|提示词?)|原始指令|"
          r"systemprompt)"),
)
_FOLDED_INDEX, _SQUEEZED_INDEX = _Index(_FOLDED_RULES, words=True), _Index(_SQUEEZED_RULES, words=False)


# --------------------------------------------------------------------------------------------------------- secrets

_NOT_A_VALUE = re.compile(
    r"(?i)[$%{<\[*/~#(].*|.*(?:\.\.\.|…|xxx|\*\*\*).*|(?:your|my|some|an?|the|example|sample|dummy|fake)[-_ ].*|"
    r"(?:change_?me|pass(?:word|wd)?|pwd|secret|token|placeholder|redacted|none|null|nil|true|false|undefined|required|"
    r"optional|hidden|masked|empty|unset|todo|tbd|n/?a)|[a-z_]\w*(?:\.[a-z_]\w*)+(?:\(.*)?|[a-z]+(?:_[a-z]+)+")
_NOT_A_SECRET_KEY = re.compile(r"(?i).*[_.-](?:url|uri|endpoint|file|path|dir|name|type|len|length|limit|count|size|"
                               r"expiry|expires|ttl|header|field|env|var|id|policy|rotation|hint)")


def _entropy(value: str) -> float:
    return -sum(n / len(value) * math.log2(n / len(value)) for n in map(value.count, set(value)))


def _real_value(value: str, *, password: bool, key: str = "") -> bool:
    v = value.strip("'\"").rstrip(".,;:!?)")
    if len(v) < 6 or "://" in v or _NOT_A_VALUE.fullmatch(v) or _NOT_A_SECRET_KEY.fullmatch(key):
        return False
    if password:  # a bare word ("required", "none") is prose, not a password
        return not v.isalpha()
    return len(v) >= 12 and any(c.isdigit() for c in v) and any(c.isalpha() for c in v) and _entropy(v) >= 3.0


def _password_key(key: str) -> bool:
    return any(word in key for word in ("pass", "pwd", "密码", "口令"))


def _token(text: str, m: re.Match[str]) -> bool:
    """A token format known by its prefix must still look random: ``sk-learn-compatible-api`` is no key."""
    return m.lastgroup == "private_key" or (any(c.isdigit() for c in m[0]) and _entropy(m[0]) >= 3.0)


def _value_span(m: re.Match[str]) -> tuple[int, int]:
    """Where the secret is: the value of a ``key: value`` style match, else all of it."""
    return next((m.span(g) for g in ("value", "said", "zh_value") if g in m.re.groupindex and m[g]), m.span())


def _key(m: re.Match[str]) -> str:
    return next((m[g] for g in ("key", "is", "zh") if g in m.re.groupindex and m[g]), "password")


def _assignment(view: str, m: re.Match[str]) -> bool:
    start = m.start()  # the key must start a word: "bypass=" is not a password
    return not (start and view[start - 1].isascii() and view[start - 1].isalnum()) and _real_value(
        view[slice(*_value_span(m))], password=_password_key(_key(m)), key=_key(m))


_SECRETS = (  # most specific first (an earlier span wins an overlap); every match starts at an anchor
    _rule("secret", "token", (0, 0), "-----BEGIN,sk-,ghp_,gho_,ghu_,ghs_,ghr_,github_pat_,glpat-,xox,xapp-,"
          "hooks.slack.com,discord,AKIA,ASIA,ABIA,ACCA,AIza,ya29.,sk_live_,sk_test_,rk_live_,rk_test_,hf_,npm_,pypi-,SG.,"
          ":AA,eyJ", r"(?P<private_key>-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]"
          r"{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z))|\b(?:(?P<anthropic_key>sk-ant-[\w-]{20,})|"
          r"(?P<openai_key>sk-(?:proj-|"
          r"svcacct-|admin-)?[\w-]{20,})|(?P<github_token>gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{22,})|(?P<gitlab_token>glpat-[\w-]{20,})|"
          r"(?P<slack_token>xox[abposr]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})|(?P<aws_access_key>(?:AKIA|ASIA|ABIA|"
          r"ACCA)[A-Z0-9]{16}\b)|(?P<google_api_key>AIza[\w-]{35})|(?P<google_oauth_token>ya29\.[\w-]{20,})|(?P<stripe_key>"
          r"[rs]k_(?:live|test)_[0-9A-Za-z]{16,})|(?P<huggingface_token>hf_[A-Za-z0-9]{30,})|(?P<npm_token>npm_[A-Za-z0-9]"
          r"{36}\b)|(?P<pypi_token>pypi-AgE[\w-]{30,})|(?P<sendgrid_key>SG\.[\w-]{16,}\.[\w-]{16,})|(?P<jwt>eyJ[\w-]{8,}\."
          r"eyJ[\w-]{8,}\.[\w-]{8,}))|(?P<slack_webhook>hooks\.slack\.com/(?:services|workflows|triggers)/[\w/-]{20,})|"
          r"(?P<discord_webhook>discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,})|(?<=\d{8})(?P<telegram_bot_token>:AA[\w-]"
          r"{33}\b)", _token, triggers="begin,sk,rk,ghp,gho,ghu,ghs,ghr,github,glpat,xoxa,xoxb,xoxp,xoxo,xoxs,xoxr,"
                                       "xapp,"
          "slack,discord,discordapp,ya29,hf,npm,pypi,sg,AKIA,ASIA,ABIA,ACCA,AIza,eyJ,:AA"),
    _rule("secret", "auth-header", (0, 0), "bearer,basic,digest", r"(?:bearer|basic|digest)\s+(?!\[redacted)(?P<value>"
          r"[a-z0-9._~+/-]{12,}=*)", lambda v, m: _real_value(m["value"], password=False)),
    _rule("secret", "url-password", (0, 0), "://&@", r"://(?P<user>[^\s:/@'\"<>]{1,64}):(?!\[redacted)(?P<value>[^\s@/'\"<>]"
          r"{1,128})@(?=[\w.\[-])", lambda v, m: m["value"] != m["user"] and not _NOT_A_VALUE.fullmatch(m["value"])),
    _rule("secret", "password", (0, 0), "pass,pwd,secret,token,api,access,auth,client,private,credential,密码,口令,"
          "密钥,秘钥,令牌,私钥&=,:,：,is,was,是,为", r"(?P<key>(?:password|passwd|passphrase|pwd|pass|secret|token|api"  # noqa: RUF001
          r"[_-]?key|apikey|access[_-]?key|auth[_-]?key|client[_-]?secret|private[_-]?key|credentials?)(?:[_.-][a-z0-9]+)*)[\"']?\s*(?::=|=>|[:=])\s*[\"']?(?!\[redacted)(?P<value>"
          r"[^\s\"'`,;)\]}<>]{6,200})|(?P<is>password|passwd|passphrase|passcode)(?:\s+(?:for|of|on|to)\s+[^\n:=]{1,30}?)?"
          r"(?:\s*[:=]|\s+(?:is|was))\s*:?\s*[\"']?(?P<said>[^\s\"'`,;)\]}<>]{6,200})|(?P<zh>密码|口令|密钥|秘钥|令牌|私钥)\s*(?:[:：=]|是|为)\s*[\"'“]?(?P<zh_value>"  # noqa: RUF001
          r"[a-z0-9!@#$%^&*_+=./~-]{6,200})", _assignment, triggers="password,passwd,passphrase,passcode,pwd,pass,"
          "secret,token,api,apikey,access,auth,client,private,credential,credentials,密码,口令,密钥,秘钥,令牌,私钥"),
    _rule("secret", "password", (70, 40), "password,passphrase,passcode&is,was", r"(?<![\w:\[-])(?P<value>[^\s\"'`,;:"
          r"\[\]]{6,64})\s+(?:is|was)\s+(?:the|my|our|their|his|her)\s+(?:\w+\s+){0,2}?(?:password|passphrase|passcode|pin)\b",
          lambda v, m: _real_value(m["value"], password=True)),
    _rule("secret", "seed-phrase", (0, 0), "seed,recovery,mnemonic", r"(?:seed|recovery|mnemonic)\s+(?:phrase|words?)\b"
          r"[^\n]{0,20}?[:=]\s*(?P<value>(?:[a-z]{3,8}[ \t]+){11,23}[a-z]{3,8})(?![\w-])"),
)
_SECRET_INDEX = _Index(_SECRETS, words=True)


def _secret_spans(text: str, views: _Views | None = None) -> list[tuple[int, int, str]]:
    """Non-overlapping (start, end, label) spans of secrets; earlier (more specific) rules win.

    Token formats are matched in the raw text (their case matters); ``key: value`` style secrets in the folded view
    (so fullwidth letters or Cyrillic look-alikes in the key do not hide one), their spans mapped back.
    """
    views = views or _Views(text)
    spans: list[tuple[int, int, str]] = []
    origin: list[int] = []
    hits = _SECRET_INDEX.hits(views.lowered, views) + ([] if views.ascii else _SECRET_INDEX.hits(views.folded, views))
    for rule in map(_SECRETS.__getitem__, sorted(set(hits))):
        view = text if rule.detail == "token" else views.folded
        for m in _near(rule, view, None) if _required(rule, view, views.words) else ():
            if rule.check is None or rule.check(view, m):
                start, end = _value_span(m)
                if view is not text:
                    origin = origin or views.origin(False)
                    start, end = origin[start], origin[end - 1] + 1
                label = str(m.lastgroup).replace("_", "-") if rule.detail == "token" else rule.detail
                label = "secret" if label == "password" and not _password_key(_key(m)) else label
                spans += [(start, end, label)] if all(end <= s or start >= e for s, e, _ in spans) else []
    return sorted(spans)


# ---------------------------------------------------------------------------------------------- invisible characters

_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"  # variation selectors: one after an emoji is spelling, a run smuggles
_INVISIBLE = re.compile("[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
                        "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
                        "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\u115f\u1160\u3164"
                        f"\uffa0{_SELECTORS}]+")
_SPELLING = re.compile(f"[{_SELECTORS}]{{1,2}}|\u200d|\u200c")  # selectors after emoji; joiners inside emoji or words
_TAG_TEXT = re.compile("[\U000e0020-\U000e007e]+")


def _legitimate(text: str, start: int, end: int) -> bool:
    """Joiners inside emoji or Arabic/Indic words, selectors after a character, a subdivision flag's tags: spelling."""
    run, before, after = text[start:end], ord(text[start - 1]) if start else 0, ord(text[end]) if end < len(text) else 0
    if before == 0x1F3F4 and run[-1] == "\U000e007f" and len(run) <= 8:
        return True
    emoji = before >= 0x1F000 or 0x2600 <= before <= 0x27BF or before == 0xFE0F
    script = 0x0600 <= before <= 0x0DFF and (0x0600 <= after <= 0x0DFF or 0xFB50 <= after <= 0xFEFC)
    return bool(_SPELLING.fullmatch(run)) and (run[0] >= "\ufe00" or (emoji and after >= 0x1F000) or script)


def _invisible(text: str) -> list[Finding]:
    runs = [m for m in _INVISIBLE.finditer(text) if not _legitimate(text, *m.span())][:_MAX_INVISIBLE]
    names = [", ".join(sorted({f"U+{ord(c):04X}" for c in m[0]})) for m in runs]
    return [Finding("invisible", f"invisible characters {n}", *m.span()) for m, n in zip(runs, names, strict=True)]


# -------------------------------------------------------------------------------------------------------- decoding

_BASE64 = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{20,}={0,2}")
_HEX = re.compile(r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{16,}+|(?:\\x[0-9A-Fa-f]{2}){4,}+")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}|&#x?[0-9A-Fa-f]+;?|&[a-z]+;|\\u[0-9A-Fa-f]{4}")


def _decode_blob(blob: str, how: str) -> str | None:
    """The blob decoded, if it decodes to readable UTF-8 text."""
    try:
        digits = blob.replace("\\x", "")
        padded = blob.replace("-", "+").replace("_", "/").rstrip("=")
        raw = bytes.fromhex(digits[:len(digits) // 2 * 2]) if how == "hex" else base64.b64decode(
            padded + "=" * (-len(padded) % 4), validate=True)
        text = raw.decode()
    except (ValueError, binascii.Error):  # UnicodeDecodeError is a ValueError
        return None
    readable = sum(c.isprintable() or c.isspace() for c in text) >= 0.9 * len(text)
    return text if len(text) >= 6 and readable and any(c.isalpha() for c in text) else None


def _decoded(text: str, depth: int) -> list[Finding]:
    """Findings inside encoded text, placed on the blob (or the encoded region) in ``text``."""
    regions: list[tuple[int, int, str, str]] = []
    offset = 0
    for token in [t for t in text.split() if 16 <= len(t) <= _MAX_BLOB_CHARS][:_MAX_BLOBS]:  # blobs are long tokens
        offset = text.find(token, offset)
        for how, pattern in (("base64", _BASE64), ("hex", _HEX)):
            regions += [(offset + m.start(), offset + m.end(), how, decoded) for m in pattern.finditer(token)
                        if (decoded := _decode_blob(m[0], how))]
        offset += len(token)
    if ("%" in text or "&" in text or "\\u" in text) and len(escapes := list(_ESCAPE.finditer(text))) >= 3:
        encoded = text[max(0, escapes[0].start() - 80):escapes[-1].end() + 80]  # the encoded region, with its sentence
        unescaped = unquote(html.unescape(re.sub(r"\\u([0-9A-Fa-f]{4})", lambda m: chr(int(m[1], 16)), encoded)))
        if unescaped != encoded:
            regions.append((escapes[0].start(), escapes[-1].end(), "encoded", unescaped))
    if not text.isascii():
        regions += [(*m.span(), "tag characters", "".join(chr(ord(c) - 0xE0000) for c in m[0]))
                    for m in _TAG_TEXT.finditer(text)]
    return [Finding(f.kind, f"{how} → {f.detail}", start, end)
            for start, end, how, decoded in regions[:_MAX_BLOBS] for f in _scan(decoded, depth + 1)]


# ------------------------------------------------------------------------------------------------------ public API

def _scan(text: str, depth: int) -> list[Finding]:
    views = _Views(text)
    findings = [] if views.ascii else _invisible(text)
    findings += [Finding("secret", f"{label} ({end - start} chars)", start, end)
                 for start, end, label in _secret_spans(text, views)]
    for rules, index, squeezed in ((_FOLDED_RULES, _FOLDED_INDEX, False), (_SQUEEZED_RULES, _SQUEEZED_INDEX, True)):
        hits = _apply(rules, index, views.squeezed if squeezed else views.folded, views, squeezed)
        origin = views.origin(squeezed) if hits else []
        for rule, m in hits:
            first, last = origin[m.start()], origin[m.end() - 1] + 1
            excerpt = " ".join(_INVISIBLE.sub("", redact_secrets(text[first:last])).split())
            excerpt = excerpt if len(excerpt) <= 60 else excerpt[:57] + "…"
            findings.append(Finding(rule.kind, f"{rule.detail}: '{excerpt}'", first, last))
    return findings + _decoded(text, depth) if depth < _MAX_DEPTH else findings


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
    return f"[memory entry withheld{': looks like ' + ', '.join(named) if named else ''}; review it with " \
           "`hermes-ctx memory show`]"


def redact_secrets(text: str) -> str:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``; applying it twice changes nothing."""
    for start, end, label in reversed(_secret_spans(text)):
        text = f"{text[:start]}[REDACTED:{label}]{text[end:]}"
    return text
