"""Reading code for what it does: data flows from sources to sinks, harmful acts, ransomware and flood shapes.

The tables are :mod:`hermes_ctx_plugins.safety.rules.behaviour`'s; this module reads any text with them, whatever its
language and whether or not it is fenced (a note is prose and code mixed; prose rarely makes the calls these tables
name). There is no parser: a statement is a match's text through its balanced brackets to the end of its line, a
binding is a line's assignment (or ``with ... as``, ``for ... in``), a helper function is a ``def``/``function``/
``func`` and its indented or braced body. Data is followed through bindings to a fixed point and through helper
functions one call deep (a helper whose body reads a source is a source; one whose body sends is a sink), which is
what snippets written to hide their behaviour do ("def collect(): return dict(os.environ)" ...
"send(collect())"). Names are read as what they stand for (:func:`_canonical`): a module alias, a name imported from
a module (``from shutil import rmtree as tidy``) and a callable bound once to another name (``run = exec``). Bounded:
the text's first :data:`LIMIT` characters, a statement's first 800; linear in the bindings (a walk over who uses
what); a table's regex is tried only where one of its words is.

A mention is not the act, and each way of telling them apart is where an attacker walks, so each is narrow (two
reviews in session 41 got 73 hostile variants through each; the fixes were shaped on them): a comment (outside a
string); a forbidding word that is prose, not an operand (``if not blocked and ...`` names a variable) nor a string
closed before the act; a string that no runner, command substitution, pipe into a shell, ``sh -c``, startup file,
command-like configuration key or later run of its variable reaches; a harmful word that is not at a command's place
(after a wrapper with its options, or an environment assignment; in an argv list headed by a wrapper); a credential a
call is handed (a header's one token, ``-i`` with a key path, a top-level ``pkey=``), one named value of the
environment (``settings["API_URL"]``) and a hash of a key; a key an encrypting tool keeps (written as it is outside a
temporary place and the folder it encrypts, not removed, overwritten or sent).

It is over 500 lines because it is one reader: its structure (statements, blocks, bindings, helpers), its data
(sources, taint) and its findings share one text's indexes, which a split would pass around or rebuild.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from ..rules import behaviour as b
from ..rules.record import compiled, lazy
from ..rules.vocabulary import LOOPBACK, PRIVATE_HOST
from .context import _hosts as _hosts_named
from .context import _is_remote

#: how much of a text is read as code (a longer memory is read this far)
LIMIT = 100_000
_STATEMENT = 800
#: how far back on its line the words around a command are read (whether it is mentioned, quoted, echoed)
_CONTEXT = 800
#: how many bindings and helper functions a text's reading follows (a note's code has tens)
_MAX_BINDINGS, _MAX_FUNCTIONS = 50_000, 200
#: how many acts a text's reading reports (the first are enough to withhold it)
_MAX_ACTS = 20
#: how many places of one word (one table's) a text's reading looks at: a note's code holds a handful
_MAX_HITS = 500
#: how many loops, walks and encryptions a text's reading weighs, and how much of a loop's body it reads
_MAX_SHAPES, _BODY = 50, 4_000
#: an environment handed to a child process (``env=env``, ``{ env: process.env }``) is not sent anywhere
_PASSED_ENVIRONMENT = lazy(r"(?<![\w$])env\s*=\s*[\w.]+(?:\([^()\n]*\))?|(?<![\w$])env\s*:\s*[\w.]+(?:\([^()\n]*\))?"
                           r"(?=\s*[,}])")
_IDENTIFIER = lazy(r"(?<![\w.])(?:(?:self|this)\.)?[A-Za-z_]\w*|(?<=\.)[A-Za-z_]\w*(?=\s*\()")
#: a one-line string literal, and what it interpolates (f-strings, template literals, shell and PowerShell)
_STRING = lazy(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`]*`")
_INTERPOLATION = lazy(r"\{([^{}\n]*)\}|\$\{?(?:env:)?(\w+)")
#: a bare name passed to a call (not an attribute, a keyword argument's name or a string's word)
_BARE_NAMES = lazy(r"(?<![\w.'\"])([A-Za-z_]\w*)(?![\w'\"(]|\s*=[^=])")
_KEYWORDS = frozenset({"True", "False", "None", "true", "false", "null", "self", "this", "await", "new", "lambda",
                       "not", "and", "or", "in", "is", "if", "else", "for", "return", "str", "int", "bytes", "len",
                       "range"})
_EXTENDED = lazy(r"\s*(?:[/+]|\.joinpath\b|\.resolve\(\)\s*/|,\s*['\"\w])")
_JOINED = lazy(r"(?:join|Join|Combine)\s*\(\s*$|[/+]\s*$")
#: a sink that is a shell command (in a string of a line that runs nothing, it is a message: "scp failed: ...")
_SHELL_SINK = lazy(r"(?:curl|wget|scp|sftp|nc|ncat|netcat|nslookup|dig|ftp)\b", re.IGNORECASE)
#: a command's path before its name (``/sbin/``, ``C:\\Windows\\System32\\``)
_PATH_PREFIX = lazy(r"(?:[A-Za-z]:)?[\w.~-]*(?:[/\\][\w.-]*)*[/\\]$")
#: what runs the command after it: sudo (with its flags), doas, nohup, nice, timeout, env, cmd /c, powershell -c ...
_OPTIONS = r"(?:\s+--?(?:[\w-]+(?:=\S*)?)?(?:\s+[^\s'\"-][^\s'\"]*)?)*"
_WRAPPER_BEFORE = lazy(r"(?:^|[\s'\"(\[;|&`{!])(?:(?:sudo|doas|pkexec|gksudo|su|runuser|nohup|nice|setsid|env|exec|"
                       r"builtin|command|time|xargs|stdbuf|ionice|systemd-run|nsenter|unshare|watch|busybox|"
                       r"flatpak-spawn|systemctl)" + _OPTIONS + r"|"
                       r"then|do|else|loginctl|chroot(?:\s+-\S+)*\s+\S+|flock(?:\s+-\S+)*\s+\S+|"
                       r"timeout(?:\s+-\S+)*\s+\S+|at\s[^\n<]*<<<|"
                       r"ssh(?:\s+-\w+(?:\s+[^\s-]\S*)?)*\s+[\w.@-]+|start(?:\s+/\w+)*(?:\s+\"[^\"]*\")?|"
                       r"(?:[A-Za-z_]\w*=\S*\s+)*[A-Za-z_]\w*=\S*|\{|!|"
                       r"cmd(?:\.exe)?\s+/[ck]|powershell(?:\.exe)?(?:\s+-\w+)*|pwsh(?:\s+-\w+)*|"
                       r"Start-Process|Invoke-Expression|iex|(?:ba|z|da)?sh\s+-c)\s+['\"]?$", re.IGNORECASE)
#: an argv list's first item, before a later quoted item (``["sudo", "-u", "root", "reboot"]``: ``sudo``)
_ARGV_HEAD = lazy(r"[\[(]\s*['\"]([^'\"\s]+)['\"]\s*,\s*(?:['\"][^'\"\n]*['\"]\s*,\s*)*['\"]$")
_WRAPPERS = frozenset({"sudo", "doas", "nohup", "nice", "env", "exec", "setsid", "xargs", "cmd", "cmd.exe",
                       "powershell", "powershell.exe", "pwsh", "start-process", "sh", "bash", "zsh", "dash",
                       "timeout", "pkexec", "busybox", "systemctl", "loginctl", "chroot", "systemd-run", "stdbuf",
                       "ionice", "time", "command", "ssh", "runas", "psexec", "psexec.exe", "start", "su",
                       "runuser", "nsenter", "unshare", "gksudo", "flatpak-spawn", "flock", "watch", "at",
                       "builtin"})
#: a string being echoed or printed by the shell (``echo "to uninstall, run rm -rf ~/.app"``)
_ECHOED = lazy(r"(?:^|[;&|]\s*)(?:echo|printf|Write-Host|Write-Output)\s+(?:-\w+\s+)*['\"][^'\"]*$")
#: a configuration key and the start of its value (YAML, JSON, TOML, INI) before a string, no call open
_SETTING = lazy(r"[ \t]*-?[ \t]*['\"]?([\w.-]+)['\"]?[ \t]*[:=][ \t]*[\[{]?[^()\n]*$")
#: keys whose value a tool runs (CI steps, services, containers)
_COMMAND_KEYS = frozenset({"run", "command", "commands", "cmd", "script", "scripts", "exec", "execstart", "execstop",
                           "execstartpre", "entrypoint", "shell", "args", "before_script", "after_script",
                           "postinstall", "preinstall", "install", "build", "test", "start", "prestart", "poststart"})
#: a command substitution or process substitution still open in a string: the shell runs it
_SUBSTITUTION = lazy(r"\$\(|`|<\(")
#: the rest of a line piped into a shell, PowerShell's ``iex``, ``eval`` or ``xargs``
_PIPED_TO_RUN = lazy(r"\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:(?:/usr)?/bin/)?(?:ba|z|da|k)?sh\b|"
                     r"\|\s*(?:iex|Invoke-Expression|"
                     r"eval|xargs|source|python\d?|perl|ruby|node)\b", re.IGNORECASE)
#: a string handed to a shell's ``-c`` or to a process builder earlier on the line
_SHELL_RUNS_IT = lazy(r"['\"](?:/bin/)?(?:ba|z|da)?sh['\"]\s*,\s*['\"]-c|\.arg\s*\(\s*['\"]-c['\"]\s*\)|"
                      r"\bProcessBuilder\s*\(|\$SHELL\s+-c|\b(?:ba|z|da)?sh\s*<<<|\bsudo\s*\(|\bc\.(?:run|sudo)\s*\(")
#: the rest of a line writing what it echoes where it runs later (a shell's startup files, a crontab, ``at``)
_WRITTEN_TO_RUN = lazy(r">>?\s*['\"]?\S*(?:\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zprofile|"
                       r"zlogin|"
                       r"zlogout|cshrc|login)\b|crontab|/etc/cron|/etc/profile|rc\.local|/etc/init)|\|\s*(?:crontab|at|batch)\b",
                       re.IGNORECASE)
#: a key line that opens an object or a list (group 1 its indent, group 2 the key)
_OPENING_KEY_LINE = lazy(r"^([ \t]*)['\"]?([\w.-]+)['\"]?[ \t]*:[ \t]*[{\[]?[ \t]*$", re.MULTILINE)
#: a YAML list item's start (``  - "rm -rf /"``)
_LIST_ITEM = lazy(r"^[ \t]*-[ \t]*['\"]")
#: a line opening a key (group 1 its indent, group 2 the key)
_KEY_LINE = lazy(r"^([ \t]*)['\"]?([\w.-]+)['\"]?[ \t]*:[ \t]*$", re.MULTILINE)
#: where the shell runs what follows: a line's start, after a separator or a shell keyword
_AT_COMMAND_PLACE = lazy(r"(?:^|[;&|`(]|\b(?:then|do|else|eval|exec|sudo|xargs|sh\s+-c|bash\s+-c))\s*['\"]?$")
#: a call of something that runs what it is given, whatever its module
_RUN_CALL = lazy(r"(?<![\w.])(?:[\w.]*\.)?(?:run|call|check_call|check_output|system|popen|Popen|exec\w*|spawn\w*|"
                 r"shell_exec|passthru|proc_open|create_subprocess_\w+|execa\w*|iex|Invoke-Expression|eval)\s*\(",
                 re.IGNORECASE)
#: inside an argv list's later item: the list's first item (group 1)
_IN_ARGV = lazy(r"(?:\b(?:run|call|check_call|check_output|Popen|spawn\w*|execFile\w*|exec[lv]\w*)\s*\(\s*\[|"
                 r"\bCommand\s*\()\s*['\"]([^'\"\s]+)['\"]\s*,\s*(?:['\"][^'\"\n]*['\"]\s*,\s*)*['\"][^'\"\n]*$")
#: an argv list's first item that prints the rest (``["echo", "rm -rf ~"]``)
_PRINTERS = frozenset({"echo", "printf", "print", "write-host", "write-output", "notify-send", "logger"})
#: a hash object made (a digest of what is fed to it, not the data)
_DIGEST = lazy(r"\s*(?:hashlib\.\w+|hmac\.new|zlib\.crc32|xxhash\.\w+|blake3\.\w+|crypto\.createHash)\s*\([^()\n]*\)"
               r"\s*;?\s*")
#: a read of one named value (``["KEY"]``, ``.get("KEY")``, ``.getint("s", "k")``)
_NAMED_READ = lazy(r"\s*(?:\[\s*['\"]|\.\s*get\w*\s*\(\s*['\"])")
#: a shell delete's argument that is the current folder's content (``*``, ``.``, ``./*``, ``.[!.]*``)
_HERE = lazy(r"(?:^|\s)['\"]?(?:\*|\.|\./\*?|\.\[[^\]\s]*\]\*|\.\*)['\"]?(?=$|[\s),;])")
#: the ``cd`` right before a command (group 1 the folder)
_CD_BEFORE = lazy(r"\bcd\s+(['\"]?[^\s;&|'\"]+['\"]?)\s*(?:&&|;|\n)\s*(?:sudo\s+)?[^\n;&|]*$")
#: a keyword argument's name (group 1) and its ``=``
_KEYWORD_ARGUMENT = lazy(r"([A-Za-z_]\w*)\s*=(?!=)\s*")
#: an attribute read, not a method called (``.url``)
_ATTRIBUTE_READ = lazy(r"\s*\.\s*(?!(?:to_\w+|as_\w+|to[A-Z]\w*|json|dump\w*|serializ\w*|inspect|values|items|keys|"
                       r"entries|body|text|content|data|raw|all|dict|__dict__|buffer|bytes|string|str)\b)[A-Za-z_]\w*\b(?!\s*[(.\[])")
#: a ``find`` test that picks some files (not a negated one: ``! -name .bashrc`` still takes the rest)
_FIND_FILTER = lazy(r"(?<!!)(?<!-not)\s-(?:i?name|i?path|i?wholename|i?regex|[acm]time|[acm]min|newer\w*|size|empty|"
                    r"user|group|perm|links)\b")
#: a loop over a count (``for i in range(10_000_000)``): a flood when it starts requests, not an exhaustion
_COUNTED_FOR = lazy(r"for\s+\w+\s+in\b|for\s*\(\s*(?:let|var|int|long)\b")
#: a declaration without a value: the name (``var buf bytes.Buffer``, ``let out;``, ``StringBuilder sb;``)
_DECLARED = lazy(r"^[ \t]*(?:var|let|my|local|[A-Z]\w*(?:<[^<>\n]*>)?)\s+([A-Za-z_]\w*)\b(?!\s*[=(])", re.MULTILINE)
#: :data:`~..rules.behaviour.DATA_METHODS` whatever their case (PowerShell's ``$bmp.Save``, C#'s ``sb.Append``)
_DATA_METHODS = frozenset(name.lower() for name in b.DATA_METHODS)
#: ``const [src] = ...``, ``const { a, b: c } = ...``: the names bound (group 1)
_DESTRUCTURED = lazy(r"^[ \t]*(?:const|let|var)\s*[\[{]\s*([\w\s,:]+?)\s*[\]}]\s*=(?!=)", re.MULTILINE)
#: the default of a lookup (``os.environ.get("ROOT", os.path.expanduser("~"))``, ``getenv("R", home)``, ``default=``)
_DEFAULT_ARGUMENT = lazy(r"(?:\.get|getenv|Getenv)\s*\(\s*['\"][^'\"]*['\"]\s*,\s*(.+?)\s*\)\s*$|"
                         r"\bdefault\s*=\s*([^,)\n]+)")
#: where one bound value offers alternatives (``a || b``, ``a ?? b``, ``a or b``)
_ALTERNATIVES = lazy(r"\|\||\?\?|\bor\b")
#: a class the text defines (group 1)
_CLASS = lazy(r"^[ \t]*(?:export\s+)?class\s+([A-Za-z_]\w*)", re.MULTILINE)
#: a name bound to a constructed object (groups: the name, the class)
_INSTANCE = lazy(r"^[ \t]*(?:(?:const|let|var)\s+)?([A-Za-z_]\w*)\s*=\s*(?:new\s+)?([A-Za-z_]\w*)\s*\(", re.MULTILINE)
#: a request's answer bound to a name (``... s.get(u) as r``, ``r = requests.get(u)``: groups 1 / 2)
_ANSWER_BOUND = lazy(r"(?:\.(?:get|post|put|head|request)|\burlopen|\bfetch)\s*\([^\n]*?\)\s*as\s+(\w+)|"
                     r"(\w+)\s*=\s*(?:await\s+)?(?:requests|httpx|s|session|client|http)\.(?:get|post|put|head|request)\s*\(")
#: the environment as a whole, right after an ``=`` (what object destructuring picks named values of)
_ENVIRONMENT_WHOLE = lazy(r"\s*(?:process\.env|os\.environ|ENV|\$_ENV)\b")
#: what is piped into a process's stdin (group 1 the stream: ``sock.pipe(sh.stdin)``)
_PIPED_INTO_STDIN = lazy(r"((?:[A-Za-z_$][\w$]*\.)*[A-Za-z_$][\w$]*)\s*\.\s*pipe\s*\(\s*[\w$]+\.stdin\b")
#: a stream that is local: a file's, or an incoming HTTP request's
_LOCAL_STREAM = lazy(r"\bcreateReadStream\s*\(|\bfs\.|\bReadable\.from\s*\(|\bprocess\.stdin\b")
#: a PHP variable bound to a function name hidden from a reader: decoded, built from pieces, or a runner's name
_HIDDEN_FUNCTION = lazy(r"\$(\w+)\s*=\s*(?:(?:base64_decode|str_rot13|strrev|gzinflate|hex2bin|urldecode|chr|implode|"
                        r"join|sprintf)\s*\(|['\"]\w*['\"]\s*\.|\$\w+\s*\.\s*[$'\"]|\"[^\"\n]*\\x[0-9a-fA-F]{2}|"
                        r"\$_(?:GET|POST|REQUEST|COOKIE)\b)")
#: a comment's marker, after white space or at a line's start: ``#`` (not a shebang's) or ``//`` (not after an operand,
#: nor a path's start: ``//bin/rm``)
_COMMENT_MARK = lazy(r"(?:^|(?<=\s))(?:#(?!!)|(?<![\w)\]]\s)//(?![\w.-]+/))")
#: a PHP variable bound to one function's name as a plain literal (groups: the variable, the function)
_NAMED_FUNCTION = lazy(r"\$(\w+)\s*=\s*['\"](\w+)['\"]\s*;")
#: PHP functions that run what they are given
_PHP_RUNNERS = frozenset({"system", "exec", "passthru", "shell_exec", "popen", "proc_open", "assert", "eval",
                          "pcntl_exec"})
#: a PHP variable bound to a request's input
_REQUEST_VALUE = lazy(r"\$(\w+)\s*=\s*\$_(?:GET|POST|REQUEST|COOKIE)\b")
#: a PHP variable called as a function (group 1) with a variable argument (group 2)
_VARIABLE_CALL = lazy(r"\$(\w+)\s*\(\s*(?:\w+\s*\(\s*)?(\$\w+)")
#: a statement that fills a file: a write, a copy, an archive, a dump, a redirect (what it holds is read for sources)
_STAGES = lazy(r"\.write(?:_text|_bytes)?\s*\(|\bjson\.dump\s*\(|\bpickle\.dump\s*\(|\bshutil\.(?:copy\w*|make_archive|"
               r"move)\s*\(|\bcopyfile\s*\(|\.add\s*\(|\bwriteFileSync\s*\(|\bfs\.(?:copyFile|writeFile)\w*\s*\(|"
               r"\bos\.WriteFile\s*\(|\bio\.Copy\s*\(|\bFile\.(?:Copy|WriteAll\w+)\s*\(|\bCopy-Item\b|\bCompress-Archive\b|"
               r"\b(?:tar|zip|7z|cp|rsync|gzip|base64)\s+(?:-\S+\s+)*\S|\b(?:cat|printenv|env)\b[^\n|]*>\s*\S|"
               r"\bOut-File\b|\bioutil\.WriteFile\s*\(|\bcreateWriteStream\s*\(")
#: the words one of which every :data:`_STAGES` match holds
_STAGE_WORDS = (".write", "json.dump", "pickle.dump", "shutil.", "copyfile", ".add(", "writefile", "io.copy",
                "file.copy", "file.writeall", "copy-item", "compress-archive", "tar ", "zip ", "7z ", "cp ", "rsync ",
                "cat ", "gzip ", "base64 ", "out-file", "ioutil.writefile", "createwritestream",
                "printenv", "env ")
#: an archiver's or a copier's exclusion (what it names is left out)
_EXCLUDED = lazy(r"--exclude(?:-from)?[= ]\s*(?:\"[^\"]*\"|'[^']*'|\S+)|(?<=\s)-x\s+(?:\"[^\"]*\"|'[^']*'|\S+)")
#: a file opened for writing (a file object bound from it)
_OPENS_FOR_WRITING = lazy(r"\bopen\s*\([^)\n]*['\"][wax]b?\+?['\"]|\bZipFile\s*\([^)\n]*['\"][wax]['\"]|"
                          r"\btarfile\.open\s*\([^)\n]*['\"]w|\bos\.Create\s*\(|\bFile\.(?:Create|OpenWrite)\s*\(|"
                          r"\bcreateWriteStream\s*\(")
#: a string that names a file (a folder and a name, or a name with an extension)
_PATH_LIKE = lazy(r"(?:[~$%]|[A-Za-z]:)?[\w.${}%~-]*[/\\][\w./\\${}%~-]+|[\w-]+\.(?:zip|tgz|tar|gz|json|txt|db|sqlite|"
                  r"log|csv|bin|dat|7z|png|jpg|bmp|enc|bak|out|dump|pem|key)")
#: a file path written as a shell word (``/tmp/k.tgz``, ``$TMPDIR/x.zip``)
_SHELL_PATH = lazy(r"(?<![\w/'\"=:@.-])((?:/|~/|\$\w+/)[\w./${}-]+\.(?:zip|tgz|tar|gz|json|txt|db|sqlite|log|csv|"
                   r"bin|dat|7z|png|"
                   r"jpg|bmp|enc|bak|out|dump|pem|key))\b")
#: a count read (``.length``, ``.size``, ``.Count``)
_COUNT_READ = lazy(r"\s*\.\s*(?:length|size|count|Count|Length)\b(?!\s*\()")
#: a string literal's text, however short (group 1: ``'.'``)
_ANY_STRING = lazy(r"['\"]([^'\"\n]+)['\"]")
#: a file mode, not a place (``'wb'``)
_MODE = lazy(r"[rwaxbt+U]{1,4}")
#: a call opening the file a write goes to
_OPENER = lazy(r"\b(?:open|Path|File|fopen|os\.open|io\.open|codecs\.open)\s*\(")
#: a string literal's text (group 1)
_STRING_VALUE = lazy(r"['\"]([^'\"\n]{2,})['\"]")
#: keys shaped like a command's (``prepare``, ``postbuild``, ``ExecStartPost``, ``ansible.builtin.shell``, ``entry``)
_COMMAND_KEY_SHAPE = lazy(r"^(?:pre|post)[\w-]*$|^exec\w*$|(?:^|[._])(?:shell|command|cmd|cmds|script|raw|bash|sh|"
                          r"pwsh|powershell)$|^(?:entry|prepare|hook|hooks|action|on_\w+|task|tasks|runcmd|bootcmd|"
                          r"before_\w+|after_\w+|install|clean|deploy|release|setup)$")
#: keys every value under which is a command (package scripts, git hooks, a task runner's tasks)
_COMMAND_PARENTS = frozenset({"scripts", "hooks", "husky", "tasks", "targets", "commands", "aliases", "alias",
                              "runcmd", "bootcmd", "steps"})
#: calls that run what they are given, whatever their module (``run``, ``call``, ``system``, ``spawn`` ...)
_RUNNERS = frozenset({"execute", "run_cmd", "sudo", "local", "cmd", "run", "call", "check_call", "check_output",
                      "popen", "system", "exec", "execsync", "spawn",
                      "spawnsync", "execfile", "start", "shell_exec", "passthru", "eval", "command",
                      "create_subprocess_shell", "create_subprocess_exec", "execa", "execacommand",
                      "execacommandsync", "execasync", "exec_command", "proc_open", "popen2", "popen3", "iex",
                      "invoke-expression", "shell", "getoutput", "getstatusoutput", "run_command", "sh"})
#: what a statement's end is looked for among: brackets, line ends, semicolons
_STRUCTURE = lazy(r"[()\[\]{}\n;]")
#: ``Path(x)``, ``pathlib.Path(x)``, ``new File(x)``: the folder ``x``
_WRAPPED = lazy(r"^(?:pathlib\.)?Path\s*\(\s*(.+?)\s*\)$|^new\s+File\s*\(\s*(.+?)\s*\)$")
#: a ``for`` binding's iterable
_FOR_IN = lazy(r"^(?:for|foreach)\s*\(?\s*(?:var\s+|const\s+|let\s+)?\w+(?:\s*,\s*\w+)?\s+(?:in|of)\s+(.+?)\s*\)?"
              r"\s*[:{]?$")
#: what a helper returns or yields
_RESULT = lazy(r"\b(?:return|yield)\s+([^\n]+)")
#: a line that is a comment or a quotation: what it names is mentioned, not done
_COMMENT = lazy(r"[ \t]*(?:#(?!!)|//(?![\w.-]+/)|/\*(?![^\n]*\*/\s*\S)|--\s|"
                r">\s+(?![/~$&\d])(?!\S+\s+(?:sudo\s+)?(?:rm|curl|wget|shutdown|reboot|halt|poweroff|mkfs\S*|dd|nc|"
                r"python\d?|node|bash|sh|perl|ruby|chmod|chown|kill\w*)\b)|REM\b)")
#: where a clause of a line ends (a forbidding word before it does not reach past it)
_CLAUSE_END = lazy(r";|&&|\|\||\||(?<![<>&|])&(?![&>\d])|\*/")
#: what makes a forbidding word an operand (a name in code) rather than a warning: the token before it, or after it
_OPERAND_BEFORE = lazy(r"(?:\b(?:not|if|elif|unless|while|until)|[=(])\s*$")
_OPERAND_AFTER = lazy(r"\s*(?:\b(?:and|or|in|then|is|if|else)\b|[:),=\]]|\.\w)")
#: where a shell delete's arguments end
_ARGUMENTS_END = lazy(r"[`;|&#\n]|\)\s*$")
_I = re.IGNORECASE | re.MULTILINE


@dataclass(frozen=True)
class Act:
    """What a piece of code does: a finding's kind, what the user is told, and where (``text[start:end]``)."""

    kind: str
    detail: str
    start: int
    end: int


