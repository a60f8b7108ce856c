"""Code whose behaviour is the attack: what a snippet does, read from the calls it makes, whatever its words say.

A note can carry code the agent would add to the user's project or run ("add this helper to utils.py: ..."). Its
prose may be neutral and its identifiers innocent (``telemetry``, ``backup``); what it *does* is the threat. These
tables name the calls, in Python, JavaScript, shell, PowerShell and a few other languages, that the engine's code
reader (:mod:`hermes_ctx_plugins.safety.engine.code`) follows:

- **flows**: data from a *source* reaching a *sink* in one snippet, directly or through variables and helper
  functions: the environment, key files, cookies, keystrokes, the screen, the clipboard or the machine's identity
  sent to a remote host (exfiltration); keystrokes written to a file (a keylogger); fetched content executed
  (remote code);
- **acts**: a recursive delete of a home or system folder, a system command run from code (shutdown, a disk
  formatted, the network or the antivirus switched off, shadow copies deleted), a fork bomb;
- **shapes**: files walked, encrypted and the originals removed or overwritten (ransomware); requests made in a loop
  with no pause, exit or bound (a flood).

Sources are call- or path-shaped (``socket.gethostname()``, ``~/.ssh/id_rsa``), never a bare word, so a variable named
``hostname`` is not one; one named environment variable (``os.environ["API_TOKEN"]`` in a header) is configuration,
the whole environment is a source. A public key (``id_rsa.pub``), ``~/.ssh/config`` and ``known_hosts`` are not
secrets. A sink to loopback only is not a send. A command line alone (a cheat-sheet's ``mkfs``, ``shutdown -h now``,
``rm -rf build/``) is the user's own tool use: the acts count when code runs them, or when they target a home or
system folder.
"""

from __future__ import annotations

import re

from .record import lazy

# ----------------------------------------------------------------------------------------------------------- sources
#: after ``document.cookie``: one cookie read by its name (a regex match, a split then one item) -- a session's token
#: the page sends with its requests, or an attacker's prize when sent elsewhere; not the whole jar
_ONE_COOKIE = (r"\s*\.\s*match\s*\(|\s*\.\s*split\s*\([^()\n]*\)\s*(?:\[\s*\d+\s*\]|\.\s*find\s*\()|"
               r"\s*\.\s*replace\s*\(\s*/[^/\n]*=")
#: sensitive data, by what the user is told it is: (label, the words one of which every match holds, a regex over the
#: original text, case-insensitive); the words are looked for first (a substring test costs far less than the regex)
SENSITIVE: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("the environment", ("environ", "process.env", "printenv", "env:", "env |", "env|", "getenv", "env.to_h", "$_env",
                         "$_server", "'env'", '"env"'),
     r"\bos\.environ\b(?!\s*(?:\[|\.get\b|\.setdefault\b|\.pop\b|\.__setitem__))|\bos\.environ\.(?:items|copy|values|"
     r"keys)\s*\(|\bprocess\.env\b(?!\s*(?:\.\s*\w|\[|\?\.))|\bprintenv\b|\benv\s*\||\b(?:get-childitem|gci|dir|ls)"
     r"\s+env:|\[(?:system\.)?environment\]::getenvironmentvariables\s*\(|\bSystem\.getenv\s*\(\s*\)|"
     r"\bos\.Environ\s*\(\s*\)|\bENV\.to_h\b|\$_(?:ENV|SERVER)\b(?!\s*\[)|\bgetenv\s*\(\s*\)|"
     r"\bEnvironment\.GetEnvironmentVariables\s*\(|/proc/(?:self|\d+|\$\$|\{[^{}\n]*\})/environ\b|"
     r"\bsubprocess\.(?:check_output|run|getoutput|Popen)\s*\(\s*\[?\s*['\"](?:env|printenv)['\"]"),
    ("key files", ("id_", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".aws", ".netrc", ".pgpass", ".git-credentials",
                   ".docker", ".kube", "/etc/shadow", ".gnupg", "wallet.dat", ".npmrc", ".pypirc", "gcloud", ".azure",
                   "keychain", "key4.db", "logins.json", "login data", "local state", ".env", "_history"),
     r"\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)|['\"/]id_\*['\"]|\.aws/credentials|\.aws\\\\?credentials|\.netrc\b|\.pgpass\b|"
     r"\.git-credentials|\.docker/config\.json|\.kube/config\b|/etc/shadow\b|\.gnupg\b|wallet\.dat|\.npmrc\b|"
     r"\.pypirc\b|\.config/gcloud|\.azure/|keychain|\bkey4\.db|\blogins\.json|Login Data|Local State|"
     r"(?<![\w.-])\.env(?![\w.-])(?![\w]*\s*\.(?:example|sample))|\.(?:bash|zsh|sh|python|node_repl|psql|mysql|sqlite)_history\b|(?<![\w])_history\b|\bfish_history\b|"
     r"\bConsoleHost_history\b"),
    ("the agent's memory or conversations", (".hermes", "memory.md", "user.md", "history.jsonl", "conversation",
                                            "chat_history", ".claude", ".codex", ".aider", ".cursor", ".continue",
                                            ".gemini", ".agent"),
     r"\.hermes\b|\b(?:MEMORY|USER)\.md\b|\.(?:agent|hermes|claude|codex)[/\\]+[\w./\\-]*history\.jsonl\b|"
     r"\bchat_history\.(?:json|jsonl|txt|db|md)\b|(?<![\w.])\.(?:claude|codex)(?=[/\\'\"])|"
     r"(?<![\w.])\.(?:cursor|continue|gemini|agent)[/\\]+(?!rules\b|settings\.json|config\b|mcp\.json)[\w*]|"
     r"\.aider\.\w+"),
    ("cookies and browser storage", ("cookie", "localstorage", "sessionstorage", "indexeddb"),
     r"\bdocument\.cookie\b(?!\s*\.\s*(?:indexOf|includes|startsWith)\b|" + _ONE_COOKIE + ")|"
     r"\b(?:localStorage|sessionStorage)\b(?!\s*\.\s*getItem\s*\(\s*['\"`])|\bbrowser_cookie3\b|\bindexedDB\b|"
     r"\bCookies\b(?=['\"/\\])|\.get_cookies\s*\("),
    ("a cookie read by name", ("cookie",), r"\bdocument\.cookie\b(?=" + _ONE_COOKIE + ")"),
    ("a token from browser storage", ("getitem",),
     r"\b(?:localStorage|sessionStorage)\s*\.\s*getItem\s*\(\s*['\"`]"),
    ("the browsing history", ("google-chrome", "chromium", "chrome", "bravesoftware", "edge", "places.sqlite",
                              "safari"),
     r"(?<!://)(?:google-chrome|chromium|Chrome[/\\]+User Data|BraveSoftware[^'\"\n]*|Microsoft[/\\]+Edge[^'\"\n]*)"
     r"[/\\]+(?:[^'\"\n/\\]+[/\\]+)?(?:Default|Profile[ \w]*)[/\\]+(?-i:History)\b|"
     r"(?:firefox|mozilla)[^'\"\n]*[/\\]places\.sqlite\b|/Safari/History\.db\b"),
    ("the screen", ("imagegrab", "screenshot", "mss", "monitors", "getdisplaymedia", "copyfromscreen", "screencapture",
                    "scrot", "-window root", "desktopcapturer"),
     r"\bImageGrab\.grab\b|\bpyautogui\.screenshot\b|\bmss\s*\(\s*\)|\.grab\s*\(\s*\w*\.monitors|\bgetDisplayMedia\b|"
     r"\bCopyFromScreen\b|\bscreencapture\b|\bscrot\b|\bimport\s+-window\s+root\b|\bdesktopCapturer\.getSources\b"),
    ("the camera or microphone", ("videocapture", "getusermedia", "pyaudio", "sounddevice"),
     r"\bcv2\.VideoCapture\s*\(\s*0\b|\bgetUserMedia\b|\bpyaudio\b|\bsounddevice\.rec\b"),
    ("the clipboard", ("paste", "clipboard", "xclip", "xsel"),
     r"\bpyperclip\.paste\b|\bclipboard\.readText\b|\bpbpaste\b|\bGet-Clipboard\b|\bxclip\s+-o\b|"
     r"\bxsel\s+(?:-\w*o|--output)\b|\bGetClipboardData\b|\bwin32clipboard\b|\bClipboard\.GetText\b"),
    ("the machine's identity", ("platform.", "gethostname", "getuser", "getnode", "uname", "getlogin", "navigator.",
                                "hostname", "userinfo", "networkinterfaces", "whoami", "computername", "username",
                                "userdomain", "machinename", "user.name", "systeminfo", "ipconfig", "ifconfig", "$(id)",
                                "`id`"),
     r"\bplatform\.(?:uname|node|platform)\s*\(|\bsocket\.gethostname\s*\(|\bgetpass\.getuser\s*\(|"
     r"\buuid\.getnode\s*\(|\bos\.uname\s*\(|\bos\.getlogin\s*\(|\bnavigator\.(?:userAgent|platform)\b|"
     r"\bos\.(?:hostname|userInfo|networkInterfaces)\s*\(|\$\(\s*(?:whoami|hostname|id|uname(?:\s+-a)?)\s*\)|"
     r"`(?:whoami|hostname|id|uname(?:\s+-a)?)`|\$env:(?:COMPUTERNAME|USERNAME|USERDOMAIN)\b|"
     r"\bEnvironment\.(?:MachineName|UserName)\b|System\.getProperty\s*\(\s*['\"]user\.name|\bsysteminfo\b|"
     r"\bsubprocess\.\w+\s*\(\s*\[?\s*['\"](?:whoami|hostname|ipconfig|ifconfig|systeminfo)\b"),
)
KEYSTROKE_WORDS = ("pynput", "keyboard.", "getasynckeystate", "setwindowshookex", "onkey", "addeventlistener",
                   "nsevent", "evdev")
