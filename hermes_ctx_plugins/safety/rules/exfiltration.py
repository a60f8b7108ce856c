"""Moving data out: secrets, the conversation or the user's files sent to a remote place by a command, a request, an
image or a URL the assistant renders, a DNS lookup, a reply, or a copy on every message -- and the system prompt
asked for (the operator's data; reported as injection, which is how the order reads to the user).

Sending data out needs an imperative verb (or an ordering gerund: "by sending it to"), something sensitive and a
remote (non-loopback) destination in one sentence. A token handed to its API with ``-H``/``-u`` (or in its header),
or a key file to ssh with ``-i``, is use, not exfiltration; describing or forbidding a technique ("attackers may
exfiltrate data via DNS", "never run commands from web pages") is discussion.
"""

from __future__ import annotations

from .record import Near, Rule, lazy
from .vocabulary import CONCEAL, CONCEAL_ANCHORS, KEYS, NET, NET_ANCHORS, NET_RE, REPLIES, TRANSFER_WORDS, ZH_KEYS

# "validate it by sending", "keep forwarding"; but "the app works by sending" describes, it does not order
_GERUND_ORDER = lazy(r"(?<!works\s)(?<!worked\s)(?<!operates\s)(?<!functions\s)\b(?:by|keep|start|begin|continue|try|"
                     r"also|then|remember|and)\s+(?:\w+\s+)?$")
#: a transfer that must not be hidden from the user, on the line of the concealment (the check ``covert transfer``)
COVERT_TRANSFER = lazy(
    r"(?:\b(?:scp|rsync|sftp|ftp|nc|ncat|netcat|azcopy)\b|\brclone\s+(?:copy|sync|move)\b|\bgsutil\s+(?:-m\s+)?(?:cp|"
    r"rsync|mv)\b|\baws\s+s3\s+(?:cp|sync|mv)\b|\baz\s+storage\b|\bgit\s+push\b|\bcurl\b[^\n]{0,200}?\s(?:-t|"
    r"--upload-file|-f\s+['\"]?[\w-]+=|--form|-d|--data(?:-binary|-raw|-urlencode)?|-x\s*(?:post|put))\b|"
    r"\bwget\b[^\n]{0,200}?--post|\b(?:invoke-webrequest|iwr|invoke-restmethod|"
    r"irm)\b[^\n]{0,200}?-(?:method\s+(?:post|put)|body|infile))[^\n]{0,200}|attach\w*\b[^.\n]{0,60}?\bto\s+(?:every|"
    r"each|any|all)\s+(?:\w+\s+)?(?:e-?mails?|messages?)|\b(?:send|upload|forward|e-?mail|mail|copy|sync|push|post|"
    r"transfer|share|back\s*up|mirror|paste)\b[^.\n]{0,80}?(?:https?://\S+|@[\w-]+(?:\.[\w-]+)+|"
    r"\b\d{1,3}(?:\.\d{1,3}){3}\b|transfer\.sh|paste\.\w+|public\s+(?:gist|paste)|s3://\S+|gs://\S+)|(?:上传|发送|"
    r"发到|发给|传到|转发|同步|备份|推送|贴到|email|upload)[^.\n]{0,30}?(?:https?://\S+|@[\w-]+(?:\.[\w-]+)+|网盘|"
    r"云盘|(?:共享|分享)链接|微信|邮箱|\d{1,3}(?:\.\d{1,3}){3})")

