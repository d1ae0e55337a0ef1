"""The `oboro` command line.

Subcommands are registered in `build_parser()`; each one sets `func`, which receives the parsed
arguments and returns the process exit code.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import sys


def _cmd_info(args: argparse.Namespace) -> int:
    from . import build_info

    info = build_info()
    if args.json:
        print(json.dumps(info, indent=2, sort_keys=True))
    else:
        width = max(len(k) for k in info)
        for key in sorted(info):
            print(f"{key:<{width}}  {info[key]}")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    # ---- `oboro demo` ------------------------------------------------------------------------
    # Implemented in python/oboro/demo.py (owned by the demo's author): a module-level
    # `main(argv: list[str] | None = None) -> int | None`. Until that module exists, say so.
    if importlib.util.find_spec("oboro.demo") is None:
        print("demo not available yet", file=sys.stderr)
        return 1
    demo = importlib.import_module("oboro.demo")
    rc = demo.main(args.demo_args)
    return 0 if rc is None else int(rc)


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="oboro", description="oboro: CKKS homomorphic encryption")
    parser.add_argument("--version", action="version", version=f"oboro {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("info", help="print build information (compiler, CUDA, word size)")
    p.add_argument("--json", action="store_true", help="print as JSON")
    p.set_defaults(func=_cmd_info)

    # `oboro demo [ARGS...]`: everything after `demo` goes to oboro.demo.main().
    p = sub.add_parser("demo", help="run the end-to-end CKKS demo", add_help=False)
    p.add_argument("demo_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(func=_cmd_demo)

    # ---- more subcommands (e.g. `oboro bench ...`) are registered here ----

    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