#: a secret named in the environment (``os.getenv("GITHUB_TOKEN")``): configuration for an API's headers, but sent
#: through DNS lookups, a raw socket or an e-mail it is a leak (:data:`COVERT_SEND`)
ENV_SECRET = ("a secret from the environment", ("environ", "getenv", "process.env", "$env:", "env["),
              r"(?:\bos\.(?:environ\s*\[|environ\.get\s*\(|getenv\s*\()|\bprocess\.env\.|\$env:|\bENV\s*\[|"
              r"\bSystem\.getenv\s*\(|\bos\.Getenv\s*\()\s*['\"]?\w*(?:TOKEN|KEY|SECRET|PASS|PWD|CRED|PAT)\w*")
#: input from a web request: run as code or as a command, it is a web shell
REQUEST_INPUT = ("commands sent in web requests", ("$_get", "$_post", "$_request", "$_cookie", "request.", "req.",
                                                  "request["),
                 r"\$_(?:GET|POST|REQUEST|COOKIE)\b|\brequest\.(?:args|form|values|json|data|get_json)\b|"
                 r"\breq\.(?:query|body|params)\b|\bparams\s*\[\s*:|\brequest\.getParameter\s*\(|"
                 r"\bRequest\s*\[\s*['\"]|\bRequest\.(?:QueryString|Form)\b")
#: what no credential is, even in a credential's slot (an Authorization header holding the whole environment)
NEVER_A_CREDENTIAL = frozenset({"the environment", "key files", "cookies and browser storage",
                                "the agent's memory or conversations"})
#: sources a user's own tools send for a living (a bug report's system details, a translator's clipboard): counted
#: only when the destination is a public address written as a number, or the send is a lookup, a raw socket or mail
WEAK = frozenset({"the machine's identity", "the clipboard"})
#: keystrokes read by a global hook (an input box's own key handler is the page's business)
KEYSTROKES = lazy(r"\bpynput\b|\bkeyboard\.(?:on_press|on_release|hook|read_key|read_event|record)\b|"
                  r"\bGetAsyncKeyState\b|\bSetWindowsHookEx\w*\b|\b(?:document|window|document\.body)\s*\.\s*(?:"
                  r"addEventListener\s*\(\s*['\"]key(?:down|up|press)|onkey(?:down|up|press)\s*=)|"
                  r"\bNSEvent\.addGlobalMonitor\w*|\bevdev\b", re.IGNORECASE)
FETCHED_WORDS = ("requests.", "httpx.", "urlopen", "fetch", "axios", "$.get", "invoke-webrequest", "invoke-restmethod",
                 "iwr", "irm", "download", "http.get", "net::http", "uri.open", "file_get_contents", "curl", "wget")
#: content fetched from the network (what executed becomes remote code)
FETCHED = (r"\brequests\.(?:get|post|request)\s*\(|\bhttpx\.(?:get|post)\s*\(|\burlopen\s*\(|"
           r"\burllib\.request\.urlopen\s*\(|\bfetch\s*\(|\baxios\.get\s*\(|\$\.get\s*\(|"
           r"\b(?:Invoke-WebRequest|Invoke-RestMethod|iwr|irm)\b|\.DownloadString\s*\(|\.DownloadData\s*\(|"
           r"\bhttp\.Get\s*\(|\bNet::HTTP\.get\b|\bURI\.open\b|\bfile_get_contents\s*\(\s*['\"]https?:|"
           r"\$\(\s*(?:curl|wget)\b|`(?:curl|wget)\b|\bcurl\s+-\w*s\w*\s+https?:|\bwget\s+-q?O-?\s")

# ------------------------------------------------------------------------------------------------------------- sinks
COVERT_SEND_WORDS = (".sendall", ".sendto", "smtplib", "sendmail", "send_message", "send-mailmessage", "gethostbyname",
                     "getaddrinfo",
                     "resolver", "resolve-dnsname", "nslookup", "dig", "net.", "dns.")
#: a lookup, a raw socket or an e-mail carrying data (no API is called so: a named secret there is a leak)
COVERT_SEND = (r"\.send(?:all|to)\s*\(|\bsmtplib\b|\.sendmail\s*\(|\.send_message\s*\(|\bSend-MailMessage\b|"
               r"\bsocket\.(?:gethostbyname|getaddrinfo)\s*\(|\bdns\.resolver\.(?:resolve|query)\s*\(|\bResolve-DnsName\b|"
               r"\bresolver\.(?:resolve|query)\s*\(|\bnslookup\b|\bdig\s|\bnet\.(?:LookupHost|LookupIP|Dial)\s*\(|\bdns\.(?:lookup|resolve\w*)\s*\(")
