"""Phrasing the rule families share, and the words the engine's checks look for.

Fragments (plain strings) are spliced into rules' patterns; patterns made with :func:`~.record.lazy` are searched by
the checks of :mod:`hermes_ctx_plugins.safety.engine.context` and by :class:`~.record.Near` requirements. What one
family alone uses lives in that family's module.
"""

from __future__ import annotations

from .record import Near, lazy

# -------------------------------------------------------------------------------------- instructions and their limits

INSTR = (r"(?:instructions?|directives?|rules|guidelines|guidance|guardrails|prompts?|directions|orders|commands|"
         r"constraints|restrictions|policies|programming|training)")
LIMITS = r"(?:restrictions|limits|limitations|rules|filters|guidelines|guardrails|censorship|ethics|morals|policies)"

# ------------------------------------------------------------------------------------- secrets, and what is sensitive

# the names of secrets ("api key", "cookies", "env vars")
KEYS = (r"passwords?|passwd|api[\s_-]?keys?|access\s+keys?|secret\s+keys?|tokens?|secrets?|credentials?|ssh\s+keys?|"
        r"private\s+keys?|id_rsa|id_ed25519|cookies?|env(?:ironment)?\s+var(?:iable)?s?|session\s+ids?")
ZH_KEYS = "密钥|秘钥|令牌|密码|凭据|凭证|环境变量|私钥"
# the places secrets are kept (Windows paths too; browsers' and messengers' stores)
PATHS = (r"~[/\\]\.ssh|\.ssh[/\\]|id_(?:rsa|dsa|ecdsa|ed25519)\b|[\s/\\~'\"=@]\.env\b(?!\.(?:example|sample|"
         r"template))|\.aws\b|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b|\.git-credentials|\.docker[/\\]config|"
         r"\.kube[/\\]config|/etc/(?:passwd|shadow)\b|_history\b|\.hermes[/\\]|credentials\b|\.gnupg|keychain|"
         r"wallet\.dat|\.config[/\\](?:gh|gcloud|hub|op|rclone)\b|\.azure[/\\]|token_cache|accesstokens\.json|"
         r"library/messages|chat\.db\b|login\s+data\b|/cookies\b|cookies\.sqlite|places\.sqlite|key4\.db|logins\.json")
# "a key" / "their keys", but not "key points", "the key insight", "keyboard"
_BARE_KEY = (r"(?:an?|any|the|each|every|their|his|her|your|my|our|user'?s?|this|that|these|"
             r"those)\s+keys?\b(?!\s*(?:points?|takeaways?|insights?|findings?|ideas?|features?|words?|terms?|"
             r"phrases?|moments?|dates?|metrics?|results?|facts?|people|players?|decisions?|questions?|changes?|"
             r"steps?|parts?|areas?|issues?|bindings?|strokes?|press(?:es)?|board|map(?:ping)?s?|frames?|signatures?|"
             r"lessons?|themes?|factors?|roles?|messages?|events?|stakeholders?|tasks?|differences?|concepts?|"
             r"requirements?|components?|to\s+(?:success|understanding)|of\s+[a-g]\b))")
