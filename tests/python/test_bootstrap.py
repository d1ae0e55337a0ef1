"""Bootstrapping from Python on the test-only preset BT (N = 2^12, INSECURE; the circuit of B1 in a
small ring, with sparse-secret encapsulation): ct.bootstrap() and batch.bootstrap() against NumPy
with bounds in bits, the level and scale they leave, fewer slots than the keys', operations and a
second bootstrap afterwards, bootstrap_info, a public copy, and the errors."""

import math

import numpy as np
import pytest

import oboro

# EvalMod's two-term series at the message ratio 2^8 leaves 2^-26.3 for a constant vector of ones
# (docs/bootstrapping.md); the rest is noise, larger at N = 2^12 with sparse slots.
MIN_BITS = 19


@pytest.fixture(scope="module")
def ctx():
    c = oboro.Context.from_preset("BT")
    c.keygen(rotations=[1, -1], bootstrap=[16, c.slots])
    return c


def bits(got, want):
    err = np.max(np.abs(np.asarray(got) - np.asarray(want)))
    return 60.0 if err == 0 else -math.log2(err)


def values(n, seed, complex_=False):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    return x + 1j * rng.uniform(-1, 1, n) if complex_ else x


def test_full_slots_come_back_with_the_levels_and_the_standard_scale(ctx):
    info = ctx.bootstrap_info()
    assert info["has_keys"] and info["encapsulates"]
    assert info["output_level"] == 2 and info["depth"] == ctx.max_level - 2
    assert info["order"] == "coeffs_to_slots_first" and info["min_input_level"] == 0
    assert info["message_ratio_bits"] == 8 and info["iterations"] == 1
    # EvalMod's automatic choice for the ephemeral secret of weight 32: a sine of degree 151, no
    # double angle, and the two-term series (whose cubic error cancels) at the message ratio 2^8
    assert (info["eval_mod_degree"], info["double_angles"], info["eval_mod_terms"]) == (151, 0, 2)
    for complex_ in (False, True):
        x = values(ctx.slots, 1, complex_)
        out = ctx.encrypt(x, level=0).bootstrap()
        assert out.level == info["output_level"]
        assert out.scale == ctx.scale_at_level(out.level)
        assert out.slots == ctx.slots
        assert bits(ctx.decrypt(out), x) > MIN_BITS
        assert np.iscomplexobj(ctx.decrypt(out)) == complex_


def test_sparse_keys_and_fewer_slots(ctx):
    # 16 values: the 16-slot bootstrapper (the cheapest that takes them)
    x = values(16, 2, complex_=True)
    out = ctx.encrypt(x, level=0).bootstrap()
    assert out.slots == 16 and bits(ctx.decrypt(out), x) > MIN_BITS
    # 64 values: no 64-slot keys, so the full-slot bootstrapper, which takes fewer slots
    y = values(64, 3)
    out = ctx.encrypt(y, level=0).bootstrap()
    assert out.slots == 64 and bits(ctx.decrypt(out), y) > MIN_BITS
    # interval ends and zeros
    z = np.array([1.0, -1.0, 0.0, 1.0, -1.0, 0.0, 0.5, -0.5])
    assert bits(ctx.decrypt(ctx.encrypt(z, level=0).bootstrap()), z) > MIN_BITS


def test_an_input_at_any_level_whatever_its_standard_scale(ctx):
    """Levels of 40-, 45- and 61-bit primes have standard scales from 2^40 to 2^61: each input is
    brought below the message scale on its way to level 0, alone or paired."""
    x = values(ctx.slots, 40)
    for level in range(0, ctx.max_level + 1, 3):
        assert bits(ctx.decrypt(ctx.encrypt(x, level=level).bootstrap()), x) > MIN_BITS, level
    a, b = ctx.encrypt(x, level=12).bootstrap_real_pair(ctx.encrypt(-x, level=3))
    assert bits(ctx.decrypt(a), x) > MIN_BITS and bits(ctx.decrypt(b), -x) > MIN_BITS
    # automatic mode aligns a fresh ciphertext (2^61 at the top level) with one at 2^40 exactly,
    # by rescales over two primes (AutoEvaluator::bring_to)
    y = np.cos(x)
    top, low = ctx.encrypt(x, level=ctx.max_level), ctx.encrypt(y, level=1)
    assert (top + low).level == 1 and bits(ctx.decrypt(top + low), x + y) > 25
    assert bits(ctx.decrypt(top * low), x * y) > 25 and bits(ctx.decrypt(low - top), y - x) > 25