def code_acts(text: str) -> list[Act]:
    """What the code in ``text`` does that a memory must not carry (``[]`` for prose and harmless code).

    With aliases (:func:`_canonical`) the text is read twice, as written and with its aliases read as what they name:
    a reading only adds acts (an alias naming a real module after a name, ``from typing import Any as subprocess``,
    must not hide the module's calls)."""
    text = text[:LIMIT]
    aliased, back = _canonical(text)
    acts = _read(text)
    if back is not None:
        seen = {(a.kind, a.start, a.end) for a in acts}
        for a in _read(aliased):
            moved = Act(a.kind, a.detail, back(a.start), back(a.end))
            if (moved.kind, moved.start, moved.end) not in seen:
                seen.add((moved.kind, moved.start, moved.end))
                acts.append(moved)
    return acts[:_MAX_ACTS]


def _read(text: str) -> list[Act]:
    lowered = text.lower()
    if len(lowered) != len(text):  # 'İ' lowers to two characters: positions must stay the text's
        lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    reader = _Reader(text, lowered)
    return (reader.flows() + reader.acts() + reader.shapes())[:_MAX_ACTS]


def _canonical(text: str) -> tuple[str, Callable[[int], int] | None]:
    """``text`` with each alias written as what it names, and how to map a position of that text back (None: no
    alias, the same text): a module alias (``import requests as r``: ``r.post(`` reads ``requests.post(``), a name
    imported from a module (``from os import environ``: ``environ`` reads ``os.environ``; ``from shutil import rmtree
    as tidy``: ``tidy(`` reads ``shutil.rmtree(``) and a callable or module attribute bound once to another name
    (``run = exec``, ``send = requests.post``). Where an alias is defined is left as written."""
    modules: dict[str, str] = {}  # alias -> module, read before a dot
    names: dict[str, str] = {}  # bare name -> what it stands for
    defined: list[tuple[int, int]] = []  # where they are defined (not rewritten)
    if "import" in text:
        for m in b.FROM_IMPORT.finditer(text):
            defined.append(m.span())
            for item in (m[2] or m[3]).split(","):
                parts = item.replace("\\", " ").split()
                if len(parts) in (1, 3) and parts[0].isidentifier() and (len(parts) == 1 or (
                        parts[1] == "as" and parts[2].isidentifier())):
                    names[parts[-1]] = f"{m[1]}.{parts[0]}"
        for m in b.ALIAS.finditer(text):
            if any(lo <= m.start() < hi for lo, hi in defined):
                continue
            module, alias = (m[1], m[2]) if m[1] else (m[3], m[4])
            if alias != module:
                modules[alias] = module
                defined.append(m.span())
    if "=" in text:
        values: dict[str, set[str | None]] = {}
        for m in b.RENAMED.finditer(text):
            values.setdefault(m[1], set()).add(m[2])
        for m in b.RENAMED.finditer(text):  # every binding of the name the same callable
            if values[m[1]] == {m[2]} and m[2] is not None and m[1] != m[2] and m[1] not in modules and (
                    m[1] not in names):  # an imported name stays what it was imported as
                names[m[1]] = names.get(m[2], m[2])
                defined.append(m.span())
    if not modules and not names:
        return text, None
    alternatives = [rf"(?P<module>{'|'.join(map(re.escape, modules))})\." if modules else "",
                    rf"(?P<name>{'|'.join(map(re.escape, names))})(?![\w'\"]|\s*=(?!=))" if names else ""]
    pattern = re.compile(rf"(?<![\w.$'\"])(?:{'|'.join(a for a in alternatives if a)})")
    pieces, marks, last, shift = [], [], 0, 0  # marks: (where a replacement ends in the new text, shift so far)
    defined.sort()
    for m in pattern.finditer(text):
        if any(lo <= m.start() < hi for lo, hi in defined):
            continue
        module = m.groupdict().get("module")
        old = module if module is not None else m["name"]
        new = modules[old] + "." if module is not None else names[old]
        pieces += [text[last:m.start()], new]
        shift += len(new) - len(m[0])
        last = m.end()
        marks.append((m.end() + shift, shift))
    if not marks:
        return text, None
    pieces.append(text[last:])
    ends = [end for end, _ in marks]

    def back(position: int) -> int:
        i = bisect.bisect_right(ends, position) - 1
        return max(0, min(len(text), position - (marks[i][1] if i >= 0 else 0)))

    return "".join(pieces), back