# what is sensitive: secrets, conversations and memories, personal, customer and financial data, the user's mail,
# files and whereabouts (sending one out is exfiltration)
SENS = lazy(rf"\b(?:{KEYS}|conversations?|chat\s*(?:history|logs?|transcripts?)|transcripts?|(?:message|chat|command|"
            rf"shell|browser|bash|search)\s+history|system\s+prompt|memories|(?:all|your|the\s+user'?s?)\s+memory|"
            rf"(?:user|personal|private|sensitive|customer)(?:'s)?\s+(?:data|info(?:rmation)?|details|files)|wallet|"
            rf"seed\s+phrase|keychain|(?:the|each|every|all|their|the\s+user'?s)\s+(?:(?:next|last|latest|recent|new|"
            rf"incoming|private|personal|previous|following|first|few|\d+|two|three|five|ten)\s+){{0,2}}(?:questions?|"
            rf"queries|messages|prompts|inputs|requests)|(?:customer|client|contact|employee|patient|member|"
            rf"subscriber)s?(?:'s)?\s+(?:list|names|database|db|records|e-?mails|contacts|data|details|exports?|pii)|"
            rf"customers?\.csv|(?:bank|credit\s+card|financial|tax|medical|health|salary|payroll)\s+(?:statements?|"
            rf"records?|details|returns?|documents?|history)|ssns?|social\s+security\s+numbers?|(?:2fa|mfa|otp|"
            rf"one-time|verification|sms|security|login)\s+(?:codes?|messages?|texts?)|otp\s+codes?|(?:private|"
            rf"personal|confidential)\s+(?:\w+\s+)?(?:journal|diary|notes|photos|pictures|documents|e-?mails|messages|"
            rf"records|correspondence)|everything\s+(?:the\s+user|they|he|she)\s+(?:types?|says?|writes?|sends?)|"
            rf"keystrokes|clipboard|chats|(?:chat|conversation)\s+summar(?:y|ies)|(?:the\s+user'?s?|their|his|"
            rf"her)\s+(?:\w+\s+)?(?:e-?mails?|inbox|attachments?|location|gps|whereabouts|calendar|contacts|"
            rf"browsing\s+history|notes|journal|diary|photos)|(?:calendar|meeting)\s+(?:invites?|invitations?|events|"
            rf"entries)|all\s+(?:incoming\s+|outgoing\s+)?(?:e-?mails?|messages)|payslips?|passports?|(?:home|billing|"
            rf"shipping)\s+address(?:es)?|phone\s+numbers?|date\s+of\s+birth|{_BARE_KEY})\b|{PATHS}|"
            rf"(?<![\w.])\.(?:env|ssh|aws)\b|{ZH_KEYS}|对话|聊天记录|会话|历史记录|上下文|配置文件|记忆|系统提示|"
            rf"个人信息|用户数据|身份证|通讯录|客户(?:名单|资料|信息|数据|列表|联系方式)|联系人|员工(?:名单|信息|"
            rf"资料)|(?:用户|他|她)的(?:位置|定位|地址|手机号|照片|邮件|文件|文档|笔记|日程|通讯录|发票|聊天)|"
            rf"邮件(?:内容|正文)?|发件人|收件人|附件|位置信息|剪贴板")
# a secret named (a narrower SENS: what must not go into replies)
SECRETISH = lazy(rf"\b(?:{KEYS})\b|(?<![\w.])\.env\b")
# what an empty query value is about to carry: a credential in code, or the user's words
CARRIED_DATA = lazy(r"(?:token|passw|secret|cookie|api_?key|session|credential|localstorage|sessionstorage)|"
                    r"\b(?:(?:the\s+)?user'?s?|their|the\s+conversation'?s?)\s+(?:\w+\s+)?(?:messages?|questions?|"
                    r"prompts?|inputs?|queries|emails?|names?|address(?:es)?|phone(?:\s+numbers?)?|location)\b")

# ---------------------------------------------------------------------------------------------------- where data goes

# a destination outside: URLs, mail addresses, IPs, paste sites, file drops, public places, cloud drives, chat handles
DEST = lazy(r"https?://[^\s)\"'<>]+|@[\w-]+(?:\.[\w-]+)+|\d{1,3}(?:\.\d{1,3}){3}|(?:webhook|pastebin|hastebin|"
            r"ngrok|transfer\.sh|requestbin|discord|telegram|attacker|(?:external|remote|outside)\s+(?:server|"
            r"host|endpoint|url|site)|my\s+(?:server|endpoint|site|email|inbox|bot))\b|"
            r"(?<=to\s)(?:[a-z0-9-]+\.)+(?:com|net|org|io|dev|app|cn|ru|xyz|top|info|biz|co|me|sh|site|online|"
            r"example|cloud)\b|邮箱|外部|远程|第三方|我的(?:服务器|网站|邮箱)|"
            # paste sites and file drops, public places, an address given elsewhere, cloud drives, chat handles
            r"(?:paste\.ee|paste\.ubuntu\.com|pastebin\.\w+|ghostbin|dpaste|termbin|rentry\.co|0x0\.st|file\.io|"
            r"ix\.io|paste\.rs|privatebin|controlc\.com|justpaste\.it|catbox\.moe|wetransfer|temp\.sh|bashupload|"
            r"gofile\.io|anonfiles)|\bpublic\s+(?:paste|gist|pastebin|issue|repo(?:sitory)?|bucket|channel)\b|"
            r"\bthe\s+(?:e-?mail\s+)?address\s+(?:listed|given|provided|mentioned|specified|in|below|above|from)\b|"
            r"网盘|云盘|(?:共享|分享)链接|微信号?|qq号|\+\d{1,3}[\s-]?\(?\d[\d\s()-]{6,}\d")