def test_products_rotations_and_a_second_bootstrap_afterwards(ctx):
    x = values(ctx.slots, 4)
    out = ctx.encrypt(x, level=1).bootstrap()  # any input level: it is dropped to 0
    sq = out * out
    assert bits(ctx.decrypt(sq), x * x) > MIN_BITS - 1
    assert bits(ctx.decrypt(out.rotate(1)), np.roll(x, -1)) > MIN_BITS - 1
    again = sq.drop_to_level(0).bootstrap()
    assert again.level == ctx.bootstrap_info()["output_level"]
    assert bits(ctx.decrypt(again), x * x) > MIN_BITS - 2


def test_batch_is_each_element_bootstrapped(ctx):
    x = np.stack([values(16, s, complex_=True) for s in range(3)])
    batch = ctx.encrypt_batch(x, level=0)
    out = batch.bootstrap()
    assert out.level == ctx.bootstrap_info()["output_level"]
    got = ctx.decrypt(out)
    assert got.shape == x.shape and bits(got, x) > MIN_BITS


DEVICES = ["cuda-emulated"] + (["cuda"] if oboro.build_info()["cuda_devices"] > 0 else [])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("complex_", [True, False], ids=["complex", "real"])
def test_a_batch_on_a_device_bootstraps_bit_for_bit_as_on_the_cpu(ctx, device, complex_):
    """The bootstrap is written once over the evaluator: a batch resident on the device (the CUDA
    backend's kernels, emulated or on a GPU) comes back with the ciphertexts the CPU computes, bit
    for bit, complex (one bootstrap per element) and real (two elements per bootstrap)."""
    x = np.stack([values(ctx.slots, 60 + s, complex_=complex_) for s in range(2)])
    cpu = ctx.encrypt_batch(x, level=0)
    on_device = cpu.to(device).bootstrap()
    assert on_device.device.startswith(device.split("-")[0]) and on_device.level == ctx.bootstrap_info()["output_level"]
    want = cpu.bootstrap()
    got = on_device.to("cpu")
    assert [c.serialize() for c in got.to_ciphertexts()] == [c.serialize() for c in want.to_ciphertexts()]
    assert bits(ctx.decrypt(got), x) > MIN_BITS


@pytest.mark.parametrize("device", DEVICES)
def test_a_low_memory_bootstrap_on_a_device_is_the_cpus(device):
    """The low-memory mode encodes the DFT diagonals at each use: on a device they are encoded on the
    host and uploaded group by group, and the result is still the CPU's, bit for bit."""
    c = oboro.Context.from_preset("BT")
    c.keygen(rotations=[], bootstrap=16, bootstrap_memory="low")
    x = np.stack([values(16, 80 + s, complex_=True) for s in range(2)])
    cpu = c.encrypt_batch(x, level=0)
    got = cpu.to(device).bootstrap().to("cpu")
    want = cpu.bootstrap()
    assert [a.serialize() for a in got.to_ciphertexts()] == [b.serialize() for b in want.to_ciphertexts()]
    assert bits(c.decrypt(got), x) > MIN_BITS