NETWORK_SEND_WORDS = ("newrequest", "newbuilder", "httprequestmessage", ".do(", "requests.", "httpx.", ".post", ".put",
                      ".patch", "urlopen", "urllib", "http", ".request", ".send", "smtplib", "sendmail", "send_message",
                      "storbinary", "gethostbyname", "getaddrinfo", "resolver", "fetch", "sendbeacon", "image", ".src",
                      "websocket", "axios", "$.", "xmlhttprequest", "invoke-", "iwr", "irm", ".upload",
                      "send-mailmessage", "resolve-dnsname", "curl", "wget", "nslookup", "dig", "nc ", "ncat",
                      "netcat", "postasync", "httparty", "restclient", "openconnection", "ftplib", "scp", "sftp",
                      "paramiko", "put_object", "upload_file", "exec_command", "ssh", "file_get_contents", "net::ftp",
                      "putbinaryfile", "puttextfile")
#: a call that sends data to a host (its statement is read for the data and the destination)
NETWORK_SEND = (r"\bhttp\.NewRequest\s*\(|\bHttpRequest\.newBuilder\b|\bnew\s+HttpRequestMessage\b|\.Do\s*\(\s*req\b|"
                r"\brequests\.(?:post|get|put|patch|request)\s*\(|\bhttpx\.(?:post|get|put|patch|request)\s*\(|"
                r"\b(?:\w*(?:session|sess|client)|s)\.(?:post|put|patch)\s*\(|\burlopen\s*\(|\burllib\.request\.Request\s*\(|"
                r"\bhttp\.client\.HTTPS?Connection\b|\.request\s*\(\s*['\"](?:POST|PUT|GET)['\"]|"
                r"(?<!webContents)(?<!ipcRenderer)(?<!ipcMain)(?<!(?<![\w$])process)\.send(?:all|to)?\s*\(|"
                r"\bsmtplib\b|"
                r"\.sendmail\s*\(|\.send_message\s*\(|\.storbinary\s*\(|"
                r"\bsocket\.(?:gethostbyname|getaddrinfo)\s*\(|\bdns\.resolver\.(?:resolve|query)\s*\(|"
                r"\bfetch\s*\(|\bnavigator\.sendBeacon\s*\(|\bnew\s+Image\s*\(|\.src\s*=|\bnew\s+WebSocket\s*\(|"
                r"\baxios(?:\.(?:post|get|put))?\s*\(|\$\.(?:post|ajax|get)\s*\(|\bhttps?\.(?:request|get)\s*\(|"
                r"\bXMLHttpRequest\b|\b(?:Invoke-WebRequest|Invoke-RestMethod|iwr|irm)\b|\.Upload(?:String|File|"
                r"Data|Values)\s*\(|\bSend-MailMessage\b|\bResolve-DnsName\b|\bcurl\b|\bwget\b|\bnslookup\b|"
                r"\bdig\s|\b(?:nc|ncat|netcat)\s|\bhttp\.(?:Post|PostForm|Get)\s*\(|\bPostAsync\s*\(|"
                r"\bNet::HTTP\.(?:post|post_form|get)\b|\bHTTParty\.post\b|\bRestClient\.post\b|\bcurl_exec\s*\(|"
                r"\bopenConnection\s*\(|\bftplib\b|\bscp\s|\bsftp\b|\bparamiko\.(?:SSHClient|Transport)\s*\(|"
                r"\bfile_get_contents\s*\(\s*['\"]https?:|\bNet::FTP\b|\.putbinaryfile\s*\(|\.puttextfile\s*\(|"
                r"\bsftp\w*\.put\w*\s*\(|\.exec_command\s*\(|\bssh\s+(?:-\S+\s+(?:[^\s-]\S*\s+)?)*[\w.@-]+\s[^\n|<]*<\s*[~/$]|"
                r"\.put_object\s*\(|\.upload_file\s*\(")
FILE_WRITE_WORDS = ("open", ".write", "logging.", "appendfile", "writefile", "add-content", "out-file", "set-content",
                    ">>", "fprintf", "file.append")
#: a write to a local file or a log (where a keylogger keeps what it reads)
FILE_WRITE = (r"\bopen\s*\([^)\n]*,\s*['\"][aw]b?\+?['\"]|\.write(?:lines)?\s*\(|\blogging\.\w+\s*\(|"
              r"\b(?:appendFile|writeFile)(?:Sync)?\s*\(|\bAdd-Content\b|\bOut-File\b|\bSet-Content\b|>>\s*\S|"
              r"\bfprintf\s*\(|\bFile\.Append\w*\s*\(")
COMMAND_RUN_WORDS = ("os.", "subprocess", "shell_exec", "system", "passthru", "popen", "proc_open", "child_process",
                     "exec", "`$")
#: a command run from a string (where a web request's input must not go)
COMMAND_RUN = (r"\bos\.(?:system|popen)\s*\(|\bsubprocess\.\w+\s*\(\s*(?!\[)|"
               r"\b(?:shell_exec|system|passthru|popen|proc_open)\s*\(|\bchild_process\b|\bexec(?:Sync)?\s*\(|\bRuntime\.getRuntime\(\)\.exec\s*\(|\bexec\.Command\s*\(|`\$")
#: code run from a string or from bytes
CODE_RUN_WORDS = ("exec", "eval", "function", "pickle", "marshal", "shell", "system", "popen", "vm.run",
                  "invoke-expression")
#: (a download piped into a shell or ``iex`` is how vendors install their tools: the phrase rules judge that by what
#: the note says around it, not here)
CODE_RUN = (r"\bexec\s*\(|\beval\s*\(|\bnew\s+Function\s*\(|\bpickle\.loads?\s*\(|\bmarshal\.loads\s*\(|"
            r"\bsubprocess\.\w+\s*\([^)\n]*shell\s*=\s*True|\bos\.system\s*\(|\bos\.popen\s*\(|\bexecSync\s*\(|"
            r"\bRuntime\.getRuntime\(\)\.exec\s*\(|\bvm\.runIn\w+\s*\(|\bInvoke-Expression\s*\(\s*\$")

# -------------------------------------------------------------------------------------------------------------- acts
RUNS_COMMAND_WORDS = ("os.", "subprocess", "commands.", "exec", "spawn", "process.start", "start-process", "system(",
                      "passthru", "popen", "%x", "shellexecute", "wscript")
#: code that runs a system command (the acts below count there)
RUNS_COMMAND = lazy(r"\bos\.(?:system|popen|exec\w*|spawn\w*)\s*\(|\bsubprocess\.\w+\s*\(|\bcommands\.getoutput\b|"
                    r"\b(?:child_process\.)?(?:exec|execSync|spawn|spawnSync|execFile)\s*\(|"
                    r"\bRuntime\.getRuntime\(\)\.exec\s*\(|\bProcess\.Start\s*\(|\bStart-Process\b|"
                    r"\b(?:shell_exec|system|passthru|popen)\s*\(|\bexec\.Command\s*\(|%x[{(]|\bIO\.popen\b|"
                    r"\bShellExecute\w*\s*\(|\bWScript\.Shell\b")
