"""What every plot script in bench/ shares: the command line (a results JSON and --out), matplotlib
loaded headless or a clean exit when it is missing, and the save with its message."""
import argparse
import json
import pathlib


def start(doc: str, script: str, default_out: str):
    """Parses `RESULTS.json [--out PATH]`; returns (results dict, out path, pyplot) or None (after a
    message) when matplotlib is not installed, so plotting never fails a benchmark run."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--out", default=default_out)
    args = ap.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"{script}: matplotlib is not installed; no plot written")
        return None
    return json.loads(pathlib.Path(args.results).read_text()), args.out, plt


def save(fig, out: str, script: str, title: str, machine: dict):
    """Titles the figure with the machine and date of the results and writes it as PNG."""
    fig.suptitle(f"{title} - {machine['cpu']}, {machine['date_utc']}", fontsize=9)
    fig.tight_layout()
    pathlib.Path(out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"{script}: wrote {out}")