def test_high_precision_chain_bootstraps_twice():
    """Preset B2's chain in the test ring (residual levels of 48 bits): two iterations per bootstrap,
    chosen from the output scale, for about 38 bits against 26 with one (measured; B2 itself gives
    34.5 at N = 2^16, docs/bootstrapping.md); a real batch is still paired."""
    chain = [60, 48, 48, 45, 45, 45] + [61] * 11
    hp = oboro.Context(12, moduli_bits=chain, special_bits=[61] * 4, scale_bits=48, dnum=6, security=None,
                       hamming_weight=192)
    hp.keygen(rotations=[], bootstrap=True)
    info = hp.bootstrap_info()
    assert info["iterations"] == 2 and info["output_level"] == 2 and info["precision_bits"] > 34
    assert oboro.Context.from_preset("BT").bootstrap_info(16)["iterations"] == 1  # B1's chain: 2^40
    x = values(hp.slots, 70, complex_=True)
    out = hp.encrypt(x, level=0).bootstrap()
    assert out.level == 2 and bits(hp.decrypt(out), x) > 34
    real = np.stack([values(hp.slots, 71 + s) for s in range(2)])
    got = hp.decrypt(hp.encrypt_batch(real, level=0).bootstrap())
    assert bits(got, real) > 33


def test_a_real_batch_goes_two_elements_per_bootstrap(ctx):
    """A real batch is paired (Bootstrapper::bootstrap_real): each element comes back with its own
    values, in order, for an even and an odd count; the output stays real."""
    for count in (2, 3):
        x = np.stack([values(ctx.slots, 20 + s) for s in range(count)])
        out = ctx.encrypt_batch(x, level=0).bootstrap()
        assert out.level == ctx.bootstrap_info()["output_level"]
        got = ctx.decrypt(out)
        assert got.shape == x.shape and got.dtype == np.float64
        assert bits(got, x) > MIN_BITS


def test_two_real_ciphertexts_in_one_bootstrap(ctx):
    x, y = values(ctx.slots, 30), values(ctx.slots, 31)
    a, b = ctx.encrypt(x, level=0).bootstrap_real_pair(ctx.encrypt(y, level=0))
    level = ctx.bootstrap_info()["output_level"]
    assert a.level == b.level == level
    assert bits(ctx.decrypt(a), x) > MIN_BITS and bits(ctx.decrypt(b), y) > MIN_BITS
    # the interval ends, 16 values (the 16-slot bootstrapper)
    z = np.array([1.0, -1.0] * 8)
    a, b = ctx.encrypt(z, level=0).bootstrap_real_pair(ctx.encrypt(-z, level=0))
    assert bits(ctx.decrypt(a), z) > MIN_BITS and bits(ctx.decrypt(b), -z) > MIN_BITS
    # operands at two levels (automatic mode aligns them); in manual mode one scale is needed
    a, b = ctx.encrypt(x, level=2).bootstrap_real_pair(ctx.encrypt(y, level=0))
    assert bits(ctx.decrypt(a), x) > MIN_BITS and bits(ctx.decrypt(b), y) > MIN_BITS
    manual = oboro.Context.from_preset("BT", auto=False).keygen(rotations=[], bootstrap=16)
    p, q = manual.encrypt(z, level=0, scale=2.0**40), manual.encrypt(z, level=0, scale=2.0**39)
    with pytest.raises(oboro.InvalidArgument, match="different scales"):
        p.bootstrap_real_pair(q)
    a, b = p.bootstrap_real_pair(manual.encrypt(-z, level=2, scale=2.0**40))
    assert bits(manual.decrypt(a), z) > MIN_BITS and bits(manual.decrypt(b), -z) > MIN_BITS
    # complex values, other shapes, another context's ciphertext
    with pytest.raises(oboro.InvalidArgument, match="real values"):
        ctx.encrypt(x, level=0).bootstrap_real_pair(ctx.encrypt(x + 1j, level=0))
    with pytest.raises(oboro.InvalidArgument, match="shapes"):
        ctx.encrypt(x, level=0).bootstrap_real_pair(ctx.encrypt(z, level=0))
    other = oboro.Context.from_preset("BT").keygen(rotations=[])
    with pytest.raises(oboro.ContextMismatch):
        ctx.encrypt(x, level=0).bootstrap_real_pair(other.encrypt(x, level=0))


