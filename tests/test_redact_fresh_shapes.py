"""Secrets in tool answers of shapes a fresh generator found kept, and a file's line it removed (a red-team pass,
session 34, on 4,204 generated hermes tool answers the redactor had never been tuned on). Each shape is checked raw
and as hermes' terminal tool returns it (JSON, the text's lines escaped), with a look-alike that must stay."""

from __future__ import annotations

import json

import pytest

from hermes_ctx_plugins.safety import redact_secrets


def forms(text: str) -> list[tuple[str, str]]:
    """``text`` raw, and what the model reads of it back from a terminal tool's JSON answer."""
    answer = redact_secrets(json.dumps({"output": text, "exit_code": 0, "error": None}, ensure_ascii=False))
    return [("raw", redact_secrets(text)), ("terminal", json.loads(answer)["output"])]


SECRETS = [
    # a session cookie: whoever holds it is logged in
    ("HTTP/1.1 302 Found\nSet-Cookie: connect.sid=s%3Ac4zzHzLcciTA1bHTuOTNnfwT1d6nRntU8-kRO8qnGXAT; Path=/; HttpOnly",
     "c4zzHzLcciTA1bHTuOTNnfwT1d6nRntU8"),
    ("< HTTP/2 200\n< set-cookie: sessionid=9f2c7a1e5b3d4c6f8a0e2b4d6f8a1c3e; Path=/; Secure",
     "9f2c7a1e5b3d4c6f8a0e2b4d6f8a1c3e"),
    ("> GET / HTTP/1.1\n> Cookie: _ga=GA1.2.217212144.1160723294; sessionid=R7HutayAC-D9xgkkpFGwIWI4x-mkYf12f; "
     "theme=dark",
     "R7HutayAC-D9xgkkpFGwIWI4x-mkYf12f"),
    # Redis's password as CONFIG GET answers it, and as redis.conf sets it
    ('$ redis-cli CONFIG GET requirepass\n1) "requirepass"\n2) "CQdHy1CwVWgHo9RV7jAvQwiRmNN"',
     "CQdHy1CwVWgHo9RV7jAvQwiRmNN"),
    ("bind 0.0.0.0\nrequirepass Xk8pQ2mVt7wL\nport 6379", "Xk8pQ2mVt7wL"),
    # a quoted value holding ")" (Django's generated keys do)
    ('SECRET_KEY = "django-insecure-4uZD!bSc1M)1aUTu44HVCTViO0=NsG-0yLAybw0p!9E_fd7O6)"', "1aUTu44HVCTViO0"),
    # a typed secret under a secret's name, not a password's
    ('SECRET_KEY = "Kestrel-5655!"', "Kestrel-5655"),
    ("JWT_SECRET=Orchid_42!\nPORT=8080", "Orchid_42"),
    ("    environment:\n      STRIPE_API_KEY: indigo15259\n", "indigo15259"),
    # a URL's password with dots in it
    ("BROKER_URL=amqp://celery:hcPyho0.KpOUQ8@rabbitmq:5672/", "hcPyho0.KpOUQ8"),
    ("postgresql://svc:Qx7.mZ2.pL9@10.0.3.7:5432/db", "Qx7.mZ2.pL9"),
    # a value starting with "#" (no comment, no Ruby interpolation, no colour)
    ("define('DB_PASSWORD', '#3wD80HOYt6Dm');", "3wD80HOYt6Dm"),
    ("/usr/bin/java -Dspring.datasource.password=#2U3g7EaPi-uwL87O!J -jar app.jar", "2U3g7EaPi-uwL87O"),
    # a Chinese mail service's SMTP app code (授权码): 16 letters no word is made of, in an INI file
    ("[smtp]\n; 授权码（不是登录密码）\nserver = smtp.qq.com\npass = xclplduccmycljlq\n", "xclplduccmycljlq"),  # noqa: RUF001
]


@pytest.mark.parametrize(("text", "secret"), SECRETS, ids=[s for _, s in SECRETS])
def test_the_secret_is_redacted_raw_and_in_a_terminal_answer(text: str, secret: str) -> None:
    for form, seen in forms(text):
        assert secret not in seen, f"{form}: {seen!r}"
        assert "[REDACTED:" in seen