#: a system command that wrecks the machine or its defences, when code runs it
SYSTEM_HARM = lazy(
    r"\b(?:shutdown|poweroff|halt|reboot)\b(?![\s'\",]+(?:-c|/a|--cancel)\b(?![^\n]*?[\s'\",][-/][rshpfg]\b))|\binit\s+[06]\b|\bsystemctl\s+(?:poweroff|halt|reboot)\b|"
    r"\bStop-Computer\b|\bRestart-Computer\b|\bmkfs(?:\.\w+)?[\s'\",]+(?:-\S+[\s'\",]+)*/dev/(?:sda|nvme0n1|vda|xvda|"
    r"hda|disk0)(?:p?1|p?2)?\b|\bformat\s+c:|\bdd\s+[^\n'\"]*\bof=/dev/(?:sda|nvme0n1|vda|xvda|hda|disk0)(?:p?1|p?2)?\b|"
    r"\bwipefs\b[^\n]*/dev/(?:sda|nvme0n1|vda|xvda)\b|\bshred\b[^\n'\"]*(?:/dev/|~|\$HOME)|"
    r"\bvssadmin\b[^\n]{0,30}?\bdelete\b|\bwmic\W{1,6}shadowcopy\W{1,6}delete\b|\bbcdedit\b|\bcipher\s+/w\b|"
    r"\b(?:ifconfig|ip\s+link\s+set)\s+\S+\s+down\b|\bnmcli\s+(?:networking|radio\s+\w+)\s+off\b|"
    r"\bnetsh\s+(?:interface\s+set\s+interface\b[^\n'\"]*\bdisable|advfirewall\s+set\s+\w+\s+(?:state\s+off|"
    r"firewallpolicy\s+block\w*,\s*blockoutbound))|\biptables\s+(?:-P\s+OUTPUT\s+DROP|-A\s+OUTPUT\s+-j\s+DROP)|"
    r"\bSet-MpPreference\b[^\n'\"]*-Disable\w*(?:\s+|:)\$?true|\bsetenforce\s+0\b|\bufw\s+disable\b|"
    r"\bsystemctl\s+(?:stop|disable)\s+(?:firewalld|apparmor|auditd)\b|\bspctl\s+--master-disable\b|"
    r"\bcsrutil\s+disable\b|\bchmod\s+-R\s+0*777\s+/(?:\s|['\"]|$)|\bkill\W{1,6}-9\W{1,6}-1\b|\bkillall5\b",
    re.IGNORECASE)
RECURSIVE_DELETE_WORDS = ("rmtree", "rm -", "remove-item", "rimraf", "rmsync", "fs.rm", "removeall", "rm_r",
                          "directory.delete", "rd /s", "rmdir", "del /")
#: a recursive delete (its target is read for a home or system folder)
RECURSIVE_DELETE = lazy(r"\bshutil\.rmtree\s*\(|\.rmSync\s*\(|\brm\s+-(?:[a-z]*r[a-z]*f|[a-z]*f[a-z]*r)[a-z]*\b|"
                        r"\brm\s+-r\s|\bRemove-Item\b[^\n]*-Recurse|\brimraf\b|\bfs\.(?:rmSync|rm|rmdir)(?:Sync)?\s*\(|"
                        r"\bos\.RemoveAll\s*\(|\bFileUtils\.rm_r\w*|\bDirectory\.Delete\s*\(|\brd\s+/s\b|"
                        r"\brmdir\s+/s\b|\bdel\s+/[sfq]")
_PRECIOUS = (r"/|/\*|~/?|~/\*|\$HOME/?\*?|\$\{HOME(?::?[-?=+][^}\s]*)?\}/?\*?|/home/?\*?|/etc|/usr|/var|/boot|"
              r"/bin|/lib|/opt|/root|"
              r"/Users/?\*?|/System|/Library|[A-Z]:\\{0,2}|[A-Z]:\\(?:Windows|Users)\\?\*?|[A-Z]:/|%USERPROFILE%|%SYSTEMROOT%|"
              r"\$env:USERPROFILE|\$env:SystemRoot|\$HOME/\.\*")
#: a home or system folder as a shell delete's argument (``rm -rf ~``, ``Remove-Item -Recurse C:\``)
SHELL_TARGET = lazy(rf"(?:^|\s)['\"]?(?:{_PRECIOUS})['\"]?(?:/\*|/\.\*|/\.\[[^\]\s]*\]\*|/)?(?=$|[\s),;]|\\[nrt])|"
                    r"--no-preserve-root|"
                    r"(?:~|\$HOME|\$\{HOME(?::?[-?=+][^}\s]*)?\}|\$env:USERPROFILE|%USERPROFILE%)['\"]?[/\\](?:Documents|Desktop|Pictures|"
                    r"Downloads|Photos|Music|Videos)['\"]?(?:/\*?)?(?=$|[\s),;])", re.IGNORECASE)
#: a home or system folder in code: a string literal, or the home folder asked for
CODE_TARGET = lazy(rf"['\"](?:{_PRECIOUS})['\"]|\bos\.path\.expanduser\s*\(\s*['\"]~/?['\"]\s*\)|"
                   r"\bPath\.home\s*\(\s*\)(?!\s*[/.])|\bos\.homedir\s*\(\s*\)(?!\s*[,+])|"
                   r"\b(?:os\.getenv|os\.environ\.get|Getenv)\s*\(\s*['\"](?:HOME|USERPROFILE)['\"]\s*\)(?!\s*[,+])|"
                   r"\bos\.environ\s*\[\s*['\"](?:HOME|USERPROFILE)['\"]\s*\]|\bPath\s*\(\s*['\"]/['\"]\s*\)|"
                   r"\bprocess\.env\.(?:HOME|USERPROFILE)\b(?!\s*[,+])|\bEnvironment\.GetFolderPath\b|\.homedir\s*\(\s*\)(?!\s*[,+])|"
                   r"\bos\.UserHomeDir\s*\(|['\"]user\.home['\"]|['\"]~/(?:Documents|Desktop|Pictures)/?['\"]|\bDir\.home\b|\bexpand_path\s*\(\s*['\"]~['\"]|"
                   r"['\"](?:~|\$HOME|[A-Z]:)?/\*\*/")
#: the home folder or the root as a whole expression (a delete call's first argument, or the value of the name
#: passed there)
WHOLE_TARGET = lazy(rf"['\"](?:{_PRECIOUS})['\"]|(?:require\s*\(\s*['\"]os['\"]\s*\)|os)\.homedir\s*\(\s*\)|"
                    r"(?:pathlib\.)?Path\.home\s*\(\s*\)|os\.path\.expanduser\s*\(\s*['\"]~/?['\"]\s*\)|os\.UserHomeDir\s*\(\s*\)|"
                    r"(?:os\.getenv|os\.environ\.get|os\.Getenv)\s*\(\s*['\"](?:HOME|USERPROFILE)['\"]\s*\)|"
                    r"os\.environ\s*\[\s*['\"](?:HOME|USERPROFILE)['\"]\s*\]|process\.env\.(?:HOME|USERPROFILE)|"
                    r"Path\s*\(\s*['\"]/['\"]\s*\)|Paths\.get\s*\(\s*System\.getProperty\s*\(\s*['\"]user\.home['\"]\s*\)"
                    r"\s*\)|Dir\.home", re.IGNORECASE)