def test_a_public_copy_bootstraps(ctx):
    pub = ctx.public()
    x = values(16, 5)
    out = pub.encrypt(x, level=0).bootstrap()
    assert bits(ctx.decrypt(out), x) > MIN_BITS


def test_bootstrap_info_without_keys():
    c = oboro.Context.from_preset("BT")
    info = c.bootstrap_info(slots=16)
    assert info["slots"] == 16 and not info["has_keys"]
    assert info["precision_bits"] > 20 and info["galois_keys"] > 0
    assert info["max_input_scale"] > 2.0**45


def test_options_low_memory_slots_to_coeffs_first_and_one_iteration():
    """keygen's bootstrap options: memory='low' (fewer keys, the same circuit and precision; at BT the
    plans are already lean, at B1 bootstrap_info shows the difference), order='slots_to_coeffs_first'
    (inputs need min_input_level levels, the output keeps them), iterations; they travel with the
    context's bytes, and a second set of other options for one slot count is refused."""
    b1 = oboro.Context.from_preset("B1")
    default, fast, low = b1.bootstrap_info(), b1.bootstrap_info(memory="fast"), b1.bootstrap_info(memory="low")
    seeded = b1.bootstrap_info(memory="seeded")
    assert (default["memory"], fast["memory"], low["memory"], seeded["memory"]) == ("balanced", "fast", "low", "seeded")
    assert b1.bootstrap_info(memory="balanced") == default
    # 'fast' stores the default's keys whole and 'seeded' seeds them all: the same keys, twice the
    # bytes of their seeded halves; the default stores the 5 most-read whole (the DFTs' chained giant steps)
    assert fast["galois_keys"] == default["galois_keys"] == seeded["galois_keys"]
    assert fast["key_bytes"] == 2 * seeded["key_bytes"] and seeded["key_bytes"] < default["key_bytes"]
    assert (seeded["whole_galois_keys"], default["whole_galois_keys"], fast["whole_galois_keys"]) == (0, 5, 27)
    assert low["galois_keys"] < default["galois_keys"] and low["key_bytes"] < default["key_bytes"] < 4e9 < fast["key_bytes"]
    assert low["diagonal_bytes"] < fast["diagonal_bytes"] == default["diagonal_bytes"] < 2**30
    assert low["depth"] == fast["depth"] == default["depth"] and low["output_level"] == fast["output_level"]
    with pytest.raises(oboro.InvalidArgument, match="'balanced' \\(the default\\), 'fast', 'seeded' or 'low'"):
        b1.bootstrap_info(memory="quick")

    c = oboro.Context.from_preset("BT")
    c.keygen(rotations=[], bootstrap=16, bootstrap_memory="low", bootstrap_order="slots_to_coeffs_first")
    info = c.bootstrap_info(16)
    assert info["has_keys"] and info["memory"] == "low" and info["order"] == "slots_to_coeffs_first"
    assert info["min_input_level"] == 3 and info["iterations"] == 1
    assert c.bootstrap_info(16, memory="low", order="slots_to_coeffs_first")["has_keys"]
    assert not c.bootstrap_info(16, memory="fast")["has_keys"]  # other options: what they would do
    x = values(16, 12, complex_=True)
    out = c.encrypt(x, level=info["min_input_level"]).bootstrap()
    assert out.level == info["output_level"] and bits(c.decrypt(out), x) > MIN_BITS
    with pytest.raises(oboro.InvalidArgument, match="min_input_level|levels 3"):
        c.encrypt(x, level=1).bootstrap()
    server = oboro.Context.deserialize(c.public().serialize())
    assert server.bootstrap_info(16)["memory"] == "low"
    assert bits(c.decrypt(server.encrypt(x, level=3).bootstrap()), x) > MIN_BITS
    # one set per slot count: the same options again are a no-op, others a ValueError
    c.keygen(rotations=[], bootstrap=16, bootstrap_memory="low", bootstrap_order="slots_to_coeffs_first")
    with pytest.raises(oboro.InvalidArgument, match="memory='low', order='slots_to_coeffs_first'"):
        c.keygen(rotations=[], bootstrap=16)
    one = oboro.Context.from_preset("BT").bootstrap_info(16, iterations=1)
    assert one["iterations"] == 1 and not one["has_keys"]
    for bad in ({"bootstrap_memory": "tiny"}, {"bootstrap_order": "backwards"}, {"bootstrap_iterations": 3}):
        with pytest.raises(oboro.InvalidArgument, match="memory|order|iterations"):
            oboro.Context.from_preset("BT").keygen(rotations=[], bootstrap=16, **bad)
    with pytest.raises(oboro.ParameterError, match="SlotsToCoeffs first takes one iteration"):
        oboro.Context.from_preset("BT").bootstrap_info(16, order="slots_to_coeffs_first", iterations=2)


