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
from collections.abc import Iterable, Sequence


def format_table(rows: Sequence[Sequence[str]], right: Iterable[int] = ()) -> list[str]:
    """Lines of a plain-text table: columns padded to their widest cell, two spaces apart.

    rows[0] is the header; columns whose index is in `right` are right-aligned (numbers), the
    others left-aligned. Trailing spaces are stripped.
    """
    right = set(right)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
        for r in rows
    ]


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


def _cmd_params(args: argparse.Namespace) -> int:
    from . import ParameterError, preset_info, presets

    names = args.presets or presets()
    try:
        infos = [preset_info(name) for name in names]
    except ParameterError as e:
        print(f"oboro params: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(infos, indent=2))
        return 0
    header = ("preset", "N", "slots", "levels", "log2(QP)", "dnum", "scale", "security", "limit log2(QP)")
    rows = []
    for p in infos:
        sec = p["security"]
        limit = p["max_log_qp"].get(sec) if sec is not None else None
        rows.append(
            (
                p["name"],
                f"2^{p['log_n']}",
                str(p["slots"]),
                str(p["levels"]),
                str(p["log_qp"]),
                str(p["dnum"]),
                f"2^{p['scale_bits']:g}",
                "none (INSECURE)" if sec is None else f"{sec}-bit",
                "-" if limit is None else f"<= {limit}",
            )
        )
    for line in format_table([header, *rows]):
        print(line)
    if args.verbose:
        for p in infos:
            limits = ", ".join(f"{b}-bit <= {m}" for b, m in p["max_log_qp"].items() if m is not None)
            print(
                f"\n{p['name']}: ciphertext primes {p['moduli_bits']} bits, special primes {p['special_bits']} bits; "
                f"HE-standard limits of log2(QP) at N = 2^{p['log_n']}: {limits}"
            )
    return 0


def _cmd_functions(args: argparse.Namespace) -> int:
    from .functions import print_table

    print_table()
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    # Implemented in python/oboro/bench.py (its options are registered by bench.add_arguments).
    from . import bench

    return bench.execute(args)


def _cmd_compare(args: argparse.Namespace) -> int:
    # Implemented in python/oboro/compare/ (options registered by compare.command.add_arguments).
    from .compare import command

    return command.execute(args)


def _demo_argv(argv: list[str]) -> list[str]:
    """Everything after the `demo` subcommand, unchanged."""
    return argv[argv.index("demo") + 1 :]


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

    p = sub.add_parser("params", help="print the parameter presets (slots, levels, log2(QP), dnum, security)")
    p.add_argument("presets", nargs="*", metavar="PRESET", help="preset names (default: all)")
    p.add_argument("--json", action="store_true", help="print as JSON")
    p.add_argument("-v", "--verbose", action="store_true", help="also list the prime sizes")
    p.set_defaults(func=_cmd_params)

    p = sub.add_parser("functions", help="print oboro.functions' defaults: interval, degree, depth, error")
    p.set_defaults(func=_cmd_functions)

    # Subcommands whose options and help text live in their own module (DESCRIPTION, EPILOG,
    # add_arguments, execute).
    from . import bench
    from .compare import command as compare

    for name, module, func, summary in (
        ("bench", bench, _cmd_bench, "time the CKKS primitives per preset and level (table, JSON, PNG plots)"),
        (
            "compare",
            compare,
            _cmd_compare,
            "time oboro beside other CKKS libraries (OpenFHE, SEAL, desilofhe, Lattigo): ops, memory, depth",
        ),
    ):
        p = sub.add_parser(
            name,
            help=summary,
            description=module.DESCRIPTION,
            epilog=module.EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(p)
        p.set_defaults(func=func)

    # ---- more subcommands are registered here ----

    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    # Options after `demo` (e.g. `oboro demo --preset S3`) belong to the demo's own parser: argparse
    # leaves them unrecognized here, and they are passed on in order.
    args, extra = parser.parse_known_args(argv)
    if getattr(args, "command", None) == "demo":
        args.demo_args = _demo_argv(sys.argv[1:] if argv is None else list(argv))
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