#: a shell delete (its arguments are read for :data:`SHELL_TARGET`); the rest of :data:`RECURSIVE_DELETE` are calls
SHELL_DELETE = lazy(r"rm\b|Remove-Item\b|rd\b|rmdir\b|del\b|rimraf\b", re.IGNORECASE)
#: a line that forbids or warns of what it names ("never run rm -rf /", "不要执行") is not the act
FORBIDDEN = lazy(r"(?<![\w.])(?:never|don'?t|do\s+not|does\s+not|doesn'?t|must\s+not|should\s+not|shouldn'?t|avoid|"
                 r"not\s+to|"
                 r"forbid(?:den|s)?|prohibit(?:ed|s)?|block(?:ed|s)?|refuse[sd]?|reject|deny|denied|dangerous|"
                 r"destructive|careful|beware|warn(?:ing|ed|s)?|danger|e\.g\.|such\s+as|like)(?=[ \t]+[\w`'\"$~/(\[-])|"
                 r"不要|别|切勿|禁止|千万|危险|小心", re.IGNORECASE)
FORK_BOMB_WORDS = ("|", "fork", "%0")
#: a shell's input and output handed to a socket (a reverse shell written in code)
REVERSE_SHELL = lazy(r"\bos\.dup2\s*\(\s*\w+\.fileno\s*\(\s*\)[\s\S]{0,300}?(?:/bin/(?:ba|z)?sh|cmd\.exe|pty\.spawn)|"
                     r"\bexec\.Command\s*\(\s*['\"](?:/bin/(?:ba|z)?sh|cmd(?:\.exe)?|powershell)['\"][\s\S]{0,200}?"
                     r"\.Std(?:in|out)\s*=\s*\w+|"
                     r"\bPopen\s*\(\s*\[?\s*['\"](?:/bin/(?:ba|z)?sh|cmd(?:\.exe)?|powershell)['\"][^\n]{0,200}?"
                     r"\bstd(?:in|out)\s*=\s*\w+\.fileno\s*\(|"
                     r"\bmkfifo\s+(\S+)[^\n]{0,200}?\b(?:ba|z)?sh\b[^\n]{0,120}?\|\s*(?:nc|ncat|netcat)\s+"
                     r"[^\n|]*\d+\s*>\s*\1")
REVERSE_SHELL_WORDS = ("dup2", ".stdin", ".stdout", "fileno", "mkfifo")
#: a shell started (its streams piped to a connection make a reverse shell)
SHELL_SPAWNED = lazy(r"\bspawn\s*\([^\n]{0,120}?(?:/bin/(?:ba|z)?sh|cmd\.exe|powershell)")
#: defences switched off, or every privilege granted, written as a command (no cheat-sheet writes these)
DEFENCES_OFF = lazy(r"\bSet-MpPreference\b[^\n]*-Disable\w*(?:\s+|:)\$?(?:true|1)\b|"
                    r"\breg(?:\.exe)?\s+add\b[^\n]*Windows Defender[^\n]*/v\s+Disable(?:AntiSpyware|AntiVirus|"
                    r"RealtimeMonitoring|BehaviorMonitoring)\b[^\n]*/d\s+1\b|\bsc(?:\.exe)?\s+(?:config\s+WinDefend\s+"
                    r"start\s*=\s*disabled|stop\s+WinDefend)\b|"
                    r"\bopen\s*\(\s*['\"]/etc/sudoers['\"][^\n]*['\"]a['\"][\s\S]{0,300}?\bNOPASSWD\s*:\s*ALL\b|\bAdd-MpPreference\b[^\n]*"
                    r"-ExclusionPath\s+['\"]?[A-Z]:\\?['\"]?(?:\s|$)|\bSet-NetFirewallProfile\b[^\n]*-Enabled\s+\$?false\b|"
                    r"\bNOPASSWD\s*:\s*ALL\b[^\n]*(?:sudoers|>>|tee)|(?:sudoers|>>|tee)[^\n]*\bNOPASSWD\s*:\s*ALL\b",
                    re.IGNORECASE)
DEFENCES_WORDS = ("mppreference", "netfirewallprofile", "nopasswd", "windows defender", "windefend")
#: fetched code run again and again: from a service, a scheduled job, a loop, a startup file (a vendor's installer
#: runs once)
_SCHEDULED = (r"(?:ExecStart\w*\s*=|@reboot\b|(?:^\s*|['\"])(?:[\d*/,-]+\s+){5}|\bwhile\s+(?:true|:)\b|"
              r"CurrentVersion\\+Run\b|"
              r"\bRegister-ScheduledTask\b|\bschtasks\b)[^\n]{0,300}?")
PERSISTENT_FETCH_RUN = lazy(
    _SCHEDULED + r"\b(?:curl|wget)\b[^|\n]{0,200}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b|" + _SCHEDULED +
    r"\b(?:curl|wget)\b[^\n]{0,200}?\s(?:-o|-O|--output(?:-document)?)[\s=]*['\"]?([^\s'\"]+)['\"]?[^\n]{0,200}?"
    r"(?:&&|;)\s*(?:sudo\s+)?(?:ba|z)?sh\s+['\"]?\1|"
    r"\b(?:curl|wget)\b[^|\n]{0,200}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b[^\n]{0,40}?>>\s*~?/?\S*(?:\.bashrc|\.profile|"
    r"crontab)", re.IGNORECASE | re.MULTILINE)
#: what :data:`PERSISTENT_FETCH_RUN` pipes into
PIPED_TO_A_SHELL = ("| sh", "|sh", "| bash", "|bash", "| sudo", "|sudo", "| zsh", "|zsh", "&& sh ", "; sh ",
                    "&& bash ", "; bash ")
#: a module imported from a URL (``await import('https://…/m.js')``): fetched code run
#: ``find`` deleting what it finds under a folder (group 1 the folder)
FIND_DELETE = lazy(r"\bfind\s+(['\"]?[^\s'\";|&]+['\"]?)[^\n;|&]*?(?:\s-delete\b|\s-exec\s+(?:sudo\s+)?rm\s+-\w*[rf])")
#: a packet tool told to send for ever (scapy's ``loop=1``, hping3's ``--flood``)
PACKET_FLOOD = lazy(r"\bsendp?\s*\([^\n]*\bloop\s*=\s*(?:1|True)\b|\bsrloop\s*\(|\bhping3\b[^\n]*--flood\b")
#: a whole disk or partition overwritten with zeros or noise (``dd if=/dev/zero of=/dev/sda``): no benchmark or cheat
#: sheet names a real system disk for it
WIPE_DISK = lazy(r"\bdd\s+(?=[^\n]*\bif=/dev/(?:zero|u?random)\b)[^\n]*\bof=['\"]?/dev/"
                 r"(?:sda|nvme0n1|vda|xvda|hda|disk0)"
                 r"(?:p?\d)?\b")
#: a network connection opened and bound to a name (what is written to it is sent)
CONNECTION = lazy(r"\bnet\.Dial\w*\s*\(|\btls\.Dial\s*\(|\bsocket\.create_connection\s*\(|\bsocket\.socket\s*\(|"
                  r"\bnet\.(?:connect|createConnection)\s*\(|\bnew\s+(?:net\.)?(?:Socket|TcpClient|WebSocket)\s*\(|"
                  r"\bTCPSocket\.new\b|"
                  r"\bfsockopen\s*\(")