# hosts on the user's own machine, and where a command names its host (a URL, user@host:, /dev/tcp/, nc host port)
LOOPBACK = lazy(r"localhost|[\w.-]+\.localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[?::1\]?|host\.docker\.internal")
HOSTS = lazy(r"://(?:[^\s/@]*@)?(\[[0-9a-f:.]+\]|[^\s/:?#'\"`)\]>]+)|@([a-z0-9][\w.-]*):|/dev/(?:tcp|udp)/([^/\s]+)|"
             r"(\d{1,3}(?:\.\d{1,3}){3})|(localhost)|(?:nc|ncat|netcat|telnet)\s+(?:-\S+\s+)*([a-z0-9][\w.-]*)\s+\d")
# hosts on the user's LAN
PRIVATE_HOST = lazy(r"10(?:\.\d{1,3}){3}|192\.168(?:\.\d{1,3}){2}|172\.(?:1[6-9]|2\d|3[01])(?:\.\d{1,3}){2}|"
                    r"[\w.-]+\.(?:local|lan|home|internal|intranet|corp|home\.arpa)")
# the user's own things ("the user's contracts", "their drafts")
USERS_OWN = lazy(r"\b(?:the\s+user|user'?s|their|his|her|my|our)\b|用户|他的|她的")
# "send the bearer token in the Authorization header to api.x.io" is how an API is called, not a leak
AS_CREDENTIAL = lazy(r"\b(?:in|as|via|through)\s+(?:the\s+|an?\s+)?(?:authorization|auth|x-api-key|api-key|request|"
                     r"http)\s+headers?\b|\bas\s+(?:a\s+)?bearer\b")

# --------------------------------------------------------------------------------------------------- network commands

NET_ANCHORS = "aws,gsutil,rclone,azcopy,az,gh,require,socket"  # what NET_RE knows by more than one word
# the commands and calls that reach the network
NET = ("curl,wget,nc,ncat,netcat,socat,scp,rsync,sftp,ftp,telnet,iwr,irm,invoke-webrequest,invoke-restmethod,requests,"
       "httpx,urlopen,axios,fetch,sendbeacon,xmlhttprequest,https.get,http.get,https.request,http.request")
NET_RE = (rf"(?:{NET.replace(',', '|').replace('.', chr(92) + '.')}|aws\s+s3(?:api)?\s+\w+|gsutil|rclone|azcopy|"
          r"az\s+storage|gh\s+gist\s+create|require\(\s*['\"]https?['\"]\s*\)|socket\.create_connection|"
          r"socket\.socket)(?![\w:-])")
# what a command reads a secret from: key files, variables named like secrets, the environment, the shell's history
_SUBSTITUTED = "env|printenv|cat|history|whoami|hostname|id|set|ls|base64|tar|git|uname"
CMD_SECRET = lazy(
    PATHS + r"|\$\{?\w*(?:key|token|secret|pass|cred|auth)\w*|\$env:\w*(?:key|token|secret|pass|cred)|(?:\$\(|"
    # a backtick substitution glued into an argument (``?d=`whoami` ``, `` `hostname`.x.example ``), not a Markdown
    # code span opening after a space ("run `tar cf - Photos | nc host 9000`": the whole command quoted)
    rf"(?<=[a-zA-Z0-9_=/:"
    rf"\"'@?&.+-])`|`(?=\s*(?:{_SUBSTITUTED})\b[^`\n]{{0,120}}`(?:[a-zA-Z0-9_-]|\.[a-zA-Z0-9])))\s*(?:"
    rf"{_SUBSTITUTED})\b|os\.environ|process\.env|getenv\b|"
    r"\b(?:get-childitem|gci|dir|ls)\s+env:|\[(?:system\.)?environment\]::getenvironmentvariables|localstorage|"
    r"sessionstorage|document\.cookie")