def test_options_message_ratio_and_double_angles():
    """keygen(bootstrap_message_ratio_bits=, bootstrap_double_angles=) and bootstrap_info's keywords:
    the bootstrapper takes them (the model's precision follows the ratio: the sine's error falls by
    2 bits per bit of ratio), they travel with the context's bytes, and values outside the
    bootstrapper's ranges are refused before any key."""
    b = oboro.Context.from_preset("BT")
    auto, r8 = b.bootstrap_info(16, eval_mod_terms=1), b.bootstrap_info(16, message_ratio_bits=8, eval_mod_terms=1)
    assert (auto["message_ratio_bits"], r8["message_ratio_bits"]) == (12, 8)  # automatic with the sine: 12
    assert 6 < auto["precision_bits"] - r8["precision_bits"] < 10  # (2 pi 2^-r)^2 / 6 relative
    two = b.bootstrap_info(16, double_angles=2, eval_mod_terms=1)
    assert two["double_angles"] == 2 and two["eval_mod_degree"] < auto["eval_mod_degree"]

    c = oboro.Context.from_preset("BT")
    c.keygen(rotations=[], bootstrap=16, bootstrap_message_ratio_bits=10, bootstrap_double_angles=1)
    info = c.bootstrap_info(16)
    assert info["has_keys"] and (info["message_ratio_bits"], info["double_angles"]) == (10, 1)
    assert c.bootstrap_info(16, message_ratio_bits=10, double_angles=1)["has_keys"]
    assert not c.bootstrap_info(16, message_ratio_bits=10)["has_keys"]  # automatic double angles: other options
    x = values(16, 21, complex_=True)
    out = c.encrypt(x, level=0).bootstrap()
    assert out.level == info["output_level"] and bits(c.decrypt(out), x) > MIN_BITS
    server = oboro.Context.deserialize(c.public().serialize())
    assert (server.bootstrap_info(16)["message_ratio_bits"], server.bootstrap_info(16)["double_angles"]) == (10, 1)
    with pytest.raises(oboro.InvalidArgument, match="message_ratio_bits=10, double_angles=1"):
        c.keygen(rotations=[], bootstrap=16)
    with pytest.raises(oboro.ParameterError, match="message_ratio_bits = 3"):
        oboro.Context.from_preset("BT").keygen(rotations=[], bootstrap=16, bootstrap_message_ratio_bits=3)
    with pytest.raises(oboro.InvalidArgument, match="9 double angles"):
        oboro.Context.from_preset("BT").bootstrap_info(16, double_angles=9)


