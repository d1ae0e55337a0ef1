"""Threads: operations release the GIL while they compute, and what they use must not change under
them. keygen() and the noise_flooding setter publish a new session (keys, evaluator, decryptor)
instead of changing the one in use; this runs them against rotations, products and decryptions in
other threads and checks every single result."""

import threading

import numpy as np
import pytest

import oboro

CHURN = 40  # keygen + noise_flooding changes while the workers run


def bits(got, want) -> float:
    """Bits of precision: -log2 of the largest absolute error."""
    err = float(np.max(np.abs(np.asarray(got) - np.asarray(want))))
    return 60.0 if err == 0 else -np.log2(err)


def test_keygen_and_noise_flooding_against_running_operations():
    ctx = oboro.Context.from_preset("S1").keygen(rotations=[1, -1])
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, 256)
    ct = ctx.encrypt(x)
    batch = ctx.encrypt_batch(np.stack([x, -x]))
    failures, errors = [], []
    stop = threading.Event()
    rounds = []

    def check(what, got, want, min_bits):
        b = bits(got, want)
        if b < min_bits:
            failures.append(f"{what}: {b:.1f} bits")

    def rotate_and_decrypt(i):
        try:
            r = 0
            while not stop.is_set() or r < 3:
                y = ct.rotate(1)
                check(f"rotate {i}/{r}", ctx.decrypt(y), np.roll(x, -1), 14)
                p = ct * ct
                check(f"product {i}/{r}", ctx.decrypt(p), x * x, 14)
                s = (batch * batch).rotate([1, -1]) if r % 3 == 0 else batch + batch
                want = [np.roll(x * x, -1), np.roll(x * x, 1)] if r % 3 == 0 else [2 * x, -2 * x]
                for k, row in enumerate(ctx.decrypt(s)):
                    check(f"batch {i}/{r}/{k}", row, want[k], 14)
                r += 1
            rounds.append(r)
        except Exception as e:  # noqa: BLE001 -- every failure is reported below
            errors.append(repr(e))

    def churn():
        try:
            for i in range(CHURN):
                ctx.keygen(rotations=[2 + i, -2 - i])  # a new session with more Galois keys
                ctx.noise_flooding = 5  # a fresh decryptor; 2^5 per coefficient costs < 2^-25 here
                ctx.noise_flooding = 0
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))
        finally:
            stop.set()

    workers = [threading.Thread(target=rotate_and_decrypt, args=(i,)) for i in range(2)]
    churner = threading.Thread(target=churn)
    churner.start()
    for w in workers:
        w.start()
    churner.join(300)
    for w in workers:
        w.join(300)
    assert not errors, errors
    assert not failures, failures
    assert len(rounds) == 2 and min(rounds) >= 3
    assert set(ctx.rotations) >= {1, -1, 2, -2, CHURN + 1}


def test_concurrent_keygens_keep_every_key():
    """Two threads adding rotation keys at once: one keygen runs at a time, so neither loses the
    other's keys (both start from the keys published before them)."""
    ctx = oboro.Context.from_preset("S1").keygen(rotations=[])
    barrier = threading.Barrier(2)
    errors = []

    def add(steps):
        try:
            barrier.wait(30)
            ctx.keygen(rotations=steps)
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    threads = [threading.Thread(target=add, args=([s],)) for s in (3, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert {3, 5} <= set(ctx.rotations)
    x = np.arange(16) / 16
    ct = ctx.encrypt(x)
    with ctx.manual():  # both keys present: exact rotations by 3 and by 5
        assert bits(ctx.decrypt(ct.rotate(3)), np.roll(x, -3)) >= 14
        assert bits(ctx.decrypt(ct.rotate(5)), np.roll(x, -5)) >= 14


def test_encryption_from_threads_is_fresh_and_correct():
    """encrypt() holds the GIL around the generator; threads encrypting at once get correct and
    distinct ciphertexts."""
    ctx = oboro.Context.from_preset("S1").keygen(rotations=[])
    x = np.linspace(-1, 1, 64)
    out, errors = [], []

    def enc():
        try:
            for _ in range(10):
                out.append(ctx.encrypt(x))
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    threads = [threading.Thread(target=enc) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert len(out) == 30
    assert len({c.serialize() for c in out}) == 30  # fresh randomness for every one
    for c in out:
        assert bits(ctx.decrypt(c), x) >= 20


if __name__ == "__main__":
    pytest.main([__file__, "-v"])
