#!/usr/bin/env python3
"""Renders the JSON of build/bench/bench_bootstrap as a Markdown page (the renderer of
`oboro compare --bootstrap`, oboro.compare.report_bootstrap; run with the Python that has oboro):

    .venv/bin/python bench/report_bootstrap.py OBORO.json [MORE.json ...] [--lattigo LATTIGO.json]
        [--openfhe OPENFHE.json ...] [--out PAGE.md] [--combined-json ALL.json]
"""
from oboro.compare.report_bootstrap import main

if __name__ == "__main__":
    main()
