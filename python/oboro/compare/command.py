"""`oboro compare`: options, the plan of worker runs, and the run itself (outputs: report.py)."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import TextIO

from .. import bench
from . import bootstrap, peers, report
from .peers import LIBRARIES
from .protocol import CIRCUITS, OPS
from .protocol import tolerance as protocol_tolerance
from .runner import DEFAULT_TIMEOUT_S, Outcome, run_worker

DEFAULT_PRESETS = ("S1", "S2")
DEFAULT_DEPTHS = (2, 4, 6, 8, 10)
#: paper 002's CKKS ring (N = 65536); --chain-log-n 15 or 14 for quicker runs (14 fits depth <= 8)
DEFAULT_CHAIN_LOG_N = 16
#: the chain mode's integer schemes (paper 002 shows BFV and BGV beside CKKS), where a library has them
INTEGER_SCHEMES = {"openfhe": ("bfv", "bgv"), "lattigo": ("bfv", "bgv")}
SCHEMES = ("ckks", "bfv", "bgv")
#: paper 002's BFV/BGV plaintext modulus (t = 1 mod 2N up to N = 2^15: one slot per coefficient)
PLAIN_MODULUS = 65537
#: OMP_WAIT_POLICY values passed to every worker (only OpenMP runtimes read it: OpenFHE's)
OMP_WAIT_POLICIES = ("default", "passive", "active")
#: SEAL has no threads inside an op: its two-thread run would repeat the one-thread one
SINGLE_THREADED = {"seal": "SEAL runs each op on one thread (no threads inside an op): only its 1t column is measured"}


#: --circuits: the ring (N = 2^16; --circuits-log-n 15 for quicker runs), the Chebyshev degrees, the
#: matrix sizes ("full": slots x slots), the scale (--circuits-scale-bits: the size of the chain's
#: scaling primes), and the precision asked of oboro's inverse/sqrt: the scale's bits less
#: CIRCUIT_BITS_BELOW_SCALE (CKKS at scale 2^40 gives about 20-22 bits after such a circuit: asking
#: for more only costs levels)
DEFAULT_CIRCUITS_LOG_N = 16
CIRCUIT_DEGREES = (7, 15, 31, 63, 127, 255)
MATVEC_SIZES = ("64", "256", "full")
DEFAULT_CIRCUITS_SCALE_BITS = 40
CIRCUIT_BITS_BELOW_SCALE = 20.0
#: the first prime of the circuits' chain: at most 50-bit scaling primes keep the message (|x| <= 16
#: for 1/x and sqrt) 10 bits below it
CIRCUIT_FIRST_PRIME_BITS = 60
MAX_CIRCUITS_SCALE_BITS = 50
#: --circuits timed runs per circuit (after the checked call), unless --repeat; and at least this many
#: seconds of them (fast circuits run more often), unless --min-seconds; --quick: 1 run, 0 s
CIRCUIT_REPEAT = 3
CIRCUIT_MIN_SECONDS = 1.0
#: --circuits: each circuit checked on this many fresh encryptions of its input (median precision,
#: worst for the tolerance), unless --check-encryptions; --quick: 1. The worst slot of one
#: encryption moves by up to 2 bits from one encryption to the next: three resolve about half a
#: bit between libraries, 25 about a tenth
CIRCUIT_CHECK_ENCRYPTIONS = 3
SIGMOID_INTERVAL, SIGMOID_DEGREE = (-8.0, 8.0), 63
ROOT_INTERVAL = (1.0, 16.0)  # 1/x and sqrt(x)
SCALE_CONSTANT = 0.3  # the "scale" row: x times this, for x uniform on [-1, 1]
# Every circuit but "scale", a precision probe (what one level costs each library's precision) asked
# for by name (scripts/bench_docs.sh polynomial_precision), not a circuit to time
DEFAULT_CIRCUITS = tuple(k for k in CIRCUITS if k != "scale")
#: the seed of the Chebyshev series' coefficients (c_k = U(-1, 1) / (k + 1), one draw per degree)
COEFF_SEED = 2024
#: a matrix-vector case whose pre-encoded diagonals would take more memory than this is not run
MATVEC_MEMORY_LIMIT = 4 * 2**30
#: libraries that cannot run the circuits mode at all, and why
NO_CIRCUITS = {"seal": "SEAL has no polynomial evaluator, no function approximations and no linear-transform API "
                       "(only single ops, which the per-op mode measures): skipped in --circuits"}


class CompareError(Exception):
    """Invalid options of `oboro compare`."""


def preset_params(name: str) -> dict:
    import oboro

    if name not in oboro.presets():
        raise CompareError(f"unknown preset '{name}' (known presets: {', '.join(oboro.presets())})")
    i = oboro.preset_info(name)
    return {k: i[k] for k in ("log_n", "moduli_bits", "special_bits", "scale_bits", "dnum")}


def chain_params(log_n: int, depth: int) -> dict:
    """Q = [60] + depth x [40], P = [60], dnum = depth + 1 (one digit per prime: SEAL can do nothing
    else, and the others take the same), checked against oboro's 128-bit bound."""
    import oboro

    p = {"log_n": log_n, "moduli_bits": [60] + [40] * depth, "special_bits": [60], "scale_bits": 40, "dnum": depth + 1}
    try:
        oboro.Context(log_n=log_n, moduli_bits=p["moduli_bits"], special_bits=p["special_bits"], dnum=p["dnum"])
    except oboro.ParameterError as e:
        raise CompareError(f"depth {depth} does not fit N = 2^{log_n} at 128-bit security ({e}); use a larger --chain-log-n") from None
    return p