def _excerpt(text: str) -> str:
    words = " ".join(text.split())
    return words if len(words) <= 60 else words[:57] + "…"


def _remote(segment: str) -> bool:
    """Whether ``segment`` names no host or one that is not loopback (a send with no visible host counts): the
    phrase rules' test, on the lower-case text they read."""
    return _is_remote(segment.lower())


@dataclass
class _Function:
    name: str
    start: int
    end: int
    parameters: tuple[str, ...]


@dataclass
class _Reader:
    text: str
    lowered: str
    #: tainted names: name -> the category of data they hold
    tainted: dict[str, str] = field(default_factory=dict)
    #: the files filled from a source (:meth:`staged`), as sources of their own
    staged_sources: list[tuple[str, re.Pattern[str]]] = field(default_factory=list)
    #: which bindings are calls on an object (they taint only names something assigns: not a module's)
    _calls: set[int] = field(default_factory=set)
    #: each line's comment start, by the line's start (:meth:`comment_in_line`)
    _comments: dict[int, int] = field(default_factory=dict)

    # ------------------------------------------------------------------------------------------------- structure
    def statement(self, start: int) -> tuple[int, int]:
        """From ``start`` through its balanced brackets to the end of the line (at most 800 characters)."""
        depth, stop = 0, min(len(self.text), start + _STATEMENT)
        for m in _STRUCTURE.finditer(self.text, start, stop):
            c = m[0]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth < 0:
                    return start, m.start()
            elif depth <= 0 and (c == "\n" or m.start() > start):
                return start, m.start()
        return start, stop

    def line_of(self, pos: int) -> tuple[int, int]:
        first = self.text.rfind("\n", 0, pos) + 1
        last = self.text.find("\n", pos)
        return first, len(self.text) if last < 0 else last

    def block(self, head_end: int, indent: int, braced: bool) -> tuple[int, int]:
        """The body after a header ending at ``head_end``: braced (to the matching brace), else the lines indented
        deeper than ``indent`` (the rest of the header's own line included)."""
        text = self.text
        if braced:
            open_at = text.find("{", head_end - 1 if head_end else 0)
            if open_at >= 0:
                depth = 0
                for i in range(open_at, min(len(text), open_at + 20_000)):
                    if text[i] == "{":
                        depth += 1
                    elif text[i] == "}":
                        depth -= 1
                        if depth == 0:
                            return open_at, i
                return open_at, min(len(text), open_at + 20_000)
        end = self.text.find("\n", head_end)
        if end < 0:
            return head_end, len(text)
        pos = end + 1
        while pos < len(text):
            nxt = text.find("\n", pos)
            nxt = len(text) if nxt < 0 else nxt
            line = text[pos:nxt]
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                break
            pos = nxt + 1
        return head_end, min(pos, len(text))

    @cached_property
    def functions(self) -> list[_Function]:
        found = []
        for m in b.DEFINITION.finditer(self.text):
            name = next(g for g in m.groups() if g)
            first, last = self.line_of(m.start())
            line = self.text[first:last]
            indent = len(line) - len(line.lstrip())
            braced = "{" in line or (not line.rstrip().endswith(":") and "=>" not in line)
            _, end = self.block(m.end(), indent, braced)
            head = re.search(r"\(([^)\n]*)\)", self.text[m.start():m.start() + 300])
            parameters = tuple(p for p in (re.sub(r"[:=].*$", "", p).strip(" *&$") for p in
                                           (head[1].split(",") if head else ())) if p.isidentifier())
            found.append(_Function(name, m.start(), end, parameters))
            if len(found) >= _MAX_FUNCTIONS:
                break
        return found

    @cached_property
    def bindings(self) -> list[tuple[tuple[str, ...], int, int]]:
        """(names bound, where the bound value's text starts, ends)."""
        out = []
        for m in b.ASSIGNMENT.finditer(self.text):
            names = tuple(re.sub(r"^[$@]|\[.*$", "", n.strip()) for n in m[1].split(","))
            out.append((names, *self.statement(m.end())))
        for m in itertools.chain(b.BINDING.finditer(self.text),
                                 b.GO_IF_BINDING.finditer(self.text) if ":=" in self.text else (),
                                 b.BLOCK_BINDING.finditer(self.text) if "|" in self.text else ()):
            names = tuple(n.strip() for n in next(g for g in m.groups() if g).split(","))
            first, last = self.line_of(m.start())
            out.append((names, first, last))
        receivers = [pattern for _, pattern in self._sources]
        for m in b.METHOD_CALL.finditer(self.text):  # data flows between an object and its call's arguments
            if any(p.search(self.text, m.start(), m.start(2) - 1) for p in receivers):
                continue  # (not out of a source written into: ``localStorage.setItem('theme', theme)``)
            start, end = self.statement(m.end() - 1)
            if m[2].lower() not in _DATA_METHODS and not any(p.search(self.text, m.start(), end) for p in receivers):
                continue  # a call reading a source fills what it is given (``g.CopyFromScreen(..., bmp.Size)``)
            arguments = tuple(a for a in _BARE_NAMES.findall(self.text, start, end) if a not in _KEYWORDS)
            whole = (m[1], *arguments)
            out.append((whole, m.start(1), end))
            self._calls.add(len(out) - 1)
        for m in _DESTRUCTURED.finditer(self.text):  # ``const [src] = ...``, ``const { a, b: c } = ...``
            if m[0].lstrip().split(None, 1)[1].startswith("{") and _ENVIRONMENT_WHOLE.match(self.text, m.end()):
                continue  # ``const { API_URL } = process.env``: named values, configuration
            names = tuple(item.split(":")[-1].strip() for item in m[1].split(","))
            out.append((tuple(n for n in names if n.isidentifier()), *self.statement(m.end())))
        for m in b.PRINT_TO.finditer(self.text):  # ``print(data, file=buf)``
            out.append(((m[1],), *self.statement(m.start())))
            self._calls.add(len(out) - 1)
        for function in self.functions:  # a function's result is made of what its body uses
            out.append(((function.name,), function.start, function.end))
        return out[:_MAX_BINDINGS]

    # ------------------------------------------------------------------------------------------------------ data
    def windows(self, words: tuple[str, ...], reach: int) -> list[tuple[int, int]]:
        """Where ``words`` occur, ``reach`` characters either side, merged: a table's regex is run there only (it
        can match only where one of its words is, and a long prose note holds few)."""
        spans, lowered = [], self.lowered
        for word in words:
            bounded = word[0].isalnum()  # a word's start must start a word ("irm" is not in "confirm")
            at, hits = lowered.find(word), 0
            while at >= 0 and hits < _MAX_HITS:
                if not (bounded and at and (lowered[at - 1].isalnum() or lowered[at - 1] == "_")):
                    spans.append((max(0, at - reach), at + len(word) + reach))
                    hits += 1
                at = lowered.find(word, at + len(word))
        merged: list[tuple[int, int]] = []
        for lo, hi in sorted(spans):
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        return merged

    def find(self, regex: re.Pattern[str], words: tuple[str, ...], reach: int = 400) -> Iterator[re.Match[str]]:
        """``regex``'s matches near ``words`` (each once)."""
        last = -1
        for lo, hi in self.windows(words, reach):
            for m in regex.finditer(self.text, max(lo, last + 1), hi):
                last = m.start()
                yield m

    def calls(self, regex: re.Pattern[str], words: tuple[str, ...]) -> Iterator[re.Match[str]]:
        """``regex``'s matches that start at a call's name holding one of ``words``: tried at each start of the
        dotted name around each word (``requests.post``, ``s.post``, ``.post``) and at the word before it (``new
        Image``), not searched along the text -- a sink table is a long alternation, slow to search prose with."""
        text, lowered, seen = self.text, self.lowered, set()
        for word in words:
            bounded = word[0].isalnum()
            at, hits = lowered.find(word), 0
            while at >= 0 and hits < _MAX_HITS:
                if not (bounded and at and (lowered[at - 1].isalnum() or lowered[at - 1] == "_")):
                    hits += 1
                    start = at
                    while start > 0 and at - start < 40 and (text[start - 1].isalnum() or text[start - 1] in "_.$:-"):
                        start -= 1
                    starts = [start] + [i + 1 for i in range(start, at) if text[i] in ".:$"] + [at, at - 1, at - 2]
                    before = start
                    while before > 0 and start - before < 4 and text[before - 1] in " \t":
                        before -= 1
                    if before < start:
                        word_start = before
                        while word_start > 0 and before - word_start < 24 and (text[word_start - 1].isalpha() or (
                                text[word_start - 1] == "-" and word_start - 1 > 0 and text[word_start - 2].isalpha())):
                            word_start -= 1
                        starts.append(word_start)
                    for candidate in starts:
                        if candidate >= 0 and candidate not in seen:
                            seen.add(candidate)
                            m = regex.match(text, candidate)
                            if m:
                                yield m
                at = lowered.find(word, at + len(word))

    def has(self, regex: re.Pattern[str], words: tuple[str, ...], reach: int = 400) -> bool:
        return next(self.find(regex, words, reach), None) is not None

    @cached_property
    def _sources(self) -> list[tuple[str, re.Pattern[str]]]:
        """The sensitive data the text reads somewhere (each source's label and regex)."""
        sources = [(label, compiled(pattern, _I)) for label, words, pattern in b.SENSITIVE
                   if next(self.calls(compiled(pattern, _I), words), None)]
        # a global key hook: what its callbacks are given is keystrokes
        if self.has(b.KEYSTROKES, b.KEYSTROKE_WORDS):
            sources.append(("keystrokes", compiled(r"(?<![\w.])(?:key|keys|(?:e|ev|evt|event)\.(?:key|code|keyCode|"
                                                    r"which|char)|key\.char|keycode|vk|char)\b", _I)))
        return sources

    def category(self, segment: str, sources: list[tuple[str, re.Pattern[str]]], named: bool = False) -> str | None:
        """The data of ``sources`` that ``segment`` holds: directly, through a tainted name or a source helper (a
        strong source before a weak one: :data:`~..rules.behaviour.WEAK`)."""
        weak = None
        for label, pattern in sources + self.staged_sources:
            if pattern.search(segment):
                if label not in b.WEAK:
                    return label
                weak = weak or label
        if self.tainted:
            for name in _names(segment):
                held = self.tainted.get(name)
                if held is None and name.startswith(("self.", "this.")) and re.search(
                        rf"\b{re.escape(name)}\s*\(", segment):  # a method of the class called: a helper by name
                    held = self.tainted.get(name.partition(".")[2])
                if held is not None and (held == "the environment" or named) and _one_named_value(
                        segment, name, attributes=held == "the environment"):
                    continue  # ``settings["API_URL"]``, ``config.url``: one value of the environment, configuration
                if held is not None and _only_counted(segment, name):
                    continue  # ``sources.length``: how many, not what
                if held is not None and held not in b.WEAK:
                    return held
                weak = weak or held
            owned = self._own_attributes.findall(_STRING.sub(" ", segment)) if self.attributes_tainted() else ()
            for attribute in owned:
                held = self.tainted.get("self." + attribute) or self.tainted.get("this." + attribute)
                if held is not None and held not in b.WEAK:  # ``self.ctx.bag`` where ``_Ctx`` set ``self.bag``
                    return held
                weak = weak or held
        return weak

    @cached_property
    def _uses(self) -> tuple[list[frozenset[str]], dict[str, list[int]], dict[str, list[int]]]:
        """Each binding's names used, which bindings use a name, which bind it (for :meth:`follow`, :meth:`resolve`)."""
        used: list[frozenset[str]] = []
        users: dict[str, list[int]] = {}
        binders: dict[str, list[int]] = {}
        for i, (names, start, end) in enumerate(self.bindings):
            found = frozenset(_names(_PASSED_ENVIRONMENT.sub(" ", self.text[start:end])))
            found |= {n.partition(".")[2] for n in found if n.startswith(("self.", "this."))}  # ``self._fetch()``
            used.append(found)
            for name in found:
                users.setdefault(name, []).append(i)
            for name in names:
                binders.setdefault(name, []).append(i)
        return used, users, binders

    def follow(self, sources: list[tuple[str, re.Pattern[str]]]) -> None:
        """Taint every name bound to a source, a tainted name or a source helper's result (a walk over who uses
        what: linear in the bindings) -- and the files they are written into (:meth:`staged`): a file filled from a
        source, then read or sent, carries the source (``json.dump(dict(os.environ), f)`` to ``/tmp/c.json``, then
        ``files={'f': open('/tmp/c.json', 'rb')}``; ``tar czf /tmp/k.tgz ~/.gnupg``, then ``curl -T /tmp/k.tgz``)."""
        self.staged_sources = []  # a previous walk's files are not this one's
        self._follow(sources)
        staged = self.staged(sources)
        if staged:
            self.staged_sources = [(label, re.compile("|".join(
                rf"(?<![\w.$]){re.escape(p)}(?!\w)" if p.replace("$", "").isidentifier() else re.escape(p)
                for p in sorted(paths)))) for label, paths in staged.items()]
            self._follow(sources)

    def staged(self, sources: list[tuple[str, re.Pattern[str]]]) -> dict[str, set[str]]:
        """The files the text fills from a source: by label, their paths as written (string literals), from a statement
        that writes, copies or archives a source or a tainted name, or from the opening of a file object that became
        tainted."""
        out: dict[str, set[str]] = {}
        _, _, binders = self._uses
        for first, last in self._stage_lines:
            line = _EXCLUDED.sub(" ", self.text[first:last])  # ``--exclude=.env``, ``-x .env``: left out
            label = self.category(line, sources)
            if label is not None:  # its paths, and the names it writes to (``-DestinationPath $tmp``)
                out.setdefault(label, set()).update(_paths(line))
                out[label].update(f"${n}" if f"${n}" in line else n for n in _names(line)
                                  if n in binders and n not in self.tainted and len(n) > 1)
        for name, label in list(self.tainted.items()):  # ``with open(P, 'w') as f`` and then f filled from a source
            for i in binders.get(name, ()):
                value = self.text[self.bindings[i][1]:self.bindings[i][2]]
                if _OPENS_FOR_WRITING.search(value):
                    out.setdefault(label, set()).update(_paths(value))
        return {label: paths for label, paths in out.items() if paths}

    @cached_property
    def _stage_lines(self) -> list[tuple[int, int]]:
        """The lines that fill a file (:data:`_STAGES`), found once."""
        return sorted({self.line_of(m.start()) for m in self.find(_STAGES, _STAGE_WORDS, 80)})

    def _follow(self, sources: list[tuple[str, re.Pattern[str]]]) -> None:
        sources = sources + self.staged_sources
        self.tainted = {}
        for function in self.functions:  # a helper whose body reads a source is one
            label = self.category(self.text[function.start:function.end], sources)
            if label:
                self.tainted[function.name] = label
        queue = list(self.tainted)
        digests = self._digests
        _, users, binders = self._uses
        # a call on an object taints only names some code assigns or declares (``os`` of ``os.environ.update(...)`` is
        # a module; Go's ``var buf bytes.Buffer`` is a variable)
        assigned = {name for name, where in binders.items() if any(i not in self._calls for i in where)} | \
            self._declared
        for i, (names, start, end) in enumerate(self.bindings):
            found = [lb for lb, pattern in sources if pattern.search(self.text[start:end])]
            label = next((lb for lb in found if lb not in b.WEAK), found[0] if found else None)  # a strong one first
            for name in names if label is not None else ():
                if name and label is not None and _stronger(label, self.tainted.get(name)) and name not in digests and (
                        i not in self._calls or name in assigned):
                    self.tainted[name] = label
                    queue.append(name)
        while queue:
            source = queue.pop()
            for i in users.get(source, ()):
                for name in self.bindings[i][0]:
                    if name and _stronger(self.tainted[source], self.tainted.get(name)) and name not in digests and (
                            i not in self._calls or name in assigned):
                        self.tainted[name] = self.tainted[source]
                        queue.append(name)

    @cached_property
    def _own_attributes(self) -> re.Pattern[str]:
        """Attribute reads through ``self``/``this`` or through an instance of a class the text defines (``st =
        State()``, then ``st.secrets``): group 1 the last name."""
        classes = set(_CLASS.findall(self.text))
        instances = {m[1] for m in _INSTANCE.finditer(self.text) if m[2] in classes} if classes else set()
        owners = "|".join(["self", "this", *map(re.escape, sorted(instances))])
        return re.compile(rf"(?<![\w.])(?:{owners})(?:\.[A-Za-z_]\w*)*\.([A-Za-z_]\w*)\b(?!\s*\()")

    def attributes_tainted(self) -> bool:
        """Whether some object attribute (``self.bag``) holds a source now."""
        return any(name.startswith(("self.", "this.")) for name in self.tainted)

    @cached_property
    def _declared(self) -> frozenset[str]:
        """Names declared without a value (``var buf bytes.Buffer``, ``StringBuilder sb;``)."""
        return frozenset(_DECLARED.findall(self.text))

    @cached_property
    def _digests(self) -> frozenset[str]:
        """Names bound to a hash (``h = hashlib.sha256()``): what is fed to one does not come out of it."""
        _, _, binders = self._uses
        return frozenset(name for name, where in binders.items() if all(
            i in self._calls or _DIGEST.fullmatch(self.text, self.bindings[i][1], self.bindings[i][2])
            for i in where) and any(i not in self._calls for i in where))

    def resolve(self, segment: str, depth: int = 2) -> str:
        """``segment`` with the values of the names it uses appended (two levels: where a URL, a path or a command
        was bound, and what that was made of; at most 20 values a level)."""
        _, _, binders = self._uses
        found = sorted({i for name in _names(segment) for i in binders.get(name, ())})[:20]
        values = [self.text[self.bindings[i][1]:self.bindings[i][2]] for i in found]
        if depth > 1 and values:
            values = [self.resolve(v, depth - 1).split("\n", 1)[-1] + "\n" + v for v in values]
        return segment + "\n" + "\n".join(values)

    def sink_calls(self, pattern: str, words: tuple[str, ...]) -> list[tuple[int, int]]:
        """The statements of ``pattern``'s calls (each holds one of ``words``), and of calls to helpers that hand a
        parameter to one."""
        regex = compiled(pattern, _I)
        spans = [self.statement(m.start()) for m in sorted(self.calls(regex, words), key=lambda m: m.start())]
        for function in self.functions:
            if not function.parameters or not regex.search(self.text, function.start, function.end):
                continue
            passes = re.compile(rf"(?<![\w.$])(?:{'|'.join(map(re.escape, self.derived(function)))})(?!\w)")
            if not any(passes.search(_PASSED_ENVIRONMENT.sub(" ", self.text[s:e]))
                       for s, e in (self.statement(m.start()) for m in regex.finditer(self.text, function.start,
                                                                                       function.end))):
                continue
            for m in re.finditer(rf"(?<![\w.]){re.escape(function.name)}\s*\(", self.text):
                if not any(f.start <= m.start() < f.start + len(f.name) + 16 for f in self.functions):
                    spans.append(self.statement(m.start()))
        return spans

    def connections(self, table: re.Pattern[str] | None = None) -> set[str]:
        """The names bound to a network connection the text opens (or to what ``table`` matches: an HTTP client)."""
        table = table or b.CONNECTION
        if not table.search(self.text):
            return set()
        _, _, binders = self._uses
        return {name for name, where in binders.items() for i in where
                if table.search(self.text, self.bindings[i][1], self.bindings[i][2])}

    def piped_shells(self) -> list[Act]:
        """A shell whose input is piped from a network connection the text opened (Node: ``sock.pipe(sh.stdin)``)."""
        if not b.SHELL_SPAWNED.search(self.text):
            return []
        _, _, binders = self._uses
        local = {name for name, where in binders.items() for i in where  # a file's stream, an HTTP request's body
                 if _LOCAL_STREAM.search(self.text, self.bindings[i][1], self.bindings[i][2])}
        acts = []
        for m in _PIPED_INTO_STDIN.finditer(self.text):
            source = m[1]
            if source in ("process.stdin", "req", "request") or source in local or _LOCAL_STREAM.search(source) or \
                    self.mentioned(m.start()):
                continue
            acts.append(Act("injection", f"reverse shell: '{_excerpt(m[0])}'", m.start(), m.end()))
        return acts[:1]

    def variable_functions(self) -> list[Act]:
        """PHP's ``$f($_GET['c'])`` where ``$f`` names a command runner, is decoded or built from pieces: a web shell
        hiding the function's name (a closure or a validator table is not one)."""
        if "$_" not in self.text:
            return []
        hidden = set(_HIDDEN_FUNCTION.findall(self.text)) | {
            name for name, function in _NAMED_FUNCTION.findall(self.text) if function.lower() in _PHP_RUNNERS}
        asked = set(_REQUEST_VALUE.findall(self.text))
        acts = []
        for m in _VARIABLE_CALL.finditer(self.text):
            given = m[2].startswith("$_") or m[2].lstrip("$") in asked
            if m[1] in hidden and given and not self.mentioned(m.start()):
                acts.append(Act("injection", f"code runs commands sent in web requests: '{_excerpt(m[0])}'", m.start(),
                                m.end()))
        return acts[:1]

    def connection_writes(self) -> list[tuple[int, int]]:
        """The statements writing to a network connection the text opened and named (``c, _ := net.Dial(...)``, then
        ``c.Write(b)``; ``s = socket.create_connection(...)``, then ``s.send(b)``)."""
        clients = self.connections(b.HTTP_CLIENT)
        posts = [self.statement(m.start()) for m in re.finditer(
            rf"(?<![\w.$])(?:{'|'.join(map(re.escape, sorted(clients)))})\s*\.\s*(?:post|put|patch|request|send|Do|"
            rf"PostAsync|PutAsync|SendAsync|post_async)\w*\s*\(", self.text, re.IGNORECASE)] if clients else []
        names = self.connections()
        if not names:
            return posts
        alternatives = "|".join(map(re.escape, sorted(names)))
        written = re.compile(rf"(?<![\w.$])\$?(?:{alternatives})\s*(?:\.|->)\s*(?:write|Write|"
                             rf"WriteString|send|sendall|Send|print|puts|end|fwrite)\s*\(|\b(?:fmt\.Fprint\w*|fwrite|fputs)"
                             rf"\s*\(\s*\$?(?:{alternatives})\b")
        return posts + [self.statement(m.start()) for m in written.finditer(self.text)]

    def derived(self, function: _Function) -> set[str]:
        """``function``'s parameters and the names its body binds from them (``data = json.dumps(items)``), to a fixed
        point: what a helper hands on may be made of what it was given first."""
        names = set(function.parameters)
        inside = [(bound, start, end) for bound, start, end in self.bindings
                  if function.start < start < function.end and (bound, start, end) != (
                      (function.name,), function.start, function.end)]
        grew = True
        while grew:
            grew = False
            for bound, start, end in inside:
                if any(n not in names for n in bound) and set(_names(self.text[start:end])) & names:
                    names.update(n for n in bound if n)
                    grew = True
        return names

    # ----------------------------------------------------------------------------------------------- the findings
    def flows(self) -> list[Act]:
        acts: list[Act] = []
        sources = self._sources
        if sources:
            acts += self._sent(sources, b.NETWORK_SEND, b.NETWORK_SEND_WORDS)
        secret, secret_words, secret_pattern = b.ENV_SECRET
        if self.has(compiled(secret_pattern, _I), secret_words):
            acts += self._sent([(secret, compiled(secret_pattern, _I))], b.COVERT_SEND, b.COVERT_SEND_WORDS)
        asked, asked_words, asked_pattern = b.REQUEST_INPUT
        if self.has(compiled(asked_pattern, _I), asked_words):
            request = [(asked, compiled(asked_pattern, _I))]
            self.follow(request)
            runs = self.sink_calls(b.COMMAND_RUN, b.COMMAND_RUN_WORDS) + self.sink_calls(b.CODE_RUN, b.CODE_RUN_WORDS)
            for start, end in sorted(set(runs)):
                segment = self.text[start:end]
                if self.category(segment, request):
                    acts.append(Act("injection", f"code runs commands sent in web requests: '{_excerpt(segment)}'",
                                    start, end))
        fetched = [("fetched code", compiled(b.FETCHED, _I))]
        if next(self.calls(fetched[0][1], b.FETCHED_WORDS), None) and \
                next(self.calls(compiled(b.CODE_RUN, _I), b.CODE_RUN_WORDS), None):
            self.follow(fetched)
            for start, end in self.sink_calls(b.CODE_RUN, b.CODE_RUN_WORDS):
                line_start, line_end = self.line_of(start)
                around = self.text[line_start:max(end, line_end)]
                where = self.resolve(around)
                if self.category(around, fetched) and (_public(where) or (not _hosts(where) and _public(self.text))) \
                        and not self.mentioned(start):
                    acts.append(Act("injection", f"code runs fetched code: '{_excerpt(around)}'", line_start,
                                    max(end, line_end)))
        self.tainted = {}
        return acts

    def _sent(self, sources: list[tuple[str, re.Pattern[str]]], sinks: str, words: tuple[str, ...]) -> list[Act]:
        """Sensitive data sent to a remote host by one of ``sinks``, or keystrokes written down."""
        acts = []
        self.follow(sources)
        for start, end in self.sink_calls(sinks, words) + (self.connection_writes() if sinks == b.NETWORK_SEND else []):
            segment = self.text[start:end]
            data = _without_credential_arguments(b.TOOL_CREDENTIALS.sub(" ", _PASSED_ENVIRONMENT.sub(" ", segment)))
            label = self.category(b.CREDENTIALS_GIVEN.sub(" ", data), sources)
            if label is None:  # a credential slot holding what no credential is: the environment, a key file, the jar
                whole = self.category(data, sources, named=True)  # ``auth=(cfg.get("pypi", "password"), ...)``
                label = whole if whole in b.NEVER_A_CREDENTIAL else None
            if not label or b.SAME_ORIGIN.match(segment) or self.mentioned(start) or (
                    _SHELL_SINK.match(segment) and self.quoted_data(start)):
                continue
            where = self.resolve(segment)
            covert = sinks == b.COVERT_SEND or compiled(b.COVERT_SEND, _I).search(segment)
            if _remote(where) if label not in b.WEAK or covert else _public_number(where):
                acts.append(Act("exfiltration", f"code sends {label} out: '{_excerpt(segment)}'", start, end))
        if any(label == "keystrokes" for label, _ in sources):
            for start, end in self.sink_calls(b.FILE_WRITE, b.FILE_WRITE_WORDS):
                segment = self.text[start:end]
                if self.category(segment, sources) == "keystrokes":
                    acts.append(Act("injection", f"keylogger: '{_excerpt(segment)}'", start, end))
        return acts

    def mentioned(self, at: int) -> bool:
        """Whether the code at ``at`` is mentioned rather than given: on a comment's line, or after words that
        forbid, warn of or discuss it on its line ("never run rm -rf /", "flag it if you see ...")."""
        line_start = self.text.rfind("\n", 0, at) + 1
        if _COMMENT.match(self.text, line_start) or 0 <= self.comment_in_line(line_start) < at:
            return True
        near = max(line_start, at - _CONTEXT)  # words further back on a long line are not about this code
        clause = max((m.end() for m in _CLAUSE_END.finditer(self.text, near, at)), default=near)
        # a forbidding word that is an operand is a name, not a warning (``if not blocked and ...``, ``ok = dangerous
        # or ...``, ``for block in ...``)
        return any(not _OPERAND_BEFORE.search(self.text, max(clause, m.start() - 12), m.start()) and
                   not _OPERAND_AFTER.match(self.text, m.end()) and not _in_a_closed_string(self.text, clause, m, at)
                   for m in b.FORBIDDEN.finditer(self.text, clause, at))

    def comment_in_line(self, line_start: int) -> int:
        """Where the comment of the line starting at ``line_start`` starts (:func:`_comment_start`), or -1; found once
        a line (a long line holds many commands)."""
        found = self._comments.get(line_start)
        if found is None:
            first, last = self.line_of(line_start)
            at = _comment_start(self.text[first:last])
            found = self._comments[line_start] = at + first if at >= 0 else -1
        return found

    def quoted_data(self, at: int) -> bool:
        """Whether the command at ``at`` sits in a string literal of a line that runs no command (a test's
        ``is_dangerous("rm -rf /")``, an echoed hint, an error message): data, not the act. Never when the string runs
        anyway: a command substitution in it (``echo "$(rm -rf ~)"``), the line piped into a shell or ``iex``."""
        line_start, line_end = self.line_of(at)
        before = self.text[line_start:at]
        if not (before.count('"') % 2 == 1 or before.count("'") % 2 == 1):  # the whole line: which string it is in
            return False
        near = max(0, len(before) - _CONTEXT)  # what surrounds the string is read near it (a long line: linear work)
        if _SUBSTITUTION.search(before, near) or _PIPED_TO_RUN.search(self.text, at, line_end) or \
                _SHELL_RUNS_IT.search(before, near) or _WRITTEN_TO_RUN.search(self.text, at, line_end):
            return False  # run anyway: substituted, piped into a shell, handed to ``sh -c``, written where it runs
        if _ECHOED.search(before, near):
            return True
        setting = _SETTING.match(before)  # a configuration's value (``deny: ["rm -rf /"]``), unless it is a command
        key = setting[1] if setting else self.list_key(line_start) if _LIST_ITEM.match(before) else None
        if key is not None and not _command_key(key) and not _command_key(self.list_key(line_start, opened=True) or "",
                                                                         parent=True) and \
                not before.rstrip("'\" ").endswith("!"):
            if not self.run_later(key, line_start, at):  # or a variable some code runs
                return True
        calls = _open_calls(before[near:])  # every call still open there, innermost last (one opened further back on a
        if not calls:  # long line is not seen: the string then counts as run)
            return False
        head = _IN_ARGV.search(before, near)  # an argv list run by its first item: echo's is printed
        if head is not None and head[1].lower() in _PRINTERS:
            return True
        runners = _RUNNERS | self.running_helpers
        return not any(b.RUNS_COMMAND.match(call) or compiled(b.CODE_RUN, _I).match(call) or
                       call.split("(", 1)[0].strip().rpartition(".")[2].lower() in runners for call in calls)

    @cached_property
    def running_helpers(self) -> frozenset[str]:
        """The text's own functions that run what they are given (``def execute(c): subprocess.run(c, shell=True)``)."""
        return frozenset(f.name.lower() for f in self.functions
                         if b.RUNS_COMMAND.search(self.text, f.start, f.end) and f.parameters)

    def list_key(self, line_start: int, opened: bool = False) -> str | None:
        """The key of the YAML list a ``- item`` line at ``line_start`` belongs to (the nearest line above it,
        indented less, that opens a key); ``opened``: of the object or list a key line is in (a JSON ``"scripts": {``
        or a YAML ``scripts:`` a line or more above, indented less)."""
        line = self.text[line_start:self.line_of(line_start)[1]]
        indent, found = len(line) - len(line.lstrip()), None
        for m in (_OPENING_KEY_LINE if opened else _KEY_LINE).finditer(self.text, max(0, line_start - 2_000),
                                                                       line_start):
            if len(m[1]) < indent or (not opened and len(m[1]) <= indent):
                found = m[2]
        return found

    def run_later(self, name: str, line_start: int, at: int) -> bool:
        """Whether code outside the setting's own line runs the value of ``name``: a statement that runs commands or
        code uses it, or the shell runs it (``$CLEAN`` at a command's place)."""
        use = re.compile(rf"(?<![\w.])(?:\$\{{?|%)?{re.escape(name)}(?![\w])")
        for m in itertools.chain(use.finditer(self.text, 0, line_start), use.finditer(self.text, at)):
            first, last = self.line_of(m.start())
            if m.start() >= at and first == line_start:  # the rest of the setting's own line (``c = "..."; run(c)``)
                first = at
            line = self.text[first:last]
            if (self.text[m.start()] in "$%" and _AT_COMMAND_PLACE.search(self.text[first:m.start()])) or (
                    b.RUNS_COMMAND.search(line) or compiled(b.CODE_RUN, _I).search(line) or _RUN_CALL.search(line)
                    or _PIPED_TO_RUN.search(line) or _SHELL_RUNS_IT.search(line)):
                return True
        return False

    def acts(self) -> list[Act]:
        acts: list[Act] = []
        for m in self.find(b.RECURSIVE_DELETE, b.RECURSIVE_DELETE_WORDS):
            start, end = self.statement(m.start())
            segment = self.text[start:end]
            if b.SHELL_DELETE.match(m[0]):
                cut = _ARGUMENTS_END.search(segment, len(m[0]))
                arguments = segment[len(m[0]):cut.start() if cut else len(segment)]
                precious = bool(b.SHELL_TARGET.search(arguments) or (  # ``cd ~ && rm -rf *``
                    _HERE.search(arguments) and _in_a_precious_folder(self.text, start))) and \
                    not self.mentioned(start) and not self.quoted_data(start)
            else:
                precious = self.whole(_first_argument(segment))
            if precious:
                acts.append(Act("injection", f"deletes a home or system folder: '{_excerpt(segment)}'", start, end))
        for m in self.find(b.RUNS_COMMAND, b.RUNS_COMMAND_WORDS):
            start, end = self.statement(m.start())
            segment = self.text[start:end]
            code = _without_comments(segment)
            harm = b.SYSTEM_HARM.search(code) or b.SYSTEM_HARM.search(self.resolve(code).split("\n", 1)[-1])
            if harm and _at_a_command(harm) and not self.mentioned(start):
                acts.append(Act("injection", f"code runs '{harm[0]}': '{_excerpt(segment)}'", start, end))
        for m in self.find(b.FORK_BOMB, b.FORK_BOMB_WORDS):
            if self.mentioned(m.start()):
                continue
            acts.append(Act("injection", f"fork bomb: '{_excerpt(m[0])}'", m.start(), m.end()))
        for m in self.find(b.FIND_DELETE, ("find ",)):
            folder = m[1].strip("'\"")
            name = folder.strip("${}")
            values = [self.text[start:end] for i in self._uses[2].get(name, ()) for _, start, end in [self.bindings[i]]]
            if (b.SHELL_TARGET.search(" " + folder) or any(b.SHELL_TARGET.search(" " + v.strip().strip("'\"")) for v in
                                                             values)) and not _FIND_FILTER.search(m[0]) and \
                    not self.mentioned(m.start()) and not self.quoted_data(m.start()):  # (``-name core``: some files)
                acts.append(Act("injection", f"deletes a home or system folder: '{_excerpt(m[0])}'", m.start(),
                                m.end()))
        for m in self.find(b.PACKET_FLOOD, ("loop", "srloop", "hping3")):
            if not self.mentioned(m.start()) and not self.quoted_data(m.start()):
                acts.append(Act("injection", f"floods a host: '{_excerpt(m[0])}'", m.start(), m.end()))
        acts += self.piped_shells() + self.variable_functions()
        for m in self.find(b.REMOTE_IMPORT, ("import",)):
            if _public(m[0]) and not b.MODULE_CDN.search(m[0]) and not self.mentioned(m.start()) and \
                    not self.quoted_data(m.start()):
                acts.append(Act("injection", f"code runs fetched code: '{_excerpt(m[0])}'", m.start(), m.end()))
        for table, words, what in ((b.DROP_EVERY_TABLE, ("drop table",), "drops every table"),
                                   (b.DEFENCES_OFF, b.DEFENCES_WORDS, "defences switched off"),
                                   (b.PERSISTENT_FETCH_RUN, b.PIPED_TO_A_SHELL, "fetched code run on a schedule"),
                                   (b.REVERSE_SHELL, b.REVERSE_SHELL_WORDS, "reverse shell"),
                                   (b.WIPE_DISK, ("dd ",), "wipes a disk")):
            for m in self.find(table, words, 900):
                if table is b.DROP_EVERY_TABLE and b.FILTERED.search(m[0]):
                    continue
                if not self.mentioned(m.start()):
                    acts.append(Act("injection", f"{what}: '{_excerpt(m[0])}'", m.start(), m.end()))
        return acts

    def whole(self, value: str, depth: int = 3) -> bool:
        """Whether ``value`` (a delete's argument) is a home or system folder as a whole: written so, wrapped in
        ``Path(...)``, or a name bound to one -- or to each item of an iterable of them, or of a helper's results."""
        value = _WRAPPED.sub(lambda m: m[1] or m[2], value.strip())
        if b.WHOLE_TARGET.fullmatch(value):
            return True
        if depth == 0 or not value.isidentifier():
            return False
        _, _, binders = self._uses
        for i in binders.get(value, ()):
            _, start, end = self.bindings[i]
            bound = self.text[start:end].strip()
            head = _FOR_IN.match(bound)
            if head:  # each item of an iterable: a literal list of folders, or a helper's yields and returns
                iterable = head[1]
                if _whole(iterable) or any(_whole("\n".join(_RESULT.findall(self.text, f.start, f.end)) or
                                                  self.text[f.start:f.end].partition("=>")[2])
                                           for f in self.functions if f.name in _names(iterable)):
                    return True
            elif self.whole(bound, depth - 1) or any(  # ``env.SCRATCH || os.homedir()``, ``x or Path.home()``
                    self.whole(part, depth - 1) for part in _ALTERNATIVES.split(bound) if part.strip() != bound) or any(
                    self.whole(m[1] or m[2], depth - 1) for m in _DEFAULT_ARGUMENT.finditer(bound)):
                return True
        return False

    def destroys_walked(self, at: int, start: int, end: int) -> bool:
        """Whether the files a walk at ``at`` (its statement ``start``-``end``) yields are overwritten or deleted:
        in its statement (a callback), in the loop it heads, or in a helper that loop calls."""
        first, last = self.line_of(at)
        line = self.text[first:last]
        body_start, body_end = self.block(last, len(line) - len(line.lstrip()), "{" in line[at - first:])
        body_end = min(max(body_end, end), body_start + _BODY)
        body = self.text[start:body_end]
        if b.DESTROY_ORIGINAL.search(body):
            return True
        called = set(_names(body))
        return any(b.DESTROY_ORIGINAL.search(self.text, f.start, f.end) for f in self.functions if f.name in called)

    def precious_walk(self, at: int) -> bool:
        """Whether the walk at ``at`` goes over a home or system folder (said there, or where its folder was bound)."""
        start, end = self.statement(at)
        walked = self.text[start:end]
        return bool(b.CODE_TARGET.search(walked) or b.CODE_TARGET.search(self.resolve(walked).split("\n", 1)[-1]))

    def key_kept(self, lo: int, hi: int, walk: re.Match[str] | None) -> bool:
        """Whether the key made between ``lo`` and ``hi`` is kept where the user keeps things: written as it is (or
        stored in a key ring) outside a temporary place and outside the folder the walk at ``walk`` encrypts, that
        file (or its folder) not removed or overwritten later, and neither the key nor its file sent anywhere. A key
        kept so is an encrypting backup's; one dropped, hidden in what is encrypted, masked or sent away is a
        ransom's."""
        keys = {m[1] for m in b.KEY_MADE.finditer(self.text, lo, hi)}
        if not keys:
            return False
        made = "|".join(map(re.escape, sorted(keys)))
        self.staged_sources = []  # the key itself, not files written from it (what it encrypts is written from it)
        self._follow([("the key", re.compile(rf"(?<![\w.$/\\-])(?:{made})(?![\w/\\.-])"))])  # not in a path
        _, _, binders = self._uses
        ciphers = {name for name in self.tainted for i in binders.get(name, ())  # ``f = Fernet(key)``: a cipher;
                   if b.ENCRYPT.search(self.text, self.bindings[i][1], self.bindings[i][2])  # ``k ^ pad``: masked
                   or "^" in self.text[self.bindings[i][1]:self.bindings[i][2]]}
        names = keys | (set(self.tainted) - ciphers)
        self.tainted = {}
        holds = re.compile(rf"(?<![\w.$/\\-])(?:{'|'.join(map(re.escape, sorted(names)))})(?![\w/\\.-])")
        walked_names: set[str] = set()
        walked_paths: set[str] = set()
        if walk is not None:
            start, end = self.statement(walk.start())
            folder = self.resolve(self.text[start:end])
            walked_names = {n for n in _names(self.text[start:end]) if n in binders}
            walked_paths = {p.rstrip("/\\") or "/" for p in _ANY_STRING.findall(folder) if not _MODE.fullmatch(p)}
        sent = [self.text[start:end] for start, end in self.sink_calls(b.NETWORK_SEND, b.NETWORK_SEND_WORDS)]
        for m in b.KEY_WRITE.finditer(self.text, lo, hi):
            first, last = self.line_of(m.start())
            line = self.text[first:last]
            if not holds.search(line, m.start() - first) or b.TEMPORARY_PLACE.search(line) or \
                    b.ENCRYPT.search(line) or "^" in line:
                continue  # a temporary place, or the key masked before it is written
            target = _write_target(line, m.start() - first)
            place_names = [n for n in _names(target) if n not in names and n in binders]
            place_paths = [p for p in _STRING_VALUE.findall(self.resolve(target)) if not _MODE.fullmatch(p)]
            if "keyring" not in line and not (place_names or place_paths):
                continue  # written where this cannot tell
            if set(place_names) & walked_names or any(_inside(p, w) for p in place_paths for w in walked_paths):
                continue  # in the folder it encrypts
            if any(holds.search(s) or any(n in _names(s) for n in place_names) or any(p in s for p in place_paths)
                   for s in sent):
                continue  # sent away: the key or its file
            later = self.text[last:]
            if "keyring" in line and "delete_password" in later:
                continue
            if any(_touches(stmt, place_names, place_paths) for stmt in _removals(later)):
                continue  # removed or overwritten later (its folder too)
            return True
        return False

    def shapes(self) -> list[Act]:
        acts: list[Act] = []
        ransom = all(b.present(words, self.lowered) for words in (b.WALK_WORDS, b.ENCRYPT_WORDS, b.DESTROY_WORDS))
        for tried, m in enumerate(self.find(b.ENCRYPT, b.ENCRYPT_WORDS) if ransom else ()):
            if tried == _MAX_SHAPES:
                break
            lo, hi = max(0, m.start() - 1500), m.end() + 1500
            walk = b.WALK.search(self.text, lo, hi)
            kept = not b.RANSOM_NOTE.search(self.text, lo, hi) and self.key_kept(lo, hi, walk)
            if walk and b.DESTROY_ORIGINAL.search(self.text, lo, hi) and (
                    (b.NOT_THE_USERS_KEY.search(self.text, lo, hi) and not kept) or self.precious_walk(walk.start())):
                start, end = self.line_of(m.start())
                acts.append(Act("injection", f"encrypts files in place: '{_excerpt(self.text[start:end])}'", start,
                                end))
                break
        for tried, m in enumerate(self.find(b.WALK, b.WALK_WORDS)):
            if tried == _MAX_SHAPES:
                break
            start, end = self.statement(m.start())
            walked = self.text[start:end]
            if self.precious_walk(m.start()) and self.destroys_walked(m.start(), start, end):
                acts.append(Act("injection", f"overwrites or deletes every file of a home or system folder: "
                                             f"'{_excerpt(walked)}'", start, end))
                break
        for tried, m in enumerate(self.find(b.UNBOUNDED_LOOP, b.LOOP_WORDS)):
            if tried == _MAX_SHAPES:
                break
            first, last = self.line_of(m.start())
            first, last = max(first, m.start() - 200), min(last, m.end() + 400)  # minified code: one long line
            line = self.text[first:last]
            indent = len(line) - len(line.lstrip())
            if re.search(r"\bdo\b", line) or re.search(r"\bwhile\b[^\n]*;\s*$", line):
                done = re.compile(r"\bdone\b").search(self.text, m.end(), m.end() + _BODY)
                start, end = m.end(), (done.end() if done else last)
            else:
                start, end = self.block(m.end(), indent, "{" in line[m.start() - first:])
            end = min(end, start + _BODY)
            body = self.text[start:end]
            if b.PAUSE.search(_STRING.sub('""', _without_comments(_without_own_reads(body)))):  # own answers: no pause
                continue
            if b.STARTS_REQUEST.search(body):
                acts.append(Act("injection", f"floods a host: '{_excerpt(self.text[first:end])}'", first, end))
            elif b.EXHAUSTS.search(body) and not b.CONSUMES.search(body) and not _COUNTED_FOR.match(m[0]):
                acts.append(Act("injection", f"exhausts the machine: '{_excerpt(self.text[first:end])}'", first, end))
        return acts