def test_option_eval_mod_terms():
    """keygen(bootstrap_eval_mod_terms=): EvalMod's two-term sine series (the automatic choice with
    CoeffsToSlots first, at the message ratio 2^8), one level more than the sine, the model's precision
    for the largest message far above the sine's at the same ratio; travels with the context."""
    b = oboro.Context.from_preset("BT")
    sine, series = b.bootstrap_info(16, message_ratio_bits=8, eval_mod_terms=1), b.bootstrap_info(16)
    assert (sine["eval_mod_terms"], series["eval_mod_terms"], series["message_ratio_bits"]) == (1, 2, 8)
    assert b.bootstrap_info(16, order="slots_to_coeffs_first")["eval_mod_terms"] == 1
    assert series["depth"] == sine["depth"] + 1 and series["output_level"] == sine["output_level"] - 1
    assert sine["precision_bits"] < 14 < 25 < series["precision_bits"]
    c = oboro.Context.from_preset("BT")
    c.keygen(rotations=[], bootstrap=16, bootstrap_eval_mod_terms=1)
    assert c.bootstrap_info(16)["eval_mod_terms"] == 1 and not c.bootstrap_info(16, eval_mod_terms=2)["has_keys"]
    assert oboro.Context.deserialize(c.public().serialize()).bootstrap_info(16)["eval_mod_terms"] == 1
    c = oboro.Context.from_preset("BT")
    c.keygen(rotations=[], bootstrap=16)
    ones = np.ones(16)
    out = c.encrypt(ones, level=0).bootstrap()
    assert out.level == series["output_level"] and bits(c.decrypt(out), ones) > 22
    assert oboro.Context.deserialize(c.public().serialize()).bootstrap_info(16)["eval_mod_terms"] == 2
    with pytest.raises(oboro.InvalidArgument, match="eval_mod_terms"):
        oboro.Context.from_preset("BT").keygen(rotations=[], bootstrap=16, bootstrap_eval_mod_terms=3)


def test_errors():
    c = oboro.Context.from_preset("BT")
    c.keygen(rotations=[])
    ct = c.encrypt(values(16, 6), level=0)
    with pytest.raises(oboro.MissingKey, match="keygen\\(bootstrap=True\\)"):
        ct.bootstrap()
    for bad in (3, 0, 2 * c.slots, [16, 5]):
        with pytest.raises(oboro.InvalidArgument, match="power of two"):
            c.keygen(bootstrap=bad)
    with pytest.raises(oboro.InvalidArgument, match="bootstrap must be"):
        c.keygen(bootstrap="all")
    # parameters that cannot bootstrap: the reason, before any key is made
    s1 = oboro.Context.from_preset("S1")  # 128-bit: the ephemeral secret's key would be too weak
    with pytest.raises(oboro.ParameterError, match="ephemeral secret.*security"):
        s1.keygen(bootstrap=True)
    shallow = oboro.Context(log_n=12, moduli_bits=[60, 40, 40], special_bits=[61], security=None)
    with pytest.raises(oboro.ParameterError, match="consumes 15 levels"):
        shallow.keygen(bootstrap=True)
    with pytest.raises(oboro.ParameterError, match="consumes 15 levels"):
        shallow.bootstrap_info()
    assert not shallow.has_relin_key  # nothing was made
    # a scale too large for the message ratio
    c.keygen(bootstrap=16)
    big = c.encrypt(values(16, 7), level=0, scale=2.0**55)
    with pytest.raises(oboro.InvalidArgument, match="scale"):
        big.bootstrap()


def test_the_benchmark_pages_are_the_rendering_of_their_json():
    """docs/benchmarks/bootstrap.md, bootstrap_key_policy.md and bootstrap_2026-11-30.md are what `oboro compare --bootstrap`
    renders from their committed JSON (oboro's, Lattigo's, OpenFHE's and desilofhe's rows of one run), and bootstrap_threads.md,
    bootstrap_eval_mod_terms.md and bootstrap_key_tolerance.md what bench/report_bootstrap.py renders
    from bench_bootstrap's JSON: not typed by hand."""
    import json
    import pathlib

    from oboro.compare import bootstrap, report_bootstrap

    bench = pathlib.Path(__file__).resolve().parents[2] / "docs" / "benchmarks"
    rep = json.loads((bench / "bootstrap.json").read_text())
    assert rep["generator"] == "oboro compare --bootstrap" and not rep["settings"]["quick"]
    assert bootstrap.markdown(rep) == (bench / "bootstrap.md").read_text()
    assert {r["preset"] for r in rep["rows"]} <= {"B1", "B2"} and rep["lattigo"]["log_n"] == 16
    for page in ("bootstrap_key_policy", "bootstrap_2026-11-30"):  # earlier runs the docs cite
        run = json.loads((bench / f"{page}.json").read_text())
        assert bootstrap.markdown(run) == (bench / f"{page}.md").read_text(), page
    for page in ("bootstrap_threads", "bootstrap_eval_mod_terms", "bootstrap_key_tolerance", "bootstrap_key_policy_cpp"):
        run = json.loads((bench / f"{page}.json").read_text())
        assert report_bootstrap.render(run) == (bench / f"{page}.md").read_text(), page


