"""``python -m hermes_ctx_plugins.testing``: the loopback model stub the tests use, as a server of its own, to try
hermes with our plugin where no model is configured (README, "Install").

It is :class:`~hermes_ctx_plugins.testing.StubOpenAIServer`: an OpenAI-compatible chat completions server on
``127.0.0.1`` answering every request with ``stub reply to: <the start of the last user message>``, and counting
a request's tokens roughly (``--context-length`` makes it refuse one over that window, as OpenAI does). It prints
its base URL and the ``model:`` block that points hermes at it, then serves until Ctrl-C or ``--seconds``.
"""

from __future__ import annotations

import argparse
import sys
import time

from .openai_stub import StubOpenAIServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hermes_ctx_plugins.testing", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--context-length", type=int, default=128_000, help="the window it says and enforces")
    parser.add_argument("--seconds", type=float, default=0.0, help="stop after this long (default: at Ctrl-C)")
    args = parser.parse_args(argv)
    try:
        stub = StubOpenAIServer(context_length=args.context_length, port=args.port)
    except OSError as exc:
        print(f"cannot serve on 127.0.0.1:{args.port}: {exc}", file=sys.stderr)
        return 1
    print(stub.base_url)
    print(f"# in $HERMES_HOME/config.yaml:\nmodel: {{default: {stub.model}, provider: custom, base_url: "
          f"'{stub.base_url}', context_length: {args.context_length}}}", flush=True)
    try:
        deadline = time.monotonic() + args.seconds if args.seconds > 0 else None
        while deadline is None or time.monotonic() < deadline:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        stub.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