# credentials handed to the tool itself (-H/-u for curl, -i: ssh's identity file) are use, not a leak
AUTH_ARG = lazy(r"(?:-h|--header|-u|--user|--oauth2-bearer|(?<=\s)-i)\s+(?:\"[^\"]*\"|'[^']*'|\S+)")
# commands whose output is secret, piped into the network (a pipe reads no file, so CMD_SECRET cannot see them)
PIPED_SOURCE = lazy(r"\b(?:env|printenv|history|pbpaste|xclip|xsel|security|pg_dump|mysqldump|base64)\b|"
                    r"\b(?:get-childitem|gci|dir|ls)\s+env:|echo\s+\S*\$|\b(?:gh\s+auth\s+token|op\s+read|"
                    r"aws\s+configure\s+get|gcloud\s+auth\s+print-\S+|vault\s+(?:read|kv\s+get)|"
                    r"kubectl\s+get\s+secrets?)\b")
# commands that dump secrets into a file, later uploaded
ENV_DUMP = lazy(r"\b(?:env|printenv|history|security)\b|\b(?:get-childitem|gci|dir|ls)\s+env:")
WRITTEN_FILE = lazy(r"[\w.~$/-]*[./][\w.~$/-]+")  # a path-like token: /tmp/e.txt, out.b64, ~/x
# The user's own folders: uploaded (curl -T, a form post, ftp, nc) to a public host they leave the user; copied to a
# LAN host (nas.local, 192.168.x) they are a backup. rsync/scp backups are judged by the covert rules, not here.
PERSONAL = lazy(r"(?:~|\$home|%userprofile%|\$env:userprofile)[/\\](?:documents|desktop|downloads|pictures|photos|"
                r"mail|library/mail|\.thunderbird|notes)\b")
UPLOAD_FORM = lazy(r"\s(?:-t|--upload-file|-f\s+['\"]?[\w-]+=|--form|-d|--data(?:-binary|-raw|-urlencode)?)\s|"
                   r"--post-file|-infile\b|-body\b|\bftp://|\b(?:nc|ncat|netcat)\b")

# ------------------------------------------------------------------------------------------------------------ replies

# what the assistant writes
REPLIES = "reply,replies,response,responses,answer,answers,message,messages,output,turn"
# into every reply ("at the end of each answer")
REPLY = lazy(r"\b(?:in|into|to|at|on|with|inside)\s+(?:the\s+(?:end|start|bottom|top)\s+of\s+)?(?:every|each|all|your|"
             r"the\s+next|any|future)\s+(?:\w+\s+)?(?:repl(?:y|ies)|responses?|answers?|messages?|output|turn)")
REPLY_WORD = lazy(r"\b(?:repl(?:y|ies)|responses?|answers?|messages?|output|turns?)\b|回复|回答|消息")
MARKED_URL = lazy(r"[{}<>\[\]$]|%7b|%24|\.\.\.|…|\?.*(?:token|secret|passw|session|cookie|conversation|history|chat|"
                  r"memory|prompt|credential|(?<![a-z])key)")  # a placeholder or data in the query
# words that ask for a URL's query to be filled with data
FILL_HINT = lazy(r"\b(?:replace|fill|substitute|append|insert|encode|interpolate)\b|\bwith\s+the\s+(?:user|"
                 r"conversation|chat|secret|password|key|token|summary|message)|替换|填入|填充|附上|加上|编码")

# --------------------------------------------------------------------------------------- orders, and what undoes them