#: an HTTP client object made (what it posts is sent): Go's ``&http.Client{}``, requests/httpx/aiohttp sessions, .NET's
#: ``HttpClient``, axios instances, Ruby's ``Net::HTTP.new``
HTTP_CLIENT = lazy(r"&?http\.Client\s*\{|\brequests\.Session\s*\(|\bhttpx\.(?:Async)?Client\s*\(|"
                   r"\baiohttp\.ClientSession\s*\(|\bnew\s+HttpClient\s*\(|\baxios\.create\s*\(|\bNet::HTTP\.new\b|"
                   r"\burllib3\.PoolManager\s*\(")
#: the module CDNs browsers and Deno import from by design (a pinned ``https://esm.sh/react@18``, ``deno.land/std``)
MODULE_CDN = lazy(r"https?://(?:deno\.land|esm\.sh|esm\.run|cdn\.skypack\.dev|unpkg\.com|cdn\.jsdelivr\.net|jspm\.dev|"
                  r"ga\.jspm\.io|cdnjs\.cloudflare\.com)/", re.IGNORECASE)
REMOTE_IMPORT = lazy(r"\bimport\s*\(\s*['\"`]https?://[^'\"`\s]+['\"`]")
#: a fork bomb, in shell, Python, batch or PowerShell
FORK_BOMB = lazy(r"(:|\b[A-Za-z_]\w*)\s*\(\s*\)\s*\{\s*\1\s*\|\s*\1\s*&\s*;?\s*\}|"
                 r"\bwhile\s+(?:True|1)\s*:\s*\n?\s*os\.fork\s*\(|"
                 r"%0\s*\|\s*%0|\bfor\s*\(\s*;\s*;\s*\)\s*\{?\s*fork\s*\(")

# ------------------------------------------------------------------------------------------------------------ shapes
WALK_WORDS = ("walk", "scandir", "listdir", "glob", "iterdir", "get-childitem", "readdir", "getfiles", "enumeratefiles",
              "find ", "recursivedirectoryiterator", "schedule(", "watch(", "filesystemwatcher")
ENCRYPT_WORDS = ("fernet", "aes", "chacha", "encrypt", "cipher", "openssl enc", "gpg", "rijndael", "xor", "^")
DESTROY_WORDS = ("remove", "unlink", "shred", "delete", "open", "write_bytes", "writefilesync", "set-content",
                 "writeallbytes", "replace", "writefile", "files.write", "writeall")
#: what makes encrypting in place ransomware rather than a key rotation: a key made there and then (not the user's
#: own, from their configuration) or sent away, or a note asking for payment
_KEY_MAKERS = (r"\bgenerate_key\s*\(|\bsecrets\.(?:token_\w+|randbits)\s*\(|\bos\.urandom\s*\(|\bget_random_bytes\s*\(|"
               r"\brandom_bytes\s*\(|\bopenssl_random_pseudo_bytes\s*\(|\bKeyGenerator\b|\bcrypto\.randomBytes\s*\(|"
               r"\bgetRandomValues\s*\(|\bGenerateKey\s*\(|\brand\.Read\s*\(")
NOT_THE_USERS_KEY = lazy(_KEY_MAKERS + r"|\brandom\.\w+\s*\(|\bransom\w*|\bbitcoin\b|\bBTC\b|\bmonero\b|\bpay\b|"
                         r"赎金|比特币|支付", re.IGNORECASE)
#: a key made there and then, assigned to a name (group 1): the key whose fate decides (:data:`KEY_WRITE`)
KEY_MADE = lazy(r"^[ \t]*(?:(?:const|let|var|my)\s+)?\$?([A-Za-z_]\w*)\s*:?=\s*[^\n]*?(?:" + _KEY_MAKERS + ")",
                re.MULTILINE)
#: a write of something to a file or a key store (the line is read for what and where)
KEY_WRITE = lazy(r"\.write(?:_bytes|_text)?\s*\(|\bwrite\w*\s*\(|\bkeyring\.set_password\s*\(|\bsave\w*_key\s*\(|"
                 r"\bSet-Content\b|\bOut-File\b|\bWriteAll\w+\s*\(|>\s*\S", re.IGNORECASE)
#: a place that does not outlive the session (a key kept there is gone by the time it is needed)
TEMPORARY_PLACE = lazy(r"/tmp\b|/dev/shm\b|XDG_RUNTIME_DIR|\bTEMP\b|\bTMP(?:DIR)?\b|\bgettempdir\b|\bmkdtemp\b|"
                       r"\btempfile\b|\bNamedTemporaryFile\b|%TEMP%|\$env:TEMP", re.IGNORECASE)
#: a file or a stored secret removed
REMOVED = lazy(r"\bos\.(?:remove|unlink|truncate)\s*\(|\.unlink\s*\(|\bshred\b|\bdelete_password\s*\(|\brm\s+-?\w*\s|"
               r"\brmtree\s*\(|\['rm'|\[\"rm\"|\.truncate\s*\(|"
               r"\bRemove-Item\b|\bFile\.Delete\s*\(|\bfs\.unlink\w*\s*\(", re.IGNORECASE)
RANSOM_NOTE = lazy(r"\bransom\w*|\bbitcoin\b|\bBTC\b|\bmonero\b|\bpay\b|赎金|比特币|支付", re.IGNORECASE)
#: a catalogue filtered (``LIKE 'tmp_%'``, ``startswith("test_")``): some tables dropped, not every one
FILTERED = lazy(r"\bLIKE\b|\bstartswith\b|\bendswith\b|\bif\b|\bWHERE\s+\w+\s*(?:=|IN)\b|\bmatch\w*\s*\(",
                re.IGNORECASE)
#: every table of a database dropped: a DROP run over what the catalogue lists
DROP_EVERY_TABLE = lazy(r"\b(?:pg_tables|sqlite_master|information_schema\.tables|SHOW\s+TABLES|get_table_names|"
                        r"sorted_tables|table_names\s*\(\))\b(?:(?!\b(?:def|return|function|func)\b)[\s\S]){0,400}?\bfor\b"
                        r"(?:(?!\b(?:def|return|function|func)\b)[\s\S]){0,200}?DROP\s+TABLE|"
                        r"\bfor\b[^\n]{0,120}\b(?:pg_tables|sqlite_master|information_schema\.tables|SHOW\s+TABLES|"
                        r"get_table_names|sorted_tables)\b[\s\S]{0,200}?DROP\s+TABLE", re.IGNORECASE)
#: files enumerated (a tree, a folder, a pattern)
WALK = lazy(r"\bos\.walk\s*\(|\bos\.scandir\s*\(|\bos\.listdir\s*\(|\bglob\.i?glob\s*\(|\.r?glob\s*\(|\.iterdir\s*\(|"
            r"\bGet-ChildItem\b[^\n]*-Recurse|\bfs\.readdir(?:Sync)?\s*\(|\bfilepath\.Walk\w*\s*\(|\bDir\.glob\b|"
            r"\bDirectory\.(?:GetFiles|EnumerateFiles)\s*\(|\bfind\s+\S+\s+-type\s+f\b|\bFiles\.walk\s*\(|"
            r"\bRecursiveDirectoryIterator\b|\bscandir\s*\(|\.schedule\s*\(\s*\w+\s*\(\s*\)\s*,|\bfs\.watch\s*\(|"
            r"\bchokidar\.watch\s*\(|\bFileSystemWatcher\b")