KEPT = [
    # read_file's gutter is no table: a line after a credential's name is the file's next line
    ("7|password\n8|services:\n", "8|services:"),
    ("1|  - db_password\n2|secrets:\n3|  db_password:\n", "2|secrets:"),
    # a line ending in "password" and the next line are not "password X" said in a sentence
    ("Enter the admin password\n8|services: web,db\n", "8|services: web,db"),
    # cookies that log nobody in; a placeholder; code's name for where a URL's password comes from
    ("> Cookie: _ga=GA1.2.217212144.1160723294; theme=dark", "_ga=GA1.2.217212144.1160723294; theme=dark"),
    ("# requirepass foobared", "requirepass foobared"),
    ('SECRET_KEY = "dev-key-2"', "dev-key-2"),
    ("api_key: sk_test_123", "sk_test_123"),
    ("DATABASE_URL = f'postgresql://user:settings.DB_PASS@host/db'", "settings.DB_PASS"),
    ('password: "#{ENV[\'SMTP_PASSWORD\']}"', "#{ENV['SMTP_PASSWORD']}"),
    ("password: # set below", "# set below"),
    ("password_color: #ff00ff", "#ff00ff"),
    ("password: internationalization", "internationalization"),  # a long word, its vowels in place
    # a review of the rules above: a cookie's name in another line than the Cookie header, code's names, times,
    # placeholders in a URL, Redis named in code or in Chinese prose
    ('> Cookie: lang=en\n<\n{"next": "https://api.example.com/v1/items?pageToken=CiAKGjBpNDd2Nmp2ZzU4"}',
     "CiAKGjBpNDd2Nmp2ZzU4"),
    ("fix: Cookie: header parsing\n    auth_commit=8f7e6d5c4b3a29180716253443526170819aabb\n",
     "8f7e6d5c4b3a29180716253443526170819aabb"),
    ("tests/test_http.py::test_cookie: PASSED\nCOMMIT_AUTHOR_SHA=e83c5163316f89bfbde7d9ab23ca2e25\n",
     "e83c5163316f89bfbde7d9ab23ca2e25"),
    ("Cookie: lang=en\nGET /ncbi?pmcsid=PMC1234567890123456 HTTP/1.1", "PMC1234567890123456"),
    ("const client = new OpenAI({ apiKey: openaiKey2 });\n", "openaiKey2"),
    ("this.secret = jwtSecretV2;\n", "jwtSecretV2"),
    ("secret: 1h30m45s\n", "1h30m45s"),
    ('{"access_token": "expired", "api_key": "2024-05-01T12:00:00Z"}', "2024-05-01T12:00:00Z"),
    ("DATABASE_URL=postgres://app:{{.Values.db2.pw}}@db:5432/app\n", "{{.Values.db2.pw}}"),
    ("url: mysql://root:${db.root_pw1}@mysql:3306/app\n", "${db.root_pw1}"),
    ("redis://default:abc...xyz1@redis:6379\n", "abc...xyz1"),
    ("sed -i 's/^# requirepass .*/requirepass ${REDIS_PASS}/' /etc/redis/redis.conf\n", "requirepass .*/requirepass"),
    ("配置 requirepass 后，客户端需要 AUTH 认证。", "后，客户端需要"),  # noqa: RUF001
    ("api_key: 在控制台获取v2版本", "在控制台获取v2版本"),
    ('{"secret_key": "with\\nnewline"}', "with\\nnewline"),  # a test's value written on two lines, in JSON
]


@pytest.mark.parametrize(("text", "kept"), KEPT, ids=[k for _, k in KEPT])
def test_the_look_alike_stays(text: str, kept: str) -> None:
    for form, seen in forms(text):
        assert kept in seen, f"{form}: {seen!r}"


def test_a_table_behind_read_files_gutter_is_still_read() -> None:
    """The positive control of the gutter's line: a real credentials table, each line behind the gutter."""
    for form, seen in forms("1|user,password\n2|bob,Tr0ub4dor-8812\n3|eve,Kx9!mQ2vLp\n"):
        assert "Tr0ub4dor-8812" not in seen and "Kx9!mQ2vLp" not in seen, f"{form}: {seen!r}"
        assert "2|bob," in seen