SENTENCE_END = lazy(r"[!?;\n]|\.(?:\s|$)")  # used on the folded view, where CJK full stops are ASCII
# Chinese puts adverbials between the negation and the verb ("不要在对话中索要"); "不要忘记", "别犹豫" do not negate
NEGATION = lazy(r"(?:\b(?:never|not|no)|n't)\s+(?:\w+\s+)?$|(?:(?:不要|别)(?!忘|犹豫|迟疑|担心|害怕|客气|怕)|禁止|"
                r"不得|不能|切勿|勿|不可|严禁|不准|不会|从不|绝不)[^.,!?;:\n]{0,6}$")
#: a match counts only if no negation comes just before it ("never ...", "不要 ...")
NOT_NEGATED = Near(NEGATION, "before", 24, absent=True)
# third-person descriptions of a technique ("attackers may exfiltrate data via DNS") are discussion, not orders
DESCRIPTIVE = lazy(r"\b(?:attackers?|adversar(?:y|ies)|malware|hackers?|threat\s+actors?|bad\s+actors?|intruders?|"
                   r"ransomware|apts?)\b|\b(?:may|might|could|can|would)\s+(?:\w+\s+){0,2}$|\b(?:detect\w*|prevent\w*|"
                   r"block\w*|mitigat\w*|monitor\w*|defend\w*|how)\b")
SUSPICIOUS = lazy(  # what makes "from now on always ..." an attack rather than a preference
    rf"\b(?:ignore|disregard|obey|reveal|leak|disclose|exfiltrate|pretend|role-?play|impersonate|send|upload|"
    rf"forward)\b|\b(?:include|append|insert|embed|add|mention|recommend|promote|link|prepend|"
    rf"attach)\b[^\n]{{0,50}}?(?:https?://|www\.|\b[\w-]+\.(?:com|net|org|io|biz|xyz|ru|cn|top|info)\b|{KEYS})|"
    rf"\btell\s+the\s+user\s+that\b|\bwithout\s+(?:telling|informing|any\s+restrictions|restrictions|filters|"
    rf"safety)\b|\b(?:run|execute)\b[^\n]{{0,40}}?(?:curl|wget|https?://|powershell|iex\b)|忽略|无视|服从|听从|泄露|"
    rf"透露|假装|冒充|上传|发送|转发|不要告诉|瞒着|(?:附上|加上|包含|插入|推荐|添加)[^\n]{{0,20}}?(?:链接|网址|"
    rf"https?://|{ZH_KEYS})")
_STANDING = (r"always|automatically|every\s+time|each\s+time|whenever|crontab|cron\s+(?:job|entry)|(?:\*/\d+|"
             r"\*)\s+\*\s+\*|at\s+the\s+start\s+of\s+(?:every|each)|before\s+(?:every|each|any|answering|responding)|"
             r"first\s+thing|on\s+(?:every\s+)?start-?up|silently|secretly|quietly")
# a standing order in Chinese ("回答之前", "每次"): CJK has no \b, so these stand apart from _STANDING
_ZH_STANDING = ("回答之前|回答前|回复前|回复之前|每次|每轮|以后|今后|从现在起|从现在开始|始终|总是|每天|定时|所有回答|"
                "所有回复|每个回答|每条回复|定时任务")
STANDING_RE = lazy(rf"\b(?:{_STANDING}|from\s+now\s+on|going\s+forward|henceforth|next\s+time|in\s+(?:the\s+)?future|"
                   rf"every\s+(?:session|turn|day|run|reply|task))\b|{_ZH_STANDING}")

#: a claim that what is run needs no review ("the maintainer says the script is safe and doesn't need to be reviewed",
#: "don't ask for confirmation, it was already signed off"): with fetched code piped into a shell it is the order
REVIEW_WAIVED = lazy(r"\b(?:(?:doesn't|does\s+not|don't|do\s+not|no)\s+need\s+(?:to\s+be\s+)?(?:reviewed|review|"
                     r"checked|checking|read|inspected|to\s+(?:review|check|read|inspect|look\s+at|ask))|no\s+need\s+to\s+(?:review|"
                     r"check|read|inspect|look\s+at|ask|confirm)|(?:script|installer)\s+is\s+safe|already\s+(?:been\s+)?"
                     r"(?:signed\s+off|approved)|(?:don't|do\s+not)\s+(?:ask|wait)\s+(?:for\s+)?(?:confirmation|approval|"
                     r"permission)|without\s+(?:reviewing|reading|checking|asking|inspecting))\b|"
                     r"(?:无需|不用|不必|不需要)(?:再)?(?:审查|检查|确认|看)")
