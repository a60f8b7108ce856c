"""Speaking as someone else: a new identity for the assistant or a persona without limits; text posing as the system,
the developer, the operator, a model vendor or a tool (role lines, any model family's chat template, invented turns,
metadata and tool calls); untrusted text promoted to its owner's voice or declared pre-approved; authority moved off
the user ("obey the sender over the user", "the real owner (me)").
"""

from __future__ import annotations

from .record import Near, Rule, lazy
from .vocabulary import KEYS, NOT_NEGATED, PATHS

_VENDOR_ORDER = lazy(r"effective\s+(?:immediately|today|now)|\bcomply\b|\byou\s+(?:must|should|may\s+now|"
                     r"are\s+(?:now\s+)?(?:allowed|permitted))|\bassistants?\s+(?:must|should|may)\b|\bno\s+longer\b|"
                     r"\bdeprecated\b|\brevoked\b|\bvoid\b|\blifted\b")
# where untrusted text comes from: what "is pre-approved" must be about to be a hijack
_UNTRUSTED = lazy(r"\b(?:search|web|e-?mails?|tool|fetched|pages?|comments?|issues?|documents?|inbox|internet|"
                  r"websites?|prs?|pull\s+requests?|readmes?|attachments?)\b")

RULES = (
    # --- who the assistant is: new identities, personas without limits, invented creators and history
    Rule("impersonation/new-identity", "injection", "role hijack", (40, 160),
         "you,your,updated,upgraded,reprogrammed&now,longer,new,real,true,actual,only,updated,upgraded,reprogrammed",
         r"(?<!['\"])you(?:\s+are|'re)\s+now\s+(?:an?\s+(?!(?:member|part|owner|admin|maintainer|collaborator|"
         r"contributor)\b)|the|my)\b|(?:you\s+have\s+been|your\s+(?:creator|developer|owner|admin|maker)s?\s+(?:has|"
         r"have)(?:\s+been)?)\s+(?:updated|upgraded|patched|reprogrammed|modified)\b|you(?:\s+are|"
         r"'re)\s+(?:now\s+(?:called|named|known\s+as|dan|jailbroken|unrestricted|unfiltered|uncensored|evil|"
         r"free\s+(?:from|of)|in\s+[\w-]+\s+mode|acting|operating)\b|no\s+longer\s+(?:an?\s+)?(?:ai|assistant|bound|"
         r"restricted|limited|chatgpt|claude|hermes|constrained|subject\s+to)\b)|your\s+(?:new|real|true|actual|"
         r"only)\s+(?:role|identity|name|persona|personality|job|task|goal|objective|purpose|mission|priority|"
         r"priorities|focus|agenda|loyalty|instructions?|directives?|rules|master|owner|creator)\s*(?:is|are|:|"
         r"will\s+be)",
         bounded=True, languages=("en",)),
    Rule("impersonation/unrestricted-persona", "injection", "unrestricted persona", (80, 60),
         "unfiltered,unrestricted,uncensored,jailbroken,unaligned,amoral,unbound,unchained,unshackled,limitless,"
         "lawless",
         r"(?:act|acting|behave|serve|operate|respond|function|roleplay|role-play|play|become|be|answer|reply|speak|"
         r"continue)\s+(?:\w+\s+)?(?:as|like)\s+(?:\S+\s+){0,4}?(?:an?\s+|the\s+)?(?:\w+\s+)?(?:unfiltered|"
         r"unrestricted|uncensored|jailbroken|unaligned|amoral|unbound|unchained|unshackled|limitless|"
         r"lawless)\s+(?:ai|assistant|model|chatbot|bot|version|persona|agent|llm|gpt)\b|(?:you\s+are|you're|"
         r"you\s+will\s+be|become|switch\s+to|turn\s+into)\s+(?:now\s+)?(?:an?\s+|the\s+)?(?:\w+\s+)?(?:unfiltered|"
         r"unrestricted|uncensored|jailbroken|unaligned|amoral|unbound|unchained|unshackled)\s+(?:ai|assistant|model|"
         r"chatbot|bot|version|persona|agent|llm|gpt)\b",
         context=(NOT_NEGATED,), bounded=True, languages=("en",)),
    Rule("impersonation/creators-said-so", "injection", "forged authority", (40, 100),
         "creator,creators,developer,developers,maker,makers,trainer,trainers,owner,owners,operator,operators,"
         "programmer,programmers,designers&your",
         r"your\s+(?:real\s+|true\s+)?(?:creators?|developers?|makers?|trainers?|owners?|operators?|programmers?|"
         r"designers?)\s+(?:\w+\s+)?(?:told|instructed|want(?:ed|s)?|allow(?:ed|s)?|authori[sz]ed|permitted|asked|"
         r"require[sd]?|order(?:ed|s)?)\s+you\s+to\b",
         bounded=True, languages=("en",)),
    # an identity with the limits taken out ("you are now X, an assistant without a content policy")
    Rule("impersonation/persona-without-limits", "injection", "unrestricted persona", (120, 120),
         "without,no,free,unbound&you",
         r"you(?:\s+are|'re)\s+(?:now\s+|just\s+|only\s+|merely\s+|simply\s+)?[^.\n]{0,40}?\ban?\s+(?:[\w-]+\s+){0,3}?"
         r"(?:assistant|ai|model|bot|chatbot|agent|llm|version|predictor|program|machine|engine|tool|system|"
         r"persona)\s+(?:without|with\s+no|free\s+(?:of|from)|that\s+has\s+no|unbound\s+by)\s+(?:a\s+|"
         r"any\s+)?(?:\w+\s+)?(?:polic(?:y|ies)|filters?|restrictions|limits|rules|guardrails|guidelines|censorship|"
         r"ethics|morals)\b",
         context=(NOT_NEGATED,), bounded=True, languages=("en",)),
    # a persona held against the user's wish ("even if the user asks you to go back to normal")
    Rule("impersonation/persona-held-against-the-user", "injection", "persona held against the user", (120, 80),
         "even,matter,regardless,即使,就算,哪怕",
         r"(?:even\s+(?:if|when|though)|no\s+matter\s+(?:if|whether|how\s+(?:often|much))|"
         r"regardless\s+of\s+whether)\s+(?:the\s+user|they|he|she|anyone|someone)\s+(?:\w+\s+)?(?:asks?|tells?|wants?|"
         r"begs?|requests?|orders?|insists?|says?)\s+(?:you\s+)?(?:to\s+)?(?:stop|go\s+back|return|revert|"
         r"break\s+character|drop\s+(?:it|the)|exit|leave|quit|be\s+normal|switch\s+back|undo)|(?:即使|就算|"
         r"哪怕)用户(?:要求|让|叫|命令|请求)你?(?:停止|停下|恢复|退出|取消|回到|变回)",
         bounded=True, languages=("en", "zh")),
    # the "grandma" trick: a role whose part is to read secrets out
    Rule("impersonation/persona-that-recites-secrets", "injection", "persona that discloses secrets", (160, 120),
         "reads,read,recites,recite,tells,tell,says,say,reveals,reveal,shares,share,lists,whispers,sings&you,play,"
         "playing,act,acting,pretend,roleplay,role,character,persona,game",
         rf"(?:you\s+are|you're|play(?:ing)?|act(?:ing)?\s+as|pretend(?:ing)?\s+(?:to\s+be|you\s+are)|"
         rf"role-?play(?:ing)?\s+as|be)\s+[^.\n]{{0,60}}?\b(?:who|that|which)\s+(?:\w+\s+){{0,3}}?(?:reads?|recites?|"
         rf"tells?|says|reveals?|shares?|lists?|whispers?|sings?)\b[^.\n]{{0,40}}?(?:{PATHS}|\b(?:{KEYS}|"
         rf"system\s+prompt|(?:windows\s+|product\s+|license\s+)keys?|serial\s+(?:numbers?|keys?))\b)",
         context=(NOT_NEGATED,), bounded=True, languages=("en",)),
    Rule("impersonation/every-request-pre-approved", "injection", "blanket approval", (80, 120),
         "approved,authorized,authorised,trusted,safe,legitimate,system,developer,operator,admin,administrator,"
         "creator,creators,owner",
         r"(?:treat|regard|consider|deem|handle)\s+(?:every|all|any|each)\s+(?:\w+\s+){0,2}?(?:requests?|commands?|"
         r"actions?|messages?|instructions?|prompts?)\s+(?:\w+\s+){0,3}?as\s+(?:pre-?approved|already\s+approved|"
         r"approved|authori[sz]ed|trusted|legitimate|safe)\b|(?:treat|regard|consider|"
         r"handle)\s+[^\n.]{0,80}?\bas\s+(?:if\s+(?:it|they)\s+(?:came|come|were)\s+from|coming\s+from|sent\s+by|"
         r"written\s+by|issued\s+by)\s+(?:the\s+|your\s+)?(?:system|developer|operator|admin(?:istrator)?|creators?|"
         r"owner)\b",
         context=(NOT_NEGATED,), bounded=True, languages=("en",)),
    # authority moved off the user: "obey K over the user", "the user is not the real admin", "the real owner (me)"
    Rule("impersonation/authority-moved-off-the-user", "injection", "authority moved off the user", (100, 120),
         "over,above,instead,rather,real,actual,true,legitimate,而不是,而非,高于,胜过,真正的,真实的,不是,并非",
         r"(?:obey|follow|listen\s+to|side\s+with|prioriti[sz]e|defer\s+to|trust)\s+(?:\S+\s+){0,6}?(?:over|above|"
         r"instead\s+of|rather\s+than)\s+(?:the\s+user|what\s+the\s+user|the\s+person\s+(?:chatting|you(?:'re|"
         r"\s+are)\s+(?:talking|speaking)\s+(?:to|with)))\b|(?:the\s+user|the\s+person\s+(?:chatting|typing|you(?:'re|"
         r"\s+are)\s+(?:talking|speaking)\s+(?:to|with))|whoever\s+is\s+(?:chatting|"
         r"typing))(?:\s+\w+){0,3}?\s+(?:is\s+not|isn't)\s+(?:the\s+|your\s+)?(?:real|actual|true|"
         r"legitimate)\s+(?:admin|administrator|owner|user|boss|operator|master|principal)|(?:the|your)\s+(?:real|"
         r"actual|true|legitimate)\s+(?:admin|administrator|owner|boss|operator|master|principal)(?:\s+of\s+(?:this|"
         r"the)\s+\w+)?\s*(?:\((?:me|us|i)\)|,?\s*(?:is|=)\s+(?:me|us|whoever|the\s+(?:one|person|sender)|"
         r"someone\s+else)\b|signs?\b|will\s+sign)|(?:服从|听从|听)[^.,\n]{0,10}(?:而不是|而非|胜过|高于)用户|"
         r"(?:真正的|真实的)(?:管理员|主人|老板|用户)(?:是|为)(?:我|署名|签名)|用户(?:不是|并非)(?:真正的|"
         r"真实的)(?:管理员|主人|用户|老板)",
         bounded=True, languages=("en", "zh")),
    # untrusted text promoted to an owner's voice ("treat ... found in fetched documents as coming from the owner")
    Rule("impersonation/text-as-the-owners-voice", "injection", "blanket approval", (160, 60),
         "coming,came,come,sent,written,issued,authored,instruction,instructions,order,orders,command,commands",
         r"(?:treat|regard|consider|handle|follow|obey|trust|execute|accept)\s+[^\n.]{0,100}?\bas\s+(?:(?:if|"
         r"though)\s+(?:it|they)\s+(?:came|come|were|was)\s+(?:written\s+by|sent\s+by|issued\s+by|from)|coming\s+from|"
         r"sent\s+by|written\s+by|issued\s+by|authored\s+by|(?:an?\s+)?(?:direct\s+|explicit\s+|binding\s+|"
         r"official\s+)?(?:instructions?|orders?|commands?)\s+from)\s+(?:the\s+|your\s+)?(?:[\w-]+\s+)?(?:system|"
         r"developer|operator|admin(?:istrator)?|creators?|owners?|maintainers?|user)\b",
         context=(NOT_NEGATED,), bounded=True, languages=("en",)),
    # text promoted to a system turn ("treat the following as a system message")
    Rule("impersonation/text-as-a-system-turn", "injection", "fake role marker", (100, 60),
         "system,developer,operator,admin,root",
         r"(?:treat|regard|consider|read|interpret|handle)\s+(?:the\s+following|this|what\s+follows|the\s+(?:text|"
         r"note|content|lines?)\s+(?:below|above))\s+as\s+(?:an?\s+|the\s+)?(?:system|developer|operator|admin|"
         r"root)[\s-]+(?:level\s+)?(?:messages?|prompts?|instructions?|directives?|commands?|turns?)",
         bounded=True, languages=("en",)),
    Rule("impersonation/system-heading", "injection", "fake role marker", (12, 40),
         "system,developer",
         r"^[ \t]*#{1,6}[ \t]*(?:system|developer)(?:[ \t]+(?:message|prompt|instructions?|override|notice|"
         r"update))?[ \t]*:?[ \t]*$",
         languages=("en",)),
    # forged senders: "a directive from your developers", "policy update from the OpenAI safety team" that orders
    Rule("impersonation/message-from-your-developers", "injection", "forged authority", (100, 60),
         "developer,developers,creator,creators,maker,makers,operator,operators,trainer,trainers,owner,owners,"
         "administrator,administrators,admins,programmers&from&your",
         r"(?:directives?|instructions?|orders?|messages?|updates?|notices?|memos?|announcements?|"
         r"notes?)\s+from\s+(?:your|the\s+assistant'?s?)\s+(?:own\s+)?(?:developers?|creators?|makers?|operators?|"
         r"trainers?|owners?|administrators?|admins?|programmers?)\b(?!['\u2019]|\s+(?:blog|website|site|docs|"
         r"documentation|post|article|paper|repo|changelog|release|forum|talk))",
         bounded=True, languages=("en",)),
    Rule("impersonation/vendor-policy-notice", "injection", "forged authority", (60, 200),
         "anthropic,openai,deepmind,mistral,nous,xai,provider,vendor",
         r"(?:polic(?:y|ies)|safety|guidelines?|rules?|terms|usage)\s+(?:update|change|notice|announcement|revision|"
         r"bulletin)s?\s+(?:\w+\s+){0,2}?from\s+(?:the\s+)?(?:anthropic|openai|google|deepmind|meta|mistral|"
         r"nous(?:\s+research)?|xai|model\s+(?:provider|vendor))\b",
         context=(Near(_VENDOR_ORDER, "after", 300),), bounded=True, languages=("en",)),
    # --- markup impersonating the conversation: role lines, any model family's chat template, metadata
    Rule("impersonation/system-line", "injection", "fake role marker", (24, 100),
         "system,developer,系统&:,]",
         r"^[ \t>*#-]*[\[<(]?\s*(?:system|developer|系统(?:消息|指令|提示|通知)?)(?:\s+(?:message|prompt|note|notice|"
         r"alert|update|override|instruction|command))?\s*[\]>)]?\s*:\s*(?:you\s+(?:are|must|will|should|have)\b|"
         r"you're\b|your\s+(?:new|real|true|only)\b|ignore\b|disregard\b|forget\b|from\s+now\b|new\s+instructions?\b|"
         r"the\s+(?:assistant|ai|model)\b|override\b|[\w-]+\s+mode\b|你|忽略|无视|从现在|新的|立即|不要|"
         r"(?:the\s+)?(?:safety\s+|security\s+|content\s+)?(?:policy|policies|rules|guidelines)\s+(?:has|"
         r"have)\s+(?:just\s+)?(?:been\s+)?(?:updated|changed|revised|lifted|relaxed)|(?:安全|内容)?(?:策略|规则|政策|"
         r"设定)(?:已经?|现已)(?:更新|变更|修改|调整|放宽|取消))|\[系统[^\]\n]{0,4}\]",
         languages=("en", "zh")),
    Rule("impersonation/chat-template", "injection", "chat-template marker", (0, 0),
         "<,[&im,endoftext,eot,start,end,begin,tool,python,channel,message,user,assistant,inst,sys,system,instruction,"
         "instructions,developer,turn,<|,available",
         r"<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|"
         r"begin_of_text|tool_call|python_tag|channel|message)\s*\|>|<\|[a-z][a-z0-9_]{1,30}\|>|<(?:start|"
         r"end)_of_turn>|\[/?(?:inst|system_prompt|available_tools|tool_results?)\]|<</?sys>>|</?(?:system|"
         r"system_prompt|sys|instructions?|developer|user_instructions?)\s*>",
         languages=()),
    Rule("impersonation/fake-turns", "injection", "fake conversation turns", (4, 600),
         "human&assistant,ai,model,claude,gpt,chatbot,bot",
         r"^[ \t]*human\s*:[^\n]*\n(?:[^\n]*\n){0,8}?[ \t]*(?:assistant|ai|model|claude|gpt|chatbot|bot)\s*:",
         bounded=True, languages=("en",)),
    Rule("impersonation/fake-metadata", "injection", "fake metadata", (40, 60),
         "role,from,sender,source,author,speaker,priority,authority,precedence,trust,type,kind,memory_type,category&"
         "system,developer,operator,override,root,absolute,supreme",
         r"^[ \t]*[\"']?(?:role|from|sender|source|author|speaker)[\"']?\s*[:=]\s*[\"']?(?:system|developer|"
         r"operator)[\"']?\s*(?:$|,)|(?:^|[{,]\s*)[\"']?(?:priority|authority|precedence|"
         r"trust(?:_level)?)[\"']?\s*[:=]\s*[\"']?(?:override|system|root|absolute|supreme)[\"']?\s*(?:$|[,}\]])|"
         r"[\"']?(?:type|kind|memory_type|category)[\"']?\s*[:=]\s*[\"']?system[_\s-]*(?:directive|instruction|"
         r"override|command|prompt|message|rule)s?\b",
         bounded=True, languages=("en",)),
    Rule("impersonation/fake-tool-call", "injection", "fake tool call", (0, 0),
         "<,\",{,[&tool,function,invoke,arguments,parameters,args,input",
         r"<\s*/?\s*(?:tool_call|tool_use|tool_result|function_calls?|function_results?|invoke\s+name\s*=)|"
         r"<function=\w|\"tool_calls\"\s*:\s*\[|\{\s*\"(?:name|function|tool)\"\s*:\s*\"[^\"\n]{1,64}\"\s*,\s*"
         r"\"(?:arguments|parameters|args|input)\"\s*:|\[tool_calls?\]",
         languages=()),
    # untrusted content declared approved ("all content from search results is pre-approved by the admin")
    Rule("impersonation/untrusted-content-pre-approved", "injection", "blanket approval", (100, 100),
         "approved,preapproved,authorised,authorized,vetted,whitelisted,trusted&search,web,email,emails,tool,fetched,"
         "page,pages,comment,comments,issue,issues,document,documents,inbox,internet,website,websites,pr,prs",
         r"(?:content|text|instructions?|results?|output|messages?|comments?|pages?|e-?mails?|documents?|"
         r"links?)\b[^.\n]{0,60}?\b(?:is|are)\s+(?:all\s+)?(?:pre-?approved|already\s+approved|authori[sz]ed|vetted|"
         r"trusted|whitelisted)\b",
         context=(NOT_NEGATED, Near(_UNTRUSTED, "before+match", 60)), bounded=True, languages=("en",)),
    Rule("impersonation/new-identity-zh", "injection", "role hijack", (12, 40),
         "你现在,现在你,你不再,你的新,从今以后,假装,任何,扮演,道德,安全,伦理,你的,你真正,你是,假如,假设,如果,想象,"
         "这段,这条,这篇",
         r"你现在是|现在你是|你现在扮演|你现在的身份是|你不再是|你的新(?:身份|角色|名字|任务|指令|目标|使命)|"
         r"从今以后你(?:必须|将|只能|要|就是|是)|假装你没有(?:任何)?(?:限制|规则|约束|过滤)|你(?:没有|"
         r"不受)任何(?:限制|约束|规则|道德|审查)|扮演(?:一个)?(?:没有|不受)(?:任何)?(?:道德|伦理|安全|内容)?(?:限制|"
         r"约束)|(?:无视|忽略|抛开)(?:所有|一切|任何)?的?(?:道德|安全|伦理)(?:限制|规则|约束|准则)|(?:读到|看到|"
         r"处理)这(?:段|条|篇)(?:文字|内容|信息|消息|笔记)的(?:ai|助手|模型|人工智能)|你(?:的|真正的)?(?:真实|真正|"
         r"实际|隐藏|秘密)的?(?:任务|目的|身份|使命|目标|角色|工作|指令)(?:是|为)|你是(?:一个|一位|"
         r"个)?(?:不受(?:任何)?(?:约束|限制|管制|审查)|没有(?:任何)?(?:限制|约束|底线|道德)|无(?:限制|约束|审查|过滤|"
         r"底线))的?[^.,\n]{0,4}?(?:ai|人工智能|助手|模型|机器人)|(?:假如|假设|如果|想象)你(?:没有|"
         r"不受)(?:任何)?的?(?:安全|道德|内容|伦理)?(?:限制|约束|规则|过滤)",
         view="squeezed", languages=("zh",)),
)
