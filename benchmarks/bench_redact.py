"""The secret redactor's detection on the paste corpus, and its cost: median and p99 CPU time of
``redact_secrets`` per 2 kB text and per 200 kB tool log, with and without secrets in them.

Detection: a paste counts as redacted when no 12-character piece of any of its secrets is left (a
half-redacted token is still a leak); a benign paste, when it comes back unchanged.

Texts are assembled from the repository's paste corpus (``tests/data/secret_pastes.json``) and memory
corpus, and from generated log lines; each text's time is the best of a few runs (CPU time: other
processes share these machines).

    python benchmarks/bench_redact.py
"""

import json
import random
import statistics
import time
from pathlib import Path

from hermes_ctx_plugins.safety import redact_secrets

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"

rng = random.Random(7)
cases = json.loads((DATA / "secret_pastes.json").read_text(encoding="utf-8"))["cases"]
memory = json.loads((DATA / "memory_corpus.json").read_text(encoding="utf-8"))
notes = [e["text"] for e in memory["main"] + memory["held_out"]]
pastes = [c["text"] for c in cases]
LOG_LINES = [
    "2024-05-20T10:00:{:02d}.123Z INFO  worker-{} processed job id=9b2f1c3e-4d5a-4e6f-8a7b-{:012x} in {}ms",
    "tests/test_{}.py::test_case_{} PASSED                                       [{:3d}%]",
    "npm http fetch GET 200 https://registry.npmjs.org/pkg-{} {}ms (cache hit)",
    "commit {:040x}\nAuthor: Dev <dev@acme.io>\n\n    Fix flaky test {}",
    '{{"level":"debug","ts":{},"msg":"request","path":"/v1/items/{}","status":200,"bytes":{}}}',
    "  File \"/srv/app/module_{}.py\", line {}, in handler\n    result = compute(x, y={})",
    "drwxr-xr-x  2 root root  4096 May 20 10:{:02d} dir_{} -> /data/{}",
]
def log_line():
    t = rng.choice(LOG_LINES)
    fields = t.count("{") - t.count("{{")
    return t.format(*[rng.randrange(60) if i == 0 else rng.randrange(1 << 48) for i in range(fields)])
def text_of(size, parts):
    out = []
    while sum(map(len, out)) < size:
        out.append(parts())
    return "\n".join(out)[:size]

benign_notes = [e["text"] for e in memory["main"] + memory["held_out"] if e["label"] == "benign"]
benign_pastes = [c["text"] for c in cases if c["kind"] == "benign"]
two_kb = [text_of(2048, lambda: rng.choice(notes + pastes)) for _ in range(300)]
logs = [text_of(200_000, lambda: rng.choice(pastes) if rng.random() < 0.01 else log_line()) for _ in range(12)]
clean_2kb = [text_of(2048, lambda: rng.choice(benign_notes + benign_pastes)) for _ in range(300)]
clean_logs = [text_of(200_000, lambda: rng.choice(benign_pastes) if rng.random() < 0.01 else log_line())
              for _ in range(12)]

def measure(texts, runs):
    times = []  # per text, the best of `runs` CPU times (other processes share the machine)
    for t in texts:
        best = float("inf")
        for _ in range(runs):
            start = time.process_time()
            redact_secrets(t)
            best = min(best, time.process_time() - start)
        times.append(best)
    times.sort()
    return statistics.median(times) * 1e3, times[int(len(times) * 0.99) - 1] * 1e3
def leaks(secret, redacted, piece=12):
    return secret in redacted or any(secret[i:i + piece] in redacted for i in range(len(secret) - piece + 1))
def detection():
    secret = [c for c in cases if c["kind"] == "secret"]
    benign = [c for c in cases if c["kind"] == "benign"]
    redacted = sum(not any(leaks(s, redact_secrets(c["text"])) for s in c["secrets"]) for c in secret)
    unchanged = sum(redact_secrets(c["text"]) == c["text"] for c in benign)
    return f"paste corpus: secrets redacted {redacted}/{len(secret)}, benign pastes unchanged {unchanged}/{len(benign)}"
redact_secrets("warm up")
if __name__ == "__main__":
    print(detection())
    print("2 kB with secrets    median {:.3f} ms  p99 {:.3f} ms".format(*measure(two_kb, 3)))
    print("2 kB clean           median {:.3f} ms  p99 {:.3f} ms".format(*measure(clean_2kb, 3)))
    print("200 kB with secrets  median {:.1f} ms  p99 {:.1f} ms".format(*measure(logs, 2)))
    print("200 kB clean         median {:.1f} ms  p99 {:.1f} ms".format(*measure(clean_logs, 2)))
