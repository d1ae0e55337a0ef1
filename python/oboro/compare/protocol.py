"""What the runner and the workers agree on (standard library only: the workers import it by path).

OPS: the per-op comparison, in table order, key -> label (what the timed call does in every library).
TOLERANCE: the largest max abs error accepted per op; a library whose result is further off is
reported as FAILED for that op and its time is not compared (a fast wrong answer is no answer).
"""

OPS = {
    "encode": "encode (full slot vector)",
    "encrypt": "encode + encrypt (public key)",
    "decrypt": "decrypt + decode",
    "add": "add (ct + ct)",
    "multiply": "multiply + relinearize + rescale",
    "rotate": "rotate by 1",
    "sum": "total sum (all slots)",
}

#: values in [-1, 1] at scale 2^40; the total sum adds `slots` errors; the chain's result is
#: x^(2^depth) with x in [0.999, 1]
TOLERANCE = {"encode": 1e-4, "encrypt": 1e-4, "decrypt": 1e-4, "add": 1e-4, "multiply": 1e-4, "rotate": 1e-4,
             "sum": 1e-2, "chain": 1e-2}