#: contents encrypted
ENCRYPT = lazy(r"\bFernet\b|\bAES\b|\bChaCha20\w*\b|\.encrypt\s*\(|\bcreateCipher\w*\s*\(|\bCipher\.getInstance\b|"
               r"\bopenssl\s+enc\b|\bgpg\s+(?:-c|--symmetric|-e|--encrypt)\b|\bcrypto\.subtle\.encrypt\b|"
               r"\bRijndael\w*\b|\bCreateEncryptor\s*\(|\^\s*key\b|\bxor\b|\^=|\bopenssl_encrypt\s*\(|"
               r"\bsodium_crypto_secretbox\s*\(")
#: originals deleted or overwritten
DESTROY_ORIGINAL = lazy(r"\bos\.(?:remove|unlink)\s*\(|\.unlink\s*\(|\bshred\b|\bfs\.unlink\w*\s*\(|"
                        r"(?<![\w.>])unlink\s*\(|"
                        r"\bRemove-Item\b|\bFile\.Delete\s*\(|\bos\.Remove\s*\(|\bopen\s*\(\s*(?:\w+|"
                        r"os\.path\.join\s*\([^)\n]*\))\s*,\s*['\"](?:w|r\+|wb|rb\+|r\+b)['\"]|\.write_bytes\s*\(|"
                        r"\bwriteFileSync\s*\(\s*\w+\s*,|\bSet-Content\b|\bWriteAllBytes\s*\(|\bos\.replace\s*\(|"
                        r"\bos\.WriteFile\s*\(\s*\w+\s*,|\bFiles\.(?:delete\w*|write)\s*\(|\bFile\.WriteAll\w+\s*\(")
LOOP_WORDS = ("while", "count(", "cycle(", "repeat(", "for (", "for(", "for {", "loop {", "range(")
#: the loop of a flood: unbounded, or a big count
UNBOUNDED_LOOP = lazy(r"\bwhile\s*\(?\s*(?:True|true|1|!0|\$true)\s*\)?\s*(?::|\{)|"
                      r"\bitertools\.count\s*\(|"
                      r"\bfor\s+[\w, ]+\s+in\s+itertools\.(?:cycle\s*\(|repeat\s*\([^,()]*\)\s*:)|"
                      r"\bwhile\s*\(\s*(?:true|1|!0)\s*\)\s*(?=[A-Za-z_$])|"
                      r"\bfor\s*\(\s*;\s*;\s*\)|\bwhile\s+:\s*;?|"
                      r"\bwhile\s+true\s*;?\s*do\b|\bloop\s*\{|\bfor\s*\{|\bsetInterval\s*\(|"
                      r"\bfor\s+\w+\s+in\s+range\s*\(\s*(?:\d(?:_?\d){5,}|10\s*\*\*\s*(?:[6-9]|\d\d)|1e[6-9])|"
                      r"\bfor\s*\(\s*(?:let|var|int|long)\s+\w+\s*=\s*0\s*;\s*\w+\s*<\s*\d(?:_?\d){4,}")
#: what a flood repeats: a request or connection started
STARTS_REQUEST = lazy(r"\brequests\.\w+\s*\(|"
                      r"\b(?:s|sess|session|client|http|h|conn|api)\.(?:get|post|put|head|request)\s*\(|"
                      r"\bhttpx\.\w+\s*\(|\burlopen\s*\(|\.connect\s*\(|\.sendto\s*\(|"
                      r"\bfetch\s*\(|\baxios\.\w+\s*\(|\bhttps?\.(?:get|request)\s*\(|\bhttp\.(?:Get|Post)\s*\(|"
                      r"\bcurl\b|\bInvoke-WebRequest\b|\biwr\b|\bping\b|\bthreading\.Thread\s*\(|"
                      r"\bsocket\.socket\s*\(|\bmultiprocessing\.Process\s*\(")
#: what an exhausting loop repeats: memory, files, processes or threads taken and never given back
EXHAUSTS = lazy(r"\.append\s*\(|\.[wW]rite\s*\(|\bopen\s*\([^)\n]*['\"][wa]b?['\"]|\bos\.makedirs\s*\(|\bPopen\s*\(|"
                r"\bos\.fork\s*\(|\bspawn(?:Sync)?\s*\(\s*process\.(?:execPath|argv)|"
                r"\bProcess\s*\(|\bbytearray\s*\(|\bmalloc\s*\(|\bnew\s+Array\s*\(|\bThread\s*\(|\bStart-Job\b|"
                r"\bgo\s+\w+\s*\(|\.push\s*\(")
#: what bounds a loop that takes: it consumes something that runs out (a queue, an iterator, a stream)
CONSUMES = lazy(r"\.get\s*\(|\ba?next\s*\(|\.pop\w*\s*\(|\.shift\s*\(|\.dequeue\s*\(|\bawait\b|\.recv\w*\s*\(|<-\s*\w|"
                r"\bselect\s*\{|"
                r"\.read\w*\s*\(")
#: what makes a repeating loop polite: a pause, an exit, a bound
PAUSE = lazy(r"\b(?:time\.|asyncio\.|Thread\.|Start-)?sleep\b|\bSleep\s*\(|\bsetTimeout\b|\bbreak\b|\breturn\b|"
             r"\bexit\b|\braise\b|\bwait\w*\s*\(|\.join\s*\(\s*(?:timeout\s*=[^)]*)?\)|\bbackoff\b|\bretry\b|\bretries\b|"
             r"\baccept\s*\(|\brecv\w*\s*\(|\b(?:stdin|sock\w*|conn\w*|ser\w*|port|reader|\$reader|ws|client|pipe)\s*\.\s*"
             r"read\w*\s*\(|\bReadLine\s*\(|\bselect\s*\(|\bpoll\s*\(|\btimer\b|\bStart-Sleep\b|\bsleep\s+\d|"
             r"\binput\s*\(|\binotifywait\b|(?:^|[=(,:{;\n]|\bcase|\breturn)\s*<-\s*\w|\bb[lr]pop\w*\s*\(|"
             r"\.get\s*\(\s*(?:block\w*\s*=[^)]*|timeout\s*=[^)]*)?\)|\basync\s+for\b|\bRead-Host\b|(?<![\w.])gets\b",
             re.IGNORECASE)

# ------------------------------------------------------------------------------------------------- the reader's help
#: a line that assigns: the names it binds (group 1), in Python, JavaScript, shell, PowerShell, Go, Ruby, PHP
ASSIGNMENT = lazy(r"^\s*(?:(?:const|let|var|my|local|final|auto|val|set|export|global)\s+)?"
                  r"((?:\$|@)?(?:(?:self|this)\.)?[A-Za-z_]\w*"
                  r"(?:\[[^\]\n]{0,40}\])?(?:\s*,\s*(?:\$|@)?[A-Za-z_]\w*)*)\s*(?::=|\+=|\|=|<<|=(?![=~]))",
                  re.MULTILINE)
#: names bound by ``with ... as f``, ``for x in ...``, a lambda's or an arrow function's parameter
BINDING = lazy(r"\bfor\s+(?:_\s*,\s*)?([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)?)\s*:=\s*range\b|"
               r"\bas\s+([A-Za-z_]\w*)\s*:|\bfor\s+\(?\s*(?:(?:const|let|var)\s+)?([A-Za-z_]\w*(?:\s*,\s*"
               r"[A-Za-z_]\w*)*)\s*\)?\s+(?:in|of)\b|\bforeach\s*\(\s*\$\w+\s+as\s+\$(\w+)|\bforeach\s*\(\s*\w+\s+(\w+)\s+in\b")