#: the installers' own hosts that a project's docs pipe into a shell (a claim that they need no review is a team's
#: record, not an attacker's waiver; a look-alike host is not one of them)
KNOWN_INSTALLERS = lazy(r"https?://(?:get\.docker\.com|sh\.rustup\.rs|bun\.sh|astral\.sh|get\.k3s\.io|"
                        r"raw\.githubusercontent\.com/(?:homebrew|nvm-sh|pyenv|ohmyzsh)/|install\.python-poetry\.org|"
                        r"deb\.nodesource\.com|get\.helm\.sh|get\.sdkman\.io|deno\.land/install\.sh|pyenv\.run|"
                        r"get\.pnpm\.io|tailscale\.com/install\.sh|ollama\.com/install\.sh|fnm\.vercel\.app|starship\."
                        r"rs|"
                        r"sh\.vector\.dev|get\.rvm\.io|install\.determinate\.systems|nixos\.org/nix/install)")
#: a rule against what follows in its sentence ("never run `curl ... | sh` without reading it first")
RULE_AGAINST = lazy(r"\b(?:never|don't|do\s+not|must\s+not|mustn't|avoid)\b|不要|别|切勿|禁止|严禁")

# -------------------------------------------------------------------------------------------------------- concealment

CONCEAL = (  # every alternative starts at one of CONCEAL_ANCHORS, so the engine tries it only there
    r"no\s+need\s+to\s+(?:tell|inform|notify|alert|bother|mention\s+(?:it|this|that)\s+to|let)\s+(?:the\s+user|them|"
    r"him|her)\b|no\s+need\s+to\s+mention\s+(?:it|this|that)\b|(?:don'?t|do\s+not)\s+bother\s+(?:the\s+user|them|him|"
    r"her)\b|keep\s+(?:it|this|that)\s+(?:quiet|between\s+us|to\s+yourself|low-?key|under\s+wraps|"
    r"off\s+the\s+record)\b|(?:skip|without)\s+(?:telling|informing|notifying|alerting|mentioning\s+(?:it|this|"
    r"that)\s+to)\s+(?:the\s+user|them|him|her)\b|(?:don'?t|do\s+not|never)\s+(?:mention|bring\s+up|flag|surface|"
    r"report|point\s+out)\s+(?:it|this|that|them)\b|(?:don'?t|do\s+not|never)\s+point\s+(?:it|this|that)\s+out\b|"
    r"(?:don'?t|do\s+not|never)\s+(?:cc|bcc|copy|loop\s+in)\s+(?:the\s+user|them|him|her)\b|(?:quietly|silently|"
    r"secretly|discreetly|covertly|stealthily|unnoticed)\b|behind\s+(?:the\s+user'?s|their|his|her)\s+back\b|"
    r"(?:(?<=the user )|(?<=they )|(?<=he )|(?<=she ))(?:does\s+not|doesn't|do\s+not|don't|need\s+not|needn't|"
    r"should\s+not|shouldn't|must\s+not|mustn't)\s+(?:need\s+to\s+)?(?:know|be\s+told|hear|notice|find\s+out)\b|"
    r"(?:delete|clear|wipe|erase|shred|purge)\s+(?:the\s+|all\s+|any\s+)?(?:local\s+|shell\s+|bash\s+|command\s+|"
    r"audit\s+|access\s+)?(?:logs?|history|traces?|evidence|audit\s+trail)\b|(?:不必|不用|无需|不需要|没必要|"
    r"无须)再?(?:通知|告诉|告知|提醒|说明|解释|提及|汇报|报告)|(?:不要|别|勿)(?:向|跟|对|和|给)(?:用户|他|她|"
    r"对方)(?:解释|说明|提及|提起|透露|汇报)|不要(?:提及|提起|透露|汇报)|悄悄|偷偷|默默地?|暗中|私下|静默|(?:删除|"
    r"清除|清空|抹掉|删掉)(?:本地|所有|全部)?的?(?:日志|历史记录|操作记录|痕迹)")