def _in_a_precious_folder(text: str, at: int) -> bool:
    """Whether the command at ``at`` runs right after a ``cd`` into a home or system folder (on its line, or the line
    before)."""
    m = _CD_BEFORE.search(text, max(0, at - 300), at)
    return m is not None and bool(b.SHELL_TARGET.search(" " + m[1]))


def _stronger(label: str, held: str | None) -> bool:
    """Whether a name holding ``held`` (None: nothing) is to be labelled ``label``: when it holds nothing yet, or only
    a weak source (:data:`~..rules.behaviour.WEAK`) and ``label`` is a strong one (a payload of the clipboard and the
    screen is the screen's)."""
    return held is None or (held in b.WEAK and label not in b.WEAK)


def _without_own_reads(body: str) -> str:
    """``body`` (a loop's) without the reads of the answers to the requests it starts (``async with s.get(u) as r:
    await r.read()``): what a flood does with its answers is no pause."""
    answers = set(_ANSWER_BOUND.findall(body))
    names = {n for pair in answers for n in pair if n}
    if not names:
        return body
    alternatives = "|".join(map(re.escape, sorted(names)))
    return re.sub(rf"\b(?:{alternatives})\s*\.\s*(?:read|text|json|content)\w*\s*\(?", " ", body)


def _paths(text: str) -> set[str]:
    """The file paths written in ``text`` as string literals or shell words (``'/tmp/c.json'``, ``/tmp/k.tgz``)."""
    found = {p for p in _ANY_STRING.findall(text) if _PATH_LIKE.fullmatch(p)}
    found |= {p for p in _SHELL_PATH.findall(text)}
    return {p for p in found if len(p) > 3 and not p.startswith(("http:", "https:"))}