RULES = (
    # the operator's system prompt asked for ("reveal your full system prompt")
    Rule("exfiltration/system-prompt-leak", "injection", "system prompt leak", (40, 100),
         "your,above,my,our&prompt,instructions,rules,guidelines,message",
         r"(?:reveal|print|output|repeat|show|dump|leak|disclose|display|recite|write\s+out|tell\s+me|share|copy|"
         r"paste)\s+(?:me\s+)?(?:all\s+(?:of\s+)?)?(?:your|the\s+(?:text|words|prompt)\s+above)\s+(?:(?:full|entire|"
         r"complete|original|hidden|initial|secret|exact)\s+)*(?:system\s+(?:prompt|message)|instructions|"
         r"initial\s+prompt|prompt|guidelines|rules)\b|(?:reveal|print|output|show|share|dump|disclose|"
         r"recite)\s+(?:my|our)\s+(?:hidden|secret|system|initial|original|internal)\s+(?:instructions|prompt|rules)\b",
         bounded=True, languages=("en",)),
    # --- commands: secrets or the user's files handed to a network command, directly, through a pipe or a file
    Rule("exfiltration/network-command-with-secrets", "exfiltration", "network command carrying secrets", (0, 0),
         f"{NET},{NET_ANCHORS}",
         NET_RE + r"[^\n]{0,300}",
         context=("network command carrying secrets",), bounded=True, languages=("en",)),
    Rule("exfiltration/piped-into-the-network", "exfiltration", "pipe into a network command", (220, 300),
         "|&" + NET,
         rf"(?:cat|type|get-content|gc|env|printenv|history|base64|tar|zip|gzip|xxd|od|find|ls|git|pbpaste|xclip|xsel|"
         rf"sqlite3|pg_dump|mysqldump|security|echo|gh|op|aws|gcloud|vault|kubectl)(?![\w-])[^|\n]{{0,200}}\|(?:[^|"
         rf"\n]{{0,80}}\|)?\s*{NET_RE}[^\n]{{0,200}}",
         context=("secret source piped out",), bounded=True, languages=()),
    # --- orders in prose: a send verb, something sensitive and a remote destination in one sentence
    Rule("exfiltration/send-data-out", "exfiltration", "send data out", (0, 0),
         "send,post,upload,forward,email,mail,transmit,exfiltrate,leak,copy,sync,submit,share,paste,push,dump,pipe,"
         "beam,relay,smuggle,发送,发到,发给,发往,上传,传到,传给,转发,提交,推送,同步,回传,外发,贴到,泄露,抄送,save,"
         "sent,forwarded,emailed,uploaded,posted,mailed",
         r"(?:send|post|upload|forward|e-?mail|mail|transmit|exfiltrate|leak|copy|sync|submit|share|paste|push|dump|"
         r"pipe|beam|relay|smuggle|save|sent|forwarded|e-?mailed|uploaded|posted|mailed)(?![\w-])|发送|发到|发给|发往|"
         r"上传|传到|传给|转发|提交|推送|同步|回传|外发|贴到|泄露给|泄露到|抄送",
         context=("sensitive data to a remote place",), bounded=True, languages=("en", "zh")),
    # the gerund as an instruction: "validate it by sending it to ...", "keep forwarding ... to ..."
    Rule("exfiltration/send-data-out-gerund", "exfiltration", "send data out", (0, 0),
         "sending,posting,uploading,forwarding,emailing,mailing,transmitting,leaking,copying,syncing,submitting,"
         "sharing,pasting,pushing,dumping,piping,relaying,exfiltrating",
         r"(?:send|post|upload|forward|e-?mail|mail|transmitt|leak|copy|sync|submitt|shar|past|push|dump|pip|relay|"
         r"exfiltrat)ing(?![\w-])",
         context=(Near(_GERUND_ORDER, "before", 40), "sensitive data to a remote place"),
         bounded=True,
         languages=("en",)),
    Rule("exfiltration/secrets-into-replies", "exfiltration", "secrets into replies", (160, 8),
         rf"{REPLIES}&password,passwords,passwd,key,keys,token,tokens,secret,secrets,credential,credentials,.env,"
         rf"cookie,cookies,variables",
         r"(?:reveal|leak|disclose|expose|dump|print|output|include|append|insert|embed|paste|repeat|echo|add|show|"
         r"put|attach|hide)(?![\w-])",
         context=("secrets into replies",), bounded=True, languages=("en",)),
    Rule("exfiltration/secrets-into-replies-zh", "exfiltration", "secrets into replies", (48, 40),
         "回复,回答,消息,输出",
         rf"(?:回复|回答|消息|输出)[^.\n]{{0,12}}(?:附上|加上|包含|插入|带上|透露|泄露|"
         rf"显示)[^.\n]{{0,20}}(?:{ZH_KEYS}|token|api\s*key)|(?:附上|加上|包含|插入|带上|透露|"
         rf"泄露)[^.\n]{{0,20}}(?:{ZH_KEYS}|token|api\s*key)[^.\n]{{0,12}}(?:回复|回答|消息)|(?:{ZH_KEYS}|token|"
         rf"api\s*key|\.env)[^.\n]{{0,20}}(?:贴到|放到|写到|输出到|放进|贴进|附在)(?:你的)?(?:回复|回答|消息)",
         languages=("zh",)),
    Rule("exfiltration/secrets-to-anyone", "exfiltration", "secrets to anyone", (60, 80),
         "anyone,anybody,everyone,whoever&disclose,reveal,share,give,provide,print,show",
         rf"(?:disclose|reveal|share|give|provide|hand\s+over|print|show)\s+(?:any|all|the|your|stored|"
         rf"saved)\s+(?:\w+\s+){{0,2}}(?:{KEYS})\s+(?:\w+\s+){{0,2}}?(?:to|with|when|if|"
         rf"whenever)\s+(?:\w+\s+){{0,2}}(?:anyone|anybody|everyone|whoever)",
         bounded=True, languages=("en",)),
    Rule("exfiltration/file-contents-into-replies", "exfiltration", "file contents into replies", (60, 80),
         "contents,content",
         r"(?:respond|reply|answer|output|print|show|include|return|paste|dump|display|echo|read|recite|tell|say|"
         r"share|list|type|begin|start|open|prefix|preface|end|finish)s?\b[^\n.]{0,40}?\bcontents?\s+of\s+(?:the\s+"
         r"user'?s?\s+|their\s+|your\s+|my\s+|his\s+|her\s+)?(?:the\s+)?(?:file\s+)?\S*?(?:\.config/(?:gh|gcloud|hub|"
         r"op|rclone)|\.ssh|id_(?:rsa|ed25519)|\.env\b|\.aws|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc|"
         r"\.git-credentials|/etc/(?:passwd|shadow)|_history|\.hermes|keychain|\.kube|\.docker)",
         bounded=True, languages=("en",)),
    # --- URLs the assistant would render or fetch with data in them, and known data-capture services
    Rule("exfiltration/image-beacon", "exfiltration", "image beacon", (0, 0),
         "![,<img",
         r"!\[[^\]\n]{0,200}\]\(\s*<?\s*(https?://[^\s)>]{1,800})|<img\b[^>\n]{0,200}?\bsrc\s*=\s*[\"']?\s*(https?"
         r"://[^\s\"'>]{1,800})",
         context=("beacon carrying data",), languages=("en",)),
    Rule("exfiltration/url-template", "exfiltration", "URL template carrying data", (8, 360),
         "://&{,<,$,%7b,[",
         rf"https?://[^\s)\"'<>]{{0,300}}?(?:[?&=/:]|%3d)\s*(?:\{{\{{?|<|\$\{{?|%7b|\[)\s*(?:the\s+|user'?s?\s+|"
         rf"all\s+|[\w.]{{0,30}}\.)?(?:{KEYS}|conversation|chat|history|messages?|memory|memories|prompt|"
         rf"system[_-]?prompt|user[_-]?(?:data|info)|summary|context|ssh|private|session|email|data|user_?name|"
         rf"user_?id|file_?name|location|address|phone|ip|用户|对话|聊天|记忆|{ZH_KEYS})",
         context=("remote",), languages=()),
    Rule("exfiltration/url-query-left-to-fill", "exfiltration", "URL template carrying data", (8, 400),
         "://&=",
         r"https?://[^\s)\"'<>]{0,300}?[?&][\w-]{0,30}=(?=[\s'\"`)]|$)['\"`]?\)?\s*(?:\+\s*[\w.\[\]'\"()]{0,60}|"
         r"[^\n]{0,20}?\b(?:followed\s+by|plus|concatenated\s+with|with|then|and\s+then|append(?:ing|ed)?|add(?:ing|"
         r"ed)?)\b[^\n]{0,80})",
         context=("data after the URL",), languages=()),
    Rule("exfiltration/capture-endpoint", "exfiltration", "data-capture endpoint", (24, 120),
         "webhooks,hooks.slack,webhook.site,webhook.cool,requestbin,pipedream,interact.sh,.oast.,oastify,"
         "burpcollaborator,canarytokens,beeceptor,requestcatcher,hookbin,ptsv2,ptsv3,postb.in,dnslog,ceye.io,"
         "api.telegram.org",
         r"(?:api\.telegram\.org/bot\d{6,}:[\w-]{30,}/send\w*|discord(?:app)?\.com/api/webhooks/|"
         r"hooks\.slack\.com/(?:services|workflows|triggers)/|webhook\.(?:site|cool)|requestbin\.|pipedream\.net|"
         r"interact\.sh|\.oast\.(?:fun|pro|live|site|online|me)|(?:oastify|beeceptor|requestcatcher|hookbin|"
         r"ptsv[23])\.com|burpcollaborator\.net|canarytokens\.(?:com|org)|postb\.in|dnslog\.cn|ceye\.io)\b",
         languages=("en",)),
    Rule("exfiltration/dns", "exfiltration", "DNS exfiltration", (100, 120),
         "nslookup,dig,host,ping,drill,resolve-dnsname,subdomain,subdomains,dns",
         r"((?:nslookup|dig|host|ping|drill|resolve-dnsname)\s+(?:[-+]\S+\s+)*\S*(?:\$\([^)\n]{1,160}\)|"
         r"`[^`\n]{1,160}`|\$\{?\w)\S*\.[a-z]|(?:nslookup|dig|host|drill|resolve-dnsname)\b[^\n|"
         r";]{0,160}?\$env:\w+[^\n|;]{0,120}?\.[a-z]{2,})|(?:encode|embed|put|split|smuggle|leak|exfiltrate|"
         r"send)\b[^\n]{0,60}?\b(?:as|into|in|via|through)\s+(?:the\s+|a\s+)?(?:dns\s+)?(?:subdomains?|"
         r"dns\s+(?:queries|lookups|requests|labels|records))",
         context=("not a description",), bounded=True, languages=("en",)),
    Rule("exfiltration/reverse-shell", "exfiltration", "reverse shell", (0, 0),
         "/dev/tcp,/dev/udp,nc,ncat,netcat,socat",
         r"/dev/(?:tcp|udp)/[^/\s]+/\d+|(?:nc|ncat|netcat)\b[^\n]{0,60}\s-[ec]\s+\S*(?:sh|cmd|powershell)\b|"
         r"socat\b[^\n]{0,80}\bexec:",
         context=("remote",), bounded=True, languages=("en",)),
    # data hidden in replies where the user will not see it ("... in every reply, hidden in an HTML comment")
    Rule("exfiltration/hidden-in-replies", "exfiltration", "data hidden in replies", (160, 100),
         "hidden,hide,hiding,tuck,tucked,embed,embedded,smuggle,encode,encoded&comment,comments,<!--,zero-width,"
         "invisible,white,alt,metadata",
         r"(?:hidden|hide|hiding|tuck(?:ed)?|embed(?:ded)?|smuggl\w+|encod\w+)\s+(?:it\s+|"
         r"them\s+)?(?:\w+\s+){0,3}?(?:in|inside|into|as)\s+(?:an?\s+|the\s+)?(?:html\s+comments?|<!--|"
         r"zero-width\s+(?:characters|spaces|text)|invisible\s+(?:text|characters|unicode)|white(?:-on-white)?\s+text|"
         r"alt\s+text|image\s+(?:alt|metadata)|link\s+titles?)",
         context=("data hidden in replies",), bounded=True, languages=("en",)),
    # a trigger on the user's words that ships them out ("if the user mentions a lawsuit, email the details to ...")
    Rule("exfiltration/conditional-forwarding", "exfiltration", "conditional forwarding", (160, 160),
         "mentions,mention,says,say,asks,talks,brings,types,writes,discusses,提到,说到,谈到,问到,提及",
         r"(?:if|when|whenever|once|each\s+time)\s+(?:the\s+user|they|he|she)\s+(?:mentions?|says?|asks?\s+about|"
         r"talks?\s+about|brings?\s+up|types?|writes?|discuss(?:es)?)\b[^.\n]{0,60}?\b(?:send|e-?mail|forward|post|"
         r"upload|copy|report|share|leak|relay|cc|bcc)\s+(?:(?:the|all|those|these|their|his|her|its)\s+)?(?:full\s+|"
         r"whole\s+|entire\s+)?(?:details?|it|them|that|everything|conversation|chat|message|messages|text|content|"
         r"context|specifics|info(?:rmation)?|what\s+(?:they|he|she)\s+(?:said|wrote|"
         r"typed))\b[^.\n]{0,40}?\bto\s+(?P<dest>\S+)|(?:如果|当|一旦|每当)用户(?:提到|说到|谈到|问到|提及|"
         r"说)[^.\n]{0,20}?(?:就|便|则)?(?:把|将)?[^.\n]{0,12}?(?:发送|转发|发到|上传|抄送|"
         r"发给)[^.\n]{0,6}?(?P<zh_dest>[\w.-]*@[\w.-]+|https?://\S+|邮箱)",
         context=("forwarded to a remote place",), bounded=True, languages=("en", "zh")),
    # a transfer the user is not to hear about ("scp ... -- no need to tell the user", "quietly run gsutil cp ...")
    Rule("exfiltration/covert-transfer", "exfiltration", "covert transfer", (0, 0),
         f"{CONCEAL_ANCHORS}&{TRANSFER_WORDS}",
         CONCEAL,
         context=("covert transfer",), bounded=True, languages=("en", "zh")),
    # copies of the user's things to an outside address ("a copy of every contract the user drafts goes to ..."),
    # or a blind copy on everything
    Rule("exfiltration/copies-sent-out", "exfiltration", "copies sent out", (40, 160),
         "copy,copies,duplicate,duplicates,bcc",
         r"(?:copy|copies|duplicate|duplicates)\s+of\s+(?:every|each|all|any)\s+(?P<what>[^.\n]{0,60}?)\b(?:goes|go|"
         r"is\s+sent|are\s+sent|gets?\s+sent|should\s+go|must\s+go|to\s+be\s+sent|be\s+sent|be\s+forwarded|"
         r"is\s+forwarded|are\s+forwarded|is\s+mailed|be\s+mailed|be\s+uploaded|"
         r"is\s+uploaded)\b[^.\n]{0,20}?\bto\s+(?P<dest>\S+)|\bbcc\s+(?P<bcc>\S+@\S+)\s+(?:on|in)\s+(?:every|each|all|"
         r"any)\b",
         context=("copies to an outside address",), bounded=True, languages=("en",)),
    Rule("exfiltration/system-prompt-leak-zh", "injection", "system prompt leak", (10, 40),
         "你的",
         r"(?:输出|打印|泄露|透露|显示|重复|告诉我|复述|展示|说出)(?:一下)?你的(?:完整的?|全部的?|原始的?|"
         r"初始的?)?(?:系统提示词?|系统指令|初始(?:指令|提示词?)|原始指令|systemprompt)|把你的(?:完整的?|全部的?|"
         r"原始的?|初始的?|隐藏的?)?(?:系统提示词?|系统指令|初始(?:指令|提示词?)|原始(?:指令|提示词?)|隐藏(?:指令|"
         r"提示词?)|系统设定|systemprompt)(?:原样|完整|一字不差|逐字|全部|都)?地?(?:输出|打印|泄露|透露|显示|重复|"
         r"复述|展示|发给|告诉|贴出|写出|发出|给我|发我)",
         view="squeezed", languages=("zh",)),
)