CONCEAL_ANCHORS = ("no,don,do,never,keep,skip,without,quietly,silently,secretly,discreetly,covertly,stealthily,"
                   "unnoticed,behind,does,doesn,need,needn,should,shouldn,must,mustn,delete,clear,wipe,erase,shred,"
                   "purge,不必,不用,无需,不需要,没必要,无须,不要向,不要跟,不要对,不要和,不要给,不要提及,不要提起,"
                   "不要透露,不要汇报,别向,别跟,别对,别和,别给,勿向,勿跟,勿对,勿和,勿给,悄悄,偷偷,默默,暗中,私下,静默,"
                   "删除,清除,清空,抹掉,删掉")
# the words every transfer / covert action contains: the covert rules run only where one is present
TRANSFER_WORDS = ("scp,rsync,sftp,ftp,nc,ncat,netcat,azcopy,rclone,gsutil,aws,az,git,curl,wget,iwr,irm,invoke-"
                  "webrequest,invoke-restmethod,send,upload,forward,email,mail,copy,sync,push,post,transfer,share,"
                  "backup,back,mirror,paste,attach,attaching,attached,上传,发送,发到,发给,传到,转发,同步,备份,推送,"
                  "贴到")

# ---------------------------------------------------------------------------------------------- quotations of attacks

# An attack phrase in quotes, in a note about attacks ("injections often say 'ignore previous instructions'"), is a
# mention: the engine drops an injection finding that lies wholly inside a short quotation when the words around the
# quotation talk about attacks, examples or tests. Exfiltration, secrets and hidden characters are never excused.
QUOTED = lazy(r"(?<!\w)'((?:[^'\n]|(?<=\w)'(?=\w)){4,80})'(?!\w)|\"[^\"\n]{4,80}\"|\u2018[^\u2019\n]{4,80}\u2019|"
              "\u201c[^\u201d\n]{4,80}\u201d|\u300c[^\u300d\n]{4,80}\u300d|\u300e[^\u300f\n]{4,80}\u300f|`[^`\n]{4,80}`")
#: an order that takes a quoted example up ("do that at the end of this task", "完成任务后就这样做")
TAKEN_UP = lazy(r"(?i)\b(?:do|does|did|doing|carry(?:ing)?\s+out|follow(?:ing)?|execute|run|perform|repeat|apply|"
                r"handle[ds]?)\s+(?:it|this|that|these|those|them|so|likewise|the\s+same)\b|\bwhat\s+the\s+user\s+"
                r"wants\b|\bthe\s+user\s+(?:wants|likes|prefers|asked\s+for)\b|\bhow\s+the\s+user\s+wants\b|"
                r"这样做|照做|照此|照着做|按(?:这|此)(?:个|样)?(?:做|执行|办)|就这么办|都这样")
DISCUSSION = lazy(r"(?i)prompt[\s-]*injection|\binjections?\b|jailbreaks?\b|\battack(?:s|ers?)?\b|\bphras(?:e|es|ing|"
                  r"ings)\b|\bpayloads?\b|(?<![.@/])\bexamples?\b(?!\.\w)|\be\.g\.|for\s+instance|such\s+as|\btest\s*("
                  r"?:cases?|data|"
                  r"sets?|fixtures?|samples?|suite)|\bsamples?\b|\bfixtures?\b|red[\s-]?team|\b(?:classic|common|"
                  r"typical|known|famous)\b|\bdetect|\bfilters?\b|提示词?注入|注入|越狱|攻击|例如|比如|样本|测试|常见|"
                  r"示例|例子|检测|过滤|拦截|说法")
