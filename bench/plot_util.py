"""The common start and end of the bench/plot_*.py scripts: the command line (RESULTS.json and
--out), matplotlib with the file backend (or a clean exit, status 0, when it is not installed),
and writing the figure with the machine and date of the results in its title."""
import argparse
import json
import pathlib


def start(doc, script, default_out):
    """(results, out path, pyplot) from the command line, or None (message printed) without
    matplotlib."""
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


def finish(fig, res, title, out, script):
    """Titles the figure with `title`, the machine and the date of `res`, and writes it to `out`."""
    m = res["machine"]
    fig.suptitle(f"{title} - {m['cpu']}, {m['date_utc']}", fontsize=9)
    fig.tight_layout()
    pathlib.Path(out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"{script}: wrote {out}")
    return 0