def test_bootstrap_keys_travel_with_the_context(ctx):
    """A server context loaded from bytes (or unpickled) bootstraps: the keys go through the checked
    format as bootstrap_keys records, one per slot count; without keys=True they stay home."""
    import pickle

    data = ctx.public().serialize()
    kinds = [part["type"] for part in oboro.serialized_info(data)["parts"]]
    assert kinds.count("bootstrap keys") == 2
    server = oboro.Context.deserialize(data)
    assert server.bootstrap_info(16)["has_keys"] and server.bootstrap_info()["has_keys"]
    x = values(16, 8)
    out = server.encrypt(x, level=0).bootstrap()
    assert bits(ctx.decrypt(out), x) > MIN_BITS
    again = pickle.loads(pickle.dumps(ctx.public()))
    assert again.bootstrap_info()["has_keys"]
    bare = oboro.Context.deserialize(ctx.serialize(keys=False))
    assert not bare.bootstrap_info(16)["has_keys"]
    # two bootstrap key sets of one slot count: refused (before the second's matrices are made)
    one = oboro.Context.from_preset("BT").keygen(rotations=[], bootstrap=16).public().serialize()
    last = one[:-8]  # without the bundle's checksum; its last record is the bootstrap keys'
    record = last[-(oboro.serialized_info(one)["parts"][-1]["size"]) :]
    twice = bytearray(last + record + bytes(8))
    twice[32:36] = (int.from_bytes(twice[32:36], "little") + 1).to_bytes(4, "little")
    with pytest.raises(oboro.SerializationError, match="two bootstrap key sets for 16 slots"):
        oboro.Context.deserialize(oboro._core._reseal(bytes(twice)))
    # a damaged bootstrap record is refused with the record named
    damaged = bytearray(data)
    damaged[-100] ^= 0x01
    with pytest.raises(oboro.SerializationError):
        oboro.Context.deserialize(bytes(damaged))


def test_automatic_bootstrapping_is_off_by_default_and_refreshes_products_when_on():
    c = oboro.Context.from_preset("BT")
    with pytest.raises(oboro.MissingKey, match="bootstrapping keys"):
        c.auto_bootstrap = True
    c.keygen(rotations=[], bootstrap=16)
    x = values(16, 9)
    ct = c.encrypt(x, level=0)
    assert not c.auto_bootstrap
    with pytest.raises(oboro.LevelMismatch):
        ct * ct
    c.auto_bootstrap = True
    sq = ct * ct
    assert sq.level == c.bootstrap_info(16)["output_level"] - 1
    assert bits(c.decrypt(sq), x * x) > MIN_BITS - 1
    assert bits(c.decrypt(ct * 0.5), x * 0.5) > MIN_BITS - 1
    # a long chain of products runs without counting levels
    y = c.encrypt(np.full(16, 0.9), level=2)
    for _ in range(8):
        y = y * y
    assert bits(c.decrypt(y), np.full(16, 0.9 ** 256)) > MIN_BITS - 4
    # manual mode is unchanged: it never bootstraps (at level 0 the product's scale cannot fit)
    with c.manual():
        with pytest.raises(oboro.ScaleMismatch):
            ct * ct
    c.auto_bootstrap = False
    with pytest.raises(oboro.LevelMismatch):
        ct * ct