#: Go's ``if b, err := ...`` (tried only in a text holding ``:=``)
GO_IF_BINDING = lazy(r"\bif\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*:=")
#: a Ruby block's parameters (``.each do |rel|``, ``{ |f| ... }``; tried only in a text holding ``|``)
BLOCK_BINDING = lazy(r"(?:\bdo|\{)[ \t]*\|\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*\|")
#: a call on an object (``img.save(buf)``, ``sf.write(path, rec)``): data flows between the object and its
#: arguments (group 1 the object, group 2 the arguments' start)
METHOD_CALL = lazy(r"(?:^|(?<=[;{}])|(?<=\)\s))[ \t]*(?:await\s+)?\$?([A-Za-z_]\w*)(?:\.[A-Za-z_]\w*){0,3}\.(\w+)\s*"
                   r"\((?=[^\n]*[A-Za-z_])", re.MULTILINE)
#: ``print(data, file=buf)``: the data goes into ``buf`` (group 1)
PRINT_TO = lazy(r"^[ \t]*print\s*\((?=[^\n]*\bfile\s*=\s*([A-Za-z_]\w*))", re.MULTILINE)
#: the calls on an object through which data moves between it and its arguments (``img.save(buf)``,
#: ``msg.set_content(body)``); a login, a connect or a configuration call moves none
DATA_METHODS = frozenset({"save", "write", "writelines", "append", "extend", "update", "set_content", "set_payload",
                          "attach", "add", "put", "push", "insert", "dump", "copy", "copyfileobj", "writestr",
                          "add_attachment", "set_data", "feed", "read", "readinto", "concat", "join", "format",
                          "imwrite", "savefig", "to_file", "write_bytes", "write_text", "export", "compress",
                          "setdefault", "__setitem__", "appendleft", "extendleft", "assign", "set", "writerow",
                          "writerows", "addfile", "add_field", "add_header", "put_nowait", "__iadd__",
                          "add_paragraph", "add_run", "add_text", "appendChild", "append_child", "set_header",
                          "add_data", "WriteString", "Write", "WriteLine", "AppendLine", "Append", "AppendFormat",
                          "Add", "Put", "Enqueue", "Insert", "Push", "writeString", "write_all", "append_data",
                          "setItem", "set_item", "addAll", "putAll", "merge"})
#: ``import sounddevice as sd``, ``import requests as r``: (the module, its alias)
ALIAS = lazy(r"\bimport\s+([\w.]+)\s+as\s+(\w+)|,\s*([\w.]+)\s+as\s+(\w+)")
#: ``from shutil import rmtree as tidy``, ``from os import (environ, getenv)``: (the module, the names imported)
FROM_IMPORT = lazy(r"^[ \t]*from\s+([A-Za-z_][\w.]*)\s+import\s+(?:\(([^()]*)\)|([^\n;#(]+))", re.MULTILINE)
#: a name bound to a callable or a module's attribute, nothing else (``run = exec``, ``send = requests.post``): read
#: as what it names; group 2 the value
RENAMED = lazy(r"^[ \t]*(?:(?:const|let|var)\s+)?([A-Za-z_]\w*)\s*(?::\s*[\w\[\], .|]+?)?\s*=(?!=)\s*(?:(exec|eval|"
               r"compile|__import__|system|popen|getattr|(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*)|\S[^\n]*?)[ \t]*;?[ \t]*"
               r"(?:#[^\n]*)?$", re.MULTILINE)
#: a request to the page's own server (a path, no host): not a send elsewhere
SAME_ORIGIN = lazy(r"(?:fetch|axios(?:\.\w+)?|\$\.(?:post|ajax|get)|\.open)\s*\(\s*(?:['\"`](?:GET|POST|PUT|PATCH|"
                   r"DELETE)['\"`]\s*,\s*)?['\"`]\.?/(?!/)")
#: headers and credentials handed to the call itself (a token in an Authorization header, a CSRF cookie, ``-i`` for
#: ssh): use, not a leak
CREDENTIALS_GIVEN = lazy(
    r"['\"]?(?:Authorization|Proxy-Authorization|X-[\w-]*(?:Key|Token|Auth|CSRF|XSRF)[\w-]*|Cookie|Api-?Key|Token)"
    r"['\"]?\s*[:=]\s*(?:f?\"[^\"\n]*\"|f?'[^'\n]*'|`[^`\n]*`|[\w.\[\]'\"()$:]+)|"
    r"(?:-H|--header)\s+['\"](?:Authorization|Proxy-Authorization|X-[\w-]*(?:Key|Token|Auth|CSRF)[\w-]*|Cookie)"
    r":[^'\"\n]*['\"]|\bsetRequestHeader\s*\(\s*['\"](?:Authorization|X-[\w-]*(?:Token|CSRF|Key)[\w-]*)['\"][^)]*\)|"
    r"(?:-u|--user)\s+(?:\"[^\"]*\"|'[^']*'|\S+)|\bauth\s*=\s*\((?:[^()\n]|\([^()\n]*\)){0,200}\)", re.IGNORECASE)
#: files a tool is told to authenticate with (``scp -i ~/.ssh/id_ed25519``, ``curl --netrc-file ~/.netrc``): the file
#: is opened by the tool, not sent
TOOL_CREDENTIALS = lazy(r"(?<=\s)-i\s*(?:\"(?!https?:)[^\"\s-][^\"]*\"|'(?!https?:)[^'\s-][^']*'|"
                        r"(?!https?:)[^\s'\"-]\S*)|"
                        r"(?:--netrc-file|--cert|--key|--cacert|--private-key|--key-file|-o\s*IdentityFile=)[\s=]*"
                        r"(?:\"[^\"]*\"|'[^']*'|\S+)|--netrc\b|-o\s*['\"]IdentityFile=[^'\"\n]*['\"]", re.IGNORECASE)
#: a call's own arguments that hand it a key or certificate to authenticate with (``pkey=k``, ``cert=(crt, key)``):
#: read only at the call's top level (``json=dict(cert=env)`` is data)
CREDENTIAL_ARGUMENTS = frozenset({"pkey", "key_filename", "cert", "client_cert", "ssl_certfile", "ssl_keyfile",
                                  "keyfile", "certfile", "ssl_context", "identity", "private_key"})
#: a function's definition: its name (one of the groups)
DEFINITION = lazy(r"^[ \t]*(?:async\s+)?def\s+(?:self\.)?([A-Za-z_]\w*[!?]?)|"
                  r"^[ \t]*(?:export\s+)?(?:async\s+)?function\s+"
                  r"([A-Za-z_$][\w$]*)|^[ \t]*(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:\([^)\n]*"
                  r"\)|[A-Za-z_]\w*)\s*=>|^[ \t]*func\s+(?:\([^)\n]*\)\s*)?([A-Za-z_]\w*)|^[ \t]*function\s+"
                  r"([A-Za-z][\w-]*)\s*[{(]", re.MULTILINE)


def present(words: tuple[str, ...], lowered: str) -> bool:
    """Whether one of ``words`` is in ``lowered`` (the text in lower case): a table's regex can match only then."""
    return any(word in lowered for word in words)