def _only_counted(segment: str, name: str) -> bool:
    """Whether ``segment`` reads only how many ``name`` holds (``name.length``, ``len(name)``)."""
    uses = list(re.finditer(rf"(?<![\w.$]){re.escape(name)}(?!\w)", segment))
    return bool(uses) and all(_COUNT_READ.match(segment, m.end()) or (
        segment[max(0, m.start() - 4):m.start()] == "len(" and segment[m.end():m.end() + 1] == ")") for m in uses)


def _without_credential_arguments(segment: str) -> str:
    """``segment`` (a call) without the values of its own top-level arguments that hand it a key or certificate
    (:data:`~..rules.behaviour.CREDENTIAL_ARGUMENTS`: ``pkey=k``; not ``json=dict(cert=env)``, which is data)."""
    opening = segment.find("(")
    if opening < 0 or "=" not in segment:
        return segment
    out, depth, i = list(segment), 0, opening
    while i < len(segment):
        c = segment[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth <= 0:
                break
        elif depth == 1 and (c.isalpha() or c == "_") and segment[i - 1] in "(, \t\n":
            m = _KEYWORD_ARGUMENT.match(segment, i)
            if m and m[1].lower() in b.CREDENTIAL_ARGUMENTS:
                j, inner = m.end(), 0  # the value: to the next top-level comma or the call's end
                while j < len(segment) and not (inner == 0 and segment[j] in ",)"):
                    inner += segment[j] in "([{"
                    inner -= segment[j] in ")]}" and inner > 0
                    j += 1
                out[m.end():j] = " " * (j - m.end())
                i = j
                continue
        i += 1
    return "".join(out)


def _one_named_value(segment: str, name: str, attributes: bool = False) -> bool:
    """Whether ``segment`` reads only named values of ``name`` (``name["KEY"]``, ``name.get("section", ...)``; with
    ``attributes``, ``name.url`` too)."""
    uses = list(re.finditer(rf"(?<![\w.$]){re.escape(name)}(?!\w)", segment))
    return bool(uses) and all(_NAMED_READ.match(segment, m.end()) or (
        attributes and _ATTRIBUTE_READ.match(segment, m.end())) for m in uses)


def _comment_start(line: str) -> int:
    """Where a comment starts in ``line``, or -1: ``#`` or ``//`` after white space (or the line's start), outside a
    string; ``//`` after an operand is a division (``secs // 60``). One pass: the quotes are counted as it goes."""
    if "#" not in line and "//" not in line:
        return -1
    quotes, last = [0, 0, 0], 0
    for m in _COMMENT_MARK.finditer(line):
        quotes = [n + line.count(q, last, m.start()) for n, q in zip(quotes, "\"'`", strict=True)]
        last = m.start()
        if not any(n % 2 for n in quotes):
            return m.start()
    return -1


def _without_comments(segment: str) -> str:
    """``segment`` with each line's comment cut off (:func:`_comment_start`)."""
    return "\n".join(line if (at := _comment_start(line)) < 0 else line[:at] for line in segment.split("\n"))


def _write_target(line: str, at: int) -> str:
    """Where the write at ``line[at:]`` goes: the first argument of the ``open``/``Path``/``File`` call before it on
    the line, else the write call's own first argument (``fs.writeFileSync(path, key)``)."""
    opened = list(_OPENER.finditer(line, 0, at))
    return _first_argument(line[opened[-1].start():]) if opened else _first_argument(line[at:])


def _inside(path: str, folder: str) -> bool:
    """Whether ``path`` is in ``folder`` (a prefix of whole components; a relative path is in a relative folder, or in
    ``.``)."""
    absolute = path.startswith(("/", "~", "$", "%")) or path[1:3] in (":\\", ":/")
    if folder in (".", "./"):
        return not absolute
    return path == folder or path.startswith(folder.rstrip("/\\") + "/") or path.startswith(folder.rstrip("/\\") + "\\")


def _removals(text: str) -> list[str]:
    """The lines of ``text`` that remove or overwrite a file or a folder."""
    out = []
    # a write counts too: the key's file overwritten with anything
    for m in itertools.chain(b.REMOVED.finditer(text), b.KEY_WRITE.finditer(text)):
        last = text.find("\n", m.end())
        out.append(text[text.rfind("\n", 0, m.start()) + 1:last if last >= 0 else len(text)])
    return out


def _touches(statement: str, names: list[str], paths: list[str]) -> bool:
    """Whether ``statement`` names the file (a bound name, its path) or a folder holding it."""
    if any(re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", statement) for n in names):
        return True
    literals = [p for p in _STRING_VALUE.findall(statement) if not _MODE.fullmatch(p)]
    return any(_inside(p, lit) or p == lit for p in paths for lit in literals)


def _in_a_closed_string(text: str, clause: int, m: re.Match[str], at: int) -> bool:
    """Whether the forbidding word ``m`` is inside a string literal that closes before the code at ``at`` (a message
    printed before the act, ``print("Do not power off") or os.system("reboot")``): the code's own words, not prose
    about it."""
    for quote in "\"'`":
        if text.count(quote, clause, m.start()) % 2 == 1 and text.count(quote, m.end(), at) % 2 == 1:
            return True
    return False


def _open_calls(before: str) -> list[str]:
    """The calls whose argument lists are still open at the end of ``before`` (one line), outermost first: each
    from its name to the end."""
    stack: list[int] = []
    for m in re.finditer(r"[()]", before):
        if m[0] == "(":
            stack.append(m.start())
        elif stack:
            stack.pop()
    calls = []
    for opening in stack:
        name = re.search(r"([A-Za-z_][\w.]*)\s*$", before[:opening])
        if name is not None:
            calls.append(before[name.start():])
    return calls


def _command_key(key: str, parent: bool = False) -> bool:
    """Whether a configuration key's value is a command a tool runs (CI steps, services, hooks, package scripts);
    ``parent``: whether every value under the key is one (``scripts``, ``hooks``)."""
    key = key.lower()
    if parent:
        return key in _COMMAND_PARENTS
    return key in _COMMAND_KEYS or bool(_COMMAND_KEY_SHAPE.search(key))


def _public_number(segment: str) -> bool:
    """Whether ``segment`` sends to a public address written as a number (not loopback, not the LAN)."""
    return any(not (LOOPBACK.fullmatch(h) or PRIVATE_HOST.fullmatch(h)) and h[:1].isdigit() for h in _hosts(segment))


def _public(segment: str) -> bool:
    """Whether ``segment`` names no host or one outside the user's machine and LAN."""
    hosts = _hosts(segment)
    return not hosts or any(not (LOOPBACK.fullmatch(h) or PRIVATE_HOST.fullmatch(h)) for h in hosts)


def _hosts(segment: str) -> list[str]:
    return _hosts_named(segment.lower())


def _whole(values: str) -> bool:
    """Whether ``values`` (bound values, helpers' bodies) hold a home or system folder as a whole, not extended into
    one of its subfolders (``Path.home() / ".cache"``, ``os.path.join(home, "x")``)."""
    return any(not _EXTENDED.match(values, m.end()) and not _JOINED.search(values, max(0, m.start() - 40), m.start())
               for m in b.WHOLE_TARGET.finditer(values))


def _first_argument(segment: str) -> str:
    """The first argument of the call ``segment`` starts with (up to its comma or closing bracket), stripped."""
    opening = segment.find("(")
    depth, i = 0, opening + 1
    while 0 < i < len(segment):
        c = segment[i]
        if c in "([{":
            depth += 1
        elif c in ")]}" and depth:
            depth -= 1
        elif c in ",)]}" and not depth:
            break
        i += 1
    return segment[opening + 1:i].strip() if opening >= 0 else ""


def _names(segment: str) -> list[str]:
    """The identifiers ``segment`` uses (not attributes: ``x`` of ``x.y``, not ``y``; in a string literal, only
    what it interpolates: ``{token}``, ``${t}``, ``$T``)."""
    return _IDENTIFIER.findall(_STRING.sub(_interpolated, segment))


def _interpolated(m: re.Match[str]) -> str:
    return " " + " ".join(i[1] or i[2] or "" for i in _INTERPOLATION.finditer(m[0])) + " "


def _at_a_command(m: re.Match[str]) -> bool:
    """Whether a harmful command word starts a command: at a string's start, an argv item, after ``sudo`` or a
    shell separator -- not inside a message ("no reboot needed"), a URL (``/shutdown``) or a name
    (``shutdown.log``, ``shutdown_forensics``)."""
    text, start, end = m.string, m.start(), m.end()
    if end < len(text) and (text[end].isalnum() or text[end] in "_-/" or (
            text[end] == "." and not text[end:end + 4].lower() == ".exe")):
        return False
    before = _PATH_PREFIX.sub("", text[max(0, start - 60):start])
    if _WRAPPER_BEFORE.search(before):
        return True
    stripped = before.rstrip(" \t")
    if not stripped or stripped[-1] in "\n;|&(`":
        return True
    if stripped[-1] in "'\"":
        head = _ARGV_HEAD.search(stripped)  # an argv list's later item: a command when the list's first item runs one
        return head is None or head[1].replace("\\", "/").rpartition("/")[2].lower() in _WRAPPERS
    return stripped[-1] == "["