def integer_chain_params(log_n: int, depth: int) -> dict:
    """BFV/BGV at paper 002's t = 65537: the CKKS chain's moduli on a ring of N/2 (the same slot count,
    as in the paper: CKKS N = 65536, BFV/BGV N = 32768), checked against the same 128-bit bound."""
    return {**chain_params(log_n, depth), "plain_modulus": PLAIN_MODULUS}


def circuit_bits(scale_bits: int) -> float:
    """The precision asked of oboro's inverse and sqrt at the chain's scale (20 bits at 2^40)."""
    return scale_bits - CIRCUIT_BITS_BELOW_SCALE


def circuit_params(log_n: int, levels: int, scale_bits: int = DEFAULT_CIRCUITS_SCALE_BITS) -> dict:
    """The circuits' chain: Q = [60] + levels x [scale_bits] (40 by default), dnum = 3 digits of
    ceil((levels + 1) / 3) primes each (as the S4 preset), P = that many 60-bit primes (a digit of
    scaling primes and the 60-bit one fits under P), checked against oboro's 128-bit bound."""
    import oboro

    if not 20 <= scale_bits <= MAX_CIRCUITS_SCALE_BITS:
        raise CompareError(f"--circuits-scale-bits {scale_bits}: from 20 to {MAX_CIRCUITS_SCALE_BITS} (the message "
                           f"needs 10 bits below the {CIRCUIT_FIRST_PRIME_BITS}-bit first prime)")
    per_digit = -(-(levels + 1) // 3)
    p = {"log_n": log_n, "moduli_bits": [CIRCUIT_FIRST_PRIME_BITS] + [scale_bits] * levels,
         "special_bits": [60] * per_digit, "scale_bits": scale_bits, "dnum": -(-(levels + 1) // per_digit)}
    try:
        oboro.Context(log_n=log_n, moduli_bits=p["moduli_bits"], special_bits=p["special_bits"], dnum=p["dnum"])
    except oboro.ParameterError as e:
        raise CompareError(f"{levels} levels do not fit N = 2^{log_n} at 128-bit security ({e}); use a larger "
                           f"--circuits-log-n or fewer --circuits-cases / lower --circuits-degrees") from None
    return p


def goldschmidt_iterations(log_n: int, scale_bits: float, lo_over_hi: float) -> int:
    """The iterations that Lattigo's GoldschmidtDivisionNew chooses for inputs in [lo/hi, 1] (its
    documented estimate: the error (1 - lo/hi)^(2^k) must fall below 2^(log_n - 1 - scale_bits); at
    least 3); with the map x -> x / hi it takes iterations + 1 levels."""
    prec, start, iters = 2.0 ** (log_n - 1 - scale_bits), 1.0 - lo_over_hi, 1
    while start >= prec:
        start *= start
        iters += 1
    return max(iters, 3)


def circuit_levels(case: dict, log_n: int, scale_bits: float = 40) -> int:
    """The most levels any library's algorithm takes for the case (the chain gives every library that
    many): OpenFHE's Paterson-Stockmeyer and desilofhe take ceil(log2(d + 1)) + 1 (one more than oboro
    and Lattigo), plus one to map an interval other than [-1, 1]; Lattigo's Goldschmidt division
    takes its iterations + 1; the matrix-vector product one."""
    kind = case["kind"]
    if kind in ("matvec", "scale"):
        return 1
    d = case["degree"]
    # d.bit_length() = ceil(log2(d + 1)); + 1 for OpenFHE/desilofhe; + 1 for the map of an interval
    need = d.bit_length() + 1 + (0 if tuple(case["interval"]) == (-1.0, 1.0) else 1)
    if kind == "inverse":
        lo, hi = case["interval"]
        need = max(need, goldschmidt_iterations(log_n, scale_bits, lo / hi) + 1)
    return need


def _sigmoid(t: float) -> float:
    return 1.0 / (1.0 + math.exp(-t)) if t >= 0 else math.exp(t) / (1.0 + math.exp(t))


def chebyshev_coefficients(degree: int) -> list[float]:
    """The series of the Chebyshev rows: c_k = U(-1, 1) / (k + 1), k = 0 .. degree, drawn with a fixed
    seed per degree (the same for every library and every run)."""
    import numpy as np

    rng = np.random.default_rng([COEFF_SEED, degree])
    return (rng.uniform(-1.0, 1.0, degree + 1) / np.arange(1, degree + 2)).tolist()


def plan_circuits(args: argparse.Namespace, settings: dict) -> list[tuple[str, dict]]:
    """The circuits mode: [("functions", task), ("matvec", task)] (the groups that were asked for),
    each task with its cases; fills settings (params, levels, cases, skipped cases)."""
    import oboro

    log_n, scale_bits = args.circuits_log_n, args.circuits_scale_bits
    bits = circuit_bits(scale_bits)
    kinds = args.circuits_cases or list(DEFAULT_CIRCUITS)
    for k in kinds:
        if k not in CIRCUITS:
            raise CompareError(f"unknown circuit '{k}' (known: {', '.join(CIRCUITS)})")
    degrees = args.circuits_degrees or list(CIRCUIT_DEGREES)
    cases, planned_out = [], {}
    if "chebyshev" in kinds:
        cases += [{"key": f"chebyshev {d}", "kind": "chebyshev", "degree": d, "interval": [-1.0, 1.0],
                   "coeffs": chebyshev_coefficients(d), "seed": 100 + d} for d in degrees]
    if "sigmoid" in kinds:
        lo_hi = SIGMOID_INTERVAL
        cases.append({"key": "sigmoid", "kind": "sigmoid", "degree": SIGMOID_DEGREE, "interval": list(lo_hi), "seed": 10,
                      "coeffs": oboro.functions.coefficients(_sigmoid, lo_hi, SIGMOID_DEGREE)})
    for kind, seed, which, f in (("inverse", 11, "inverse", None), ("sqrt", 12, "sqrt", math.sqrt)):
        if kind in kinds:
            # the others' degree: the one of oboro's own plan for those bits (a comparable polynomial)
            d = oboro.functions.plan_inverse(ROOT_INTERVAL, bits, which)["degree"]
            case = {"key": kind, "kind": kind, "degree": d, "interval": list(ROOT_INTERVAL), "bits": bits, "seed": seed}
            if f is not None:
                case["coeffs"] = oboro.functions.coefficients(f, ROOT_INTERVAL, d)
            cases.append(case)
    if "scale" in kinds:
        # the error one level adds to a fresh encryption: where a library keeps a larger scale than the
        # chain's (a fresh input, a product by a constant), its functions gain the difference
        cases.append({"key": "scale", "kind": "scale", "constant": SCALE_CONSTANT, "interval": [-1.0, 1.0], "seed": 13})
    levels = max((circuit_levels(c, log_n, scale_bits) for c in cases), default=1)
    params = circuit_params(log_n, levels, scale_bits)
    slots = 2 ** (log_n - 1)
    matvec = []
    if "matvec" in kinds:
        for size in args.matvec_sizes or list(MATVEC_SIZES):
            n = slots if size == "full" else int(size) if size.isdigit() else 0
            key = f"matvec {n}"
            if n < 2 or n & (n - 1) or n > slots:
                raise CompareError(f"--matvec-sizes: {size} is not a power of two from 2 to the {slots} slots of N = 2^{log_n}")
            # every diagonal pre-encoded over Q and P (Lattigo's lintrans), plus the matrix itself in NumPy
            need = n * (len(params["moduli_bits"]) + len(params["special_bits"])) * 2**log_n * 8 + 8 * n * n
            if need > MATVEC_MEMORY_LIMIT:
                planned_out[f"matrix {n}x{n} (full) times vector" if size == "full" else _case_label({"kind": "matvec", "size": n})] = (f"not run: its {n} pre-encoded diagonals at {levels} levels take about "
                                    f"{need / 2**30:,.0f} GiB per library (limit {MATVEC_MEMORY_LIMIT / 2**30:g} GiB)")
                continue
            matvec.append({"key": key, "kind": "matvec", "size": n, "seed": 1000 + 2 * n.bit_length()})
    tasks = [(group, {"mode": "circuits", "cases": group_cases, "params": params})
             for group, group_cases in (("functions", cases), ("matvec", matvec)) if group_cases]
    if not tasks:
        raise CompareError("no circuit to run (see --circuits-cases and --matvec-sizes)")
    labels = {c["key"]: _case_label(c) for c in cases + matvec}
    settings.update(circuits_log_n=log_n, levels=levels, params={"circuits": params}, circuit_bits=bits,
                    cases=[{k: v for k, v in c.items() if k != "coeffs"} | {"label": labels[c["key"]],
                            "levels_needed": circuit_levels(c, log_n, scale_bits)} for c in cases + matvec],
                    coefficients={c["key"]: c["coeffs"] for c in cases if "coeffs" in c},
                    planned_out=planned_out, tolerance={k: protocol_tolerance(k) for k in labels})
    return tasks


def _case_label(c: dict) -> str:
    kind = c["kind"]
    if kind == "chebyshev":
        return f"Chebyshev series, degree {c['degree']}"
    if kind == "sigmoid":
        return f"sigmoid on [-8, 8], degree {c['degree']}"
    if kind == "inverse":
        return "1/x on [1, 16]"
    if kind == "sqrt":
        return "sqrt(x) on [1, 16]"
    if kind == "scale":
        return f"x times {c['constant']:g} (one level)"
    return f"matrix {c['size']}x{c['size']} times vector"


def _libraries_arg(text: str) -> list[str]:
    return bench._choice_list(text, LIBRARIES, "library")


def _schemes_arg(text: str) -> list[str]:
    return bench._choice_list(text, SCHEMES, "scheme", str.lower)


def _int_list(text: str) -> list[int]:
    try:
        values = [int(t) for t in bench._comma_list(text)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers >= 1, got '{text}'") from None
    if any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected integers >= 1, got '{text}'")
    return list(dict.fromkeys(values))


DESCRIPTION = (
    "Measures oboro beside the other CKKS libraries that are installed (OpenFHE, SEAL through\n"
    "tenseal.sealapi, desilofhe, Lattigo), each through its own fastest interface, on the same parameters,\n"
    "each library in a process of its own (its peak RSS is read from the kernel). Per op (median time):\n\n"
    + "\n".join(f"  {k:<9} {v}" for k, v in OPS.items())
    + "\n\nat 1 and 2 threads, plus key and ciphertext sizes. Every op is checked against NumPy first.\n"
    "--chain instead times a chain of squarings (multiply + relinearize + rescale) against depth, with\n"
    "the peak memory of each depth (paper 002, Figures 2 and 3), in CKKS for every library and in BFV and\n"
    "BGV (t = 65537, N/2) for OpenFHE and Lattigo. --circuits times whole circuits instead: Chebyshev\n"
    "series of degree 7 to 255, the sigmoid, 1/x and sqrt(x), and plaintext matrix x encrypted vector,\n"
    "on one ring and modulus chain for every library, with each result's precision in bits and the\n"
    "levels each library used (SEAL has no such evaluators). --bootstrap measures bootstrapping at\n"
    "N = 2^16 instead (time, precision, levels left, keys, peak memory) beside Lattigo, OpenFHE and\n"
    "desilofhe. Missing libraries are skipped with the\n"
    "reason; scripts/install_peers.sh installs them. Progress goes to stderr."
)

EPILOG = """\
examples:
  oboro compare                                   S1 and S2, every installed library, 1 and 2 threads
  oboro compare --quick --libraries oboro,lattigo
  oboro compare --s4 --json c.json --markdown c.md --plot plots/
  oboro compare --chain --depths 2,4,6 --chain-log-n 15 --threads 1
  oboro compare --chain --schemes ckks --libraries oboro,seal
  oboro compare --omp-wait-policy passive       OpenMP threads sleep instead of spinning (docs/compare.md)
  oboro compare --circuits --json docs/benchmarks/polynomial.json --markdown docs/benchmarks/polynomial.md --plot docs/benchmarks
  oboro compare --bootstrap --json docs/benchmarks/bootstrap.json --markdown docs/benchmarks/bootstrap.md
  oboro compare --bootstrap --quick --libraries oboro,lattigo     N = 2^12, seconds
  oboro compare --circuits --quick --circuits-log-n 14 --circuits-cases chebyshev,matvec --circuits-degrees 7,15
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--presets", type=bench._presets_arg, default=None, metavar="LIST",
                   help=f"presets to compare (default {','.join(DEFAULT_PRESETS)}; add S4 with --s4)")
    p.add_argument("--s4", action="store_true", help="also S4 (N = 2^16, 20 levels): minutes per library and GBs of memory")
    p.add_argument("--libraries", type=_libraries_arg, default=None, metavar="LIST",
                   help=f"libraries to run (default: all of {','.join(LIBRARIES)}; oboro is always included)")
    p.add_argument("--ops", type=bench._comma_list, default=None, metavar="LIST", help=f"ops to time (default all: {','.join(OPS)})")
    p.add_argument("--threads", type=_int_list, default=None, metavar="LIST", help="thread counts (default 1,2; --chain: 1)")
    p.add_argument("--repeat", type=bench._positive_int, default=None, metavar="R",
                   help=f"minimum timed runs per op after one warm-up (default {bench.DEFAULT_REPEAT}, --quick {bench.QUICK_REPEAT}; "
                        f"--circuits: {CIRCUIT_REPEAT} after the checked call, --quick 1)")
    p.add_argument("--min-seconds", type=bench._seconds_arg, default=None, metavar="S",
                   help=f"minimum timed seconds per op (default {bench.DEFAULT_MIN_SECONDS}, --circuits {CIRCUIT_MIN_SECONDS:g}, --quick 0)")
    p.add_argument("--quick", action="store_true", help="smoke run: fewer repeats, noisy numbers")
    p.add_argument("--chain", action="store_true", help="the multiplication chain against depth instead of the per-op table")
    p.add_argument("--depths", type=_int_list, default=None, metavar="LIST", help=f"--chain depths (default {','.join(map(str, DEFAULT_DEPTHS))})")
    p.add_argument("--chain-log-n", type=int, default=DEFAULT_CHAIN_LOG_N, metavar="LOGN",
                   help=f"--chain ring dimension log2(N) (default {DEFAULT_CHAIN_LOG_N}, paper 002's CKKS ring)")
    p.add_argument("--schemes", type=_schemes_arg, default=None, metavar="LIST",
                   help="--chain schemes (default ckks,bfv,bgv; BFV/BGV at N = 2^(LOGN-1), t = 65537, in OpenFHE and Lattigo)")
    p.add_argument("--circuits", action="store_true",
                   help="whole circuits instead of the per-op table: Chebyshev series, sigmoid, 1/x, sqrt, matrix x vector")
    p.add_argument("--circuits-log-n", type=int, default=DEFAULT_CIRCUITS_LOG_N, metavar="LOGN",
                   help=f"--circuits ring dimension log2(N) (default {DEFAULT_CIRCUITS_LOG_N}; 15 is quicker; 14 fits degree <= 15 and matvec only)")
    p.add_argument("--circuits-scale-bits", type=int, default=DEFAULT_CIRCUITS_SCALE_BITS, metavar="BITS",
                   help=f"--circuits scale: the chain's scaling primes' size in bits, for every library on the shared "
                        f"chain (default {DEFAULT_CIRCUITS_SCALE_BITS}, at most {MAX_CIRCUITS_SCALE_BITS}); oboro's 1/x and "
                        f"sqrt are asked for {CIRCUIT_BITS_BELOW_SCALE:g} bits less")
    p.add_argument("--circuits-cases", type=bench._comma_list, default=None, metavar="LIST",
                   help=f"--circuits circuits to run (default: {','.join(DEFAULT_CIRCUITS)}; known: {','.join(CIRCUITS)})")
    p.add_argument("--circuits-degrees", type=_int_list, default=None, metavar="LIST",
                   help=f"--circuits Chebyshev degrees (default {','.join(map(str, CIRCUIT_DEGREES))})")
    p.add_argument("--matvec-sizes", type=bench._comma_list, default=None, metavar="LIST",
                   help=f"--circuits matrix sizes, powers of two or 'full' (slots x slots) (default {','.join(MATVEC_SIZES)})")
    p.add_argument("--check-encryptions", type=int, default=None, metavar="K",
                   help=f"--circuits fresh encryptions each circuit is checked on, the median precision reported "
                        f"(default {CIRCUIT_CHECK_ENCRYPTIONS}, --quick 1; 25 tell apart a tenth of a bit)")
    p.add_argument("--bootstrap", action="store_true",
                   help="bootstrapping at N = 2^16 instead of the per-op table: oboro's configurations beside Lattigo's "
                        "default set and OpenFHE's EvalBootstrap (tens of minutes, most of the memory; --quick: N = 2^12)")
    p.add_argument("--bootstrap-configs", type=bootstrap.configs_arg, default=None, metavar="LIST",
                   help=f"--bootstrap: oboro's configurations (default all: {','.join(bootstrap.CONFIGS)}; --quick: default)")
    p.add_argument("--omp-wait-policy", choices=OMP_WAIT_POLICIES, default="default",
                   help="OMP_WAIT_POLICY of every worker (default: each runtime's own; see docs/compare.md on spin-waiting)")
    p.add_argument("--peer-python", default=None, metavar="PATH",
                   help="Python interpreter with openfhe/tenseal/desilofhe (default: $OBORO_PEER_PYTHON, .peers/py310, this one)")
    p.add_argument("--lattigo", default=None, metavar="PATH", help="the Lattigo program (default: $OBORO_LATTIGO, bench/peers/lattigo/lattigo-bench)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S", help=f"seconds per worker process (default {DEFAULT_TIMEOUT_S})")
    p.add_argument("--json", metavar="PATH", default=None, help="write the results as JSON")
    p.add_argument("--markdown", metavar="PATH", default=None, help="write the Markdown report")
    p.add_argument("--plot", metavar="DIR", default=None, help="write PNG plots into DIR (needs matplotlib: pip install 'oboro[plot]')")
    p.add_argument("--no-progress", action="store_true", help="no progress output on stderr")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="oboro compare", description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    return p


def plan_tasks(args: argparse.Namespace) -> tuple[list[tuple[str, dict]], dict]:
    """[(key, task without library)] in run order, and the settings for the report; CompareError on bad input."""
    quick = args.quick
    repeat = args.repeat or (bench.QUICK_REPEAT if quick else bench.DEFAULT_REPEAT)
    min_s = args.min_seconds if args.min_seconds is not None else (0.0 if quick else bench.DEFAULT_MIN_SECONDS)
    settings = {"repeat": repeat, "min_seconds": min_s, "quick": quick, "warm_up_runs": 1}
    if args.bootstrap_configs and not args.bootstrap:
        raise CompareError("--bootstrap-configs needs --bootstrap")
    if args.bootstrap and (args.chain or args.circuits or args.presets or args.s4 or args.ops or args.depths or args.schemes):
        raise CompareError("--bootstrap takes --bootstrap-configs, --threads, --repeat and --quick, not "
                           "--chain/--circuits/--presets/--s4/--ops/--depths/--schemes")
    circuit_opts = (args.circuits_cases or args.circuits_degrees or args.matvec_sizes or args.check_encryptions is not None
                    or args.circuits_log_n != DEFAULT_CIRCUITS_LOG_N
                    or args.circuits_scale_bits != DEFAULT_CIRCUITS_SCALE_BITS)
    if circuit_opts and not args.circuits:
        raise CompareError("--circuits-log-n, --circuits-scale-bits, --circuits-cases, --circuits-degrees, --matvec-sizes "
                           "and --check-encryptions need --circuits")
    if args.check_encryptions is not None and args.check_encryptions < 1:
        raise CompareError(f"--check-encryptions must be at least 1, not {args.check_encryptions}")
    if args.circuits:
        if args.chain or args.presets or args.s4 or args.ops or args.depths or args.schemes:
            raise CompareError("--circuits takes --circuits-log-n/-cases/-degrees and --matvec-sizes, not --chain/--presets/--s4/--ops/--depths/--schemes")
        threads = args.threads or [1, 2]
        # one call takes up to seconds (tens at N = 2^16): fewer runs by default; the check call of
        # each circuit is its warm-up
        repeat = args.repeat or (1 if quick else CIRCUIT_REPEAT)
        min_s = args.min_seconds if args.min_seconds is not None else (0.0 if quick else CIRCUIT_MIN_SECONDS)
        encryptions = args.check_encryptions or (1 if quick else CIRCUIT_CHECK_ENCRYPTIONS)
        settings.update(threads=threads, warm_up_runs=0, repeat=repeat, min_seconds=min_s, check_encryptions=encryptions)
        tasks = plan_circuits(args, settings)
        for _, t in tasks:
            t["check_encryptions"] = encryptions
    elif args.chain:
        if args.presets or args.s4 or args.ops:
            raise CompareError("--chain takes --depths and --chain-log-n, not --presets/--s4/--ops")
        depths = args.depths or list(DEFAULT_DEPTHS)
        libs = args.libraries or LIBRARIES
        with_integer = {s for lib in libs for s in INTEGER_SCHEMES.get(lib, ())}
        schemes = args.schemes or [s for s in SCHEMES if s == "ckks" or s in with_integer]
        for s in schemes:
            if s != "ckks" and s not in with_integer:
                raise CompareError(f"no selected library has {s.upper()} (those that do: {', '.join(INTEGER_SCHEMES)})")
        threads = args.threads or [1]
        tasks = [(f"depth {d}", {"mode": "chain", "scheme": "ckks", "depth": d, "params": chain_params(args.chain_log_n, d)})
                 for d in depths] if "ckks" in schemes else []
        tasks += [(f"depth {d}", {"mode": "chain", "scheme": s, "depth": d, "params": integer_chain_params(args.chain_log_n - 1, d)})
                  for s in schemes if s != "ckks" for d in depths]
        settings.update(depths=depths, chain_log_n=args.chain_log_n, schemes=schemes, threads=threads,
                        params={f"{t['scheme']} {k}": t["params"] for k, t in tasks})
    else:
        if args.depths or args.schemes:
            raise CompareError("--depths and --schemes need --chain")
        names = list(dict.fromkeys((args.presets or list(DEFAULT_PRESETS)) + (["S4"] if args.s4 else [])))
        ops = list(dict.fromkeys(args.ops or OPS))
        for op in ops:
            if op not in OPS:
                raise CompareError(f"unknown op '{op}' (known ops: {', '.join(OPS)})")
        threads = args.threads or [1, 2]
        tasks = [(n, {"mode": "ops", "ops": ops, "params": preset_params(n)}) for n in names]
        settings.update(presets=names, ops=ops, threads=threads, params={k: t["params"] for k, t in tasks})
    for _, t in tasks:
        t.update(repeat=repeat, min_seconds=min_s, seed=42)
    settings["omp_wait_policy"] = args.omp_wait_policy
    return tasks, settings


def runs_library(library: str, task: dict) -> bool:
    """Whether `library` has the task's scheme (every library has CKKS)."""
    return task.get("scheme", "ckks") == "ckks" or task["scheme"] in INTEGER_SCHEMES.get(library, ())


def execute(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Runs `oboro compare`; exit code 0 ok, 1 a library failed or matplotlib is missing, 2 bad input."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        tasks, settings = plan_tasks(args)
        bench._check_output_paths(args.json, args.plot)
        if args.markdown is not None:
            bench._check_output_paths(args.markdown, None)
        if args.plot is not None:
            bench.load_pyplot()
    except (CompareError, bench.BenchError) as e:
        print(f"oboro compare: error: {e}", file=err)
        return 2
    if args.bootstrap:
        return bootstrap.execute(args, out, err)
    libs = ["oboro"] + [lib for lib in (args.libraries or LIBRARIES) if lib != "oboro"]
    if args.circuits:
        launches = [peers.Launch(lib, skipped=NO_CIRCUITS[lib]) if lib in NO_CIRCUITS
                    else peers.find(lib, args.peer_python, args.lattigo) for lib in libs]
    else:
        launches = [peers.find(lib, args.peer_python, args.lattigo) for lib in libs]
    skipped = {la.library: la.skipped for la in launches if la.skipped}
    for lib, why in skipped.items():
        print(f"oboro compare: skipped: {lib}: {why}", file=err)
    notes = [f"{lib}: {why}" for lib, why in SINGLE_THREADED.items() if lib in libs and lib not in skipped
             and any(t > 1 for t in settings["threads"])]
    runs = [(key, task, t, la) for key, task in tasks for t in settings["threads"] for la in launches
            if not la.skipped and not (la.library in SINGLE_THREADED and t > 1) and runs_library(la.library, task)]
    policy = None if args.omp_wait_policy == "default" else args.omp_wait_policy.upper()

    load_start = _load_average()
    progress = bench.Progress(len(runs), stream=err, enabled=not args.no_progress)
    outcomes: list[Outcome] = []
    try:
        for key, task, t, la in runs:
            scheme = "" if task.get("scheme", "ckks") == "ckks" else f" {task['scheme'].upper()}"
            progress.start(f"{la.library}{scheme} {key} {t}t")
            o = run_worker(la, {**task, "library": la.library, "threads": t}, key, args.timeout, omp_wait_policy=policy)
            progress.advance()
            if o.error or o.failed_checks or _case_errors(o):
                progress.note(f"oboro compare: {la.library} {key} {t}t FAILED: {o.error or o.failed_checks or _case_errors(o)}")
            outcomes.append(o)
    except KeyboardInterrupt:
        print("\noboro compare: interrupted", file=err)
        return 130
    progress.close()

    mode = "circuits" if args.circuits else "chain" if args.chain else "ops"
    rep = report.to_json(mode, bench.machine_info(settings["threads"][0]), settings, skipped, notes, outcomes)
    rep["machine"]["threads"] = settings["threads"]
    rep["machine"]["load_average"] = {"start": load_start, "end": _load_average()}
    rep["notes"] += report.thread_anomalies(rep)
    md = {"circuits": report.markdown_circuits, "chain": report.markdown_chain, "ops": report.markdown_ops}[mode](rep)
    print(md, file=out)
    if args.json is not None:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rep, f, indent=2)
            f.write("\n")
        print(f"wrote {args.json}", file=out)
    if args.markdown is not None:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(md)
        print(f"wrote {args.markdown}", file=out)
    if args.plot is not None:
        plot = {"circuits": report.plot_circuits, "chain": report.plot_chain, "ops": report.plot_ops}[mode]
        for path in plot(rep, args.plot):
            print(f"wrote {path}", file=out)
    return 1 if any(o.error or o.failed_checks or _case_errors(o) for o in outcomes) else 0


def _case_errors(o: Outcome) -> dict:
    """The circuits that raised inside a worker that otherwise ran (circuits mode)."""
    return (o.result or {}).get("errors") or {}


def _load_average() -> float | None:
    """The 1-minute load average: other work on the machine, recorded beside the figures."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def main(argv: list[str] | None = None) -> int:
    """`oboro compare [OPTIONS]` (also `python -m oboro.compare`)."""
    return execute(build_parser().parse_args(argv))