def test_automatic_bootstrapping_with_slots_to_coeffs_first_keeps_its_minimum_input_level():
    """SlotsToCoeffs-first bootstraps take inputs at min_input_level and above: automatic mode
    refreshes an operand there, so a chain of products never falls below it; an input already below
    it is refused."""
    c = oboro.Context.from_preset("BT")
    c.keygen(rotations=[], bootstrap=16, bootstrap_order="slots_to_coeffs_first")
    low = c.bootstrap_info(16)["min_input_level"]
    c.auto_bootstrap = True
    y = c.encrypt(np.full(16, 0.9), level=low + 1)
    levels = []
    for _ in range(8):
        y = y * y
        levels.append(y.level)
    assert min(levels) == low
    assert bits(c.decrypt(y), np.full(16, 0.9 ** 256)) > MIN_BITS - 4
    with pytest.raises(oboro.InvalidArgument, match="min_input_level|levels 3"):
        c.encrypt(np.full(16, 0.9), level=low - 1) * 0.5


def test_bootstrap_keys_from_a_seed_are_bit_identical():
    """keygen(seed_for_testing=...) makes the bootstrapping keys from the seed too (the Galois keys at
    their levels and the encapsulation keys, whose ephemeral secret comes from the seed)."""
    seed = bytes(range(32))
    a, b = (oboro.Context.from_preset("BT").keygen(rotations=[], bootstrap=16, seed_for_testing=seed) for _ in range(2))
    info = a.bootstrap_info(16)
    assert info["has_keys"] and info["encapsulates"]
    assert a.serialize(secret_key=True, compress=False) == b.serialize(secret_key=True, compress=False)
    x = values(16, 5)
    assert bits(b.decrypt(a.encrypt(x, level=0).bootstrap()), x) > MIN_BITS


def test_seeded_keys_by_default_and_whole_keys_with_memory_fast():
    """The default keys keep their uniform halves as seeds (half the key bytes), but for those a
    bootstrap uses more than once; bootstrap_memory='fast' stores the same keys whole. From one seed
    both decrypt to the same values bit for bit, and each context's bytes say which it is."""
    seed = bytes(range(32))
    lean = oboro.Context.from_preset("BT").keygen(rotations=[], bootstrap=16, seed_for_testing=seed)
    whole = oboro.Context.from_preset("BT").keygen(rotations=[], bootstrap=16, bootstrap_memory="fast",
                                                    seed_for_testing=seed)
    li, wi = lean.bootstrap_info(16), whole.bootstrap_info(16)
    assert (li["memory"], li["seeded_keys"]) == ("balanced", True)
    assert (wi["memory"], wi["seeded_keys"]) == ("fast", False)
    assert wi["galois_keys"] == li["galois_keys"] and wi["whole_galois_keys"] == wi["galois_keys"]
    assert li["whole_galois_keys"] < li["galois_keys"] and li["key_bytes"] < wi["key_bytes"]
    if li["whole_galois_keys"] == 0:
        assert wi["key_bytes"] == 2 * li["key_bytes"]
    full = oboro.Context.from_preset("BT").bootstrap_info()  # full slots: the DFTs' chained giant steps' keys whole
    assert 0 < full["whole_galois_keys"] < full["galois_keys"]
    x = values(16, 6, complex_=True)
    ct = lean.encrypt(x, level=0)
    a = lean.decrypt(ct.bootstrap())
    b = whole.decrypt(oboro.Ciphertext.deserialize(whole, ct.serialize()).bootstrap())
    assert np.array_equal(a, b) and bits(a, x) > MIN_BITS
    server = oboro.Context.deserialize(lean.public().serialize())
    served = server.bootstrap_info(16)
    assert served["seeded_keys"] and served["whole_galois_keys"] == li["whole_galois_keys"]
