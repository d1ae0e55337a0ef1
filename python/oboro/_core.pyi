"""oboro native core (C++20 CKKS library)"""

from collections.abc import Callable, Sequence
import os
from typing import Any, overload

import numpy
import numpy.typing

import builtins

__version__: str

class Error(Exception):
    """Base class of every error raised by oboro."""

class ParameterError(Error, builtins.ValueError):
    """Invalid, malformed or insecure parameters."""

class InvalidArgument(Error, builtins.ValueError):
    """An argument that is out of range or of the wrong size."""

class LevelMismatch(Error, builtins.ValueError):
    """Operands at different levels, or an operation impossible at the operand's level."""

class ScaleMismatch(Error, builtins.ValueError):
    """Operands whose scales differ, or a scale that cannot be reached."""

class ContextMismatch(Error, builtins.ValueError):
    """Objects that belong to different parameter sets or keys."""

class MissingKey(Error):
    """A key the operation needs is not there."""

class SerializationError(Error):
    """Bad, truncated or hostile serialized data."""

class ModulusOverflow(Error, builtins.OverflowError):
    """A decrypted result that has most likely wrapped around the modulus."""


def build_info() -> dict[str, Any]:
    """
    Build information: version, compiler, build type, word size, the CPU kernels in use (cpu_ntt, cpu_kernels: avx512+ifma, avx512, avx2 or scalar), CUDA (compiled, runtime, architectures, visible devices).
    """

def chebyshev_interpolant(f: Callable[[float], float], interval: tuple[float, float], degree: int) -> list[float]:
    """
    The Chebyshev coefficients (lowest first) of the interpolant of f at the degree + 1 Chebyshev nodes of interval=(lo, hi): near-minimax for smooth f. f is called once per node with a float. Coefficients below 2^-50 of the largest are zero, so an odd or even f on a symmetric interval gives an odd or even series.
    """

def chebyshev_max_error(coeffs: Sequence[float], f: Callable[[float], float], interval: tuple[float, float], samples: int = 4097) -> float:
    """
    max |p(x) - f(x)| over `samples` equally spaced points of interval=(lo, hi), ends included, for the Chebyshev series p with these coefficients on that interval (double precision).
    """

def polynomial_plan(coeffs: Sequence[float], basis: str = 'power', interval: tuple[float, float] = (-1.0, 1.0), level: int) -> dict:
    """
    What polyval does from `level` (no work): depth, ciphertext products, their relinearizations (key switches: products summed before a rescale share one), scalar products, the baby-step size and the powers it computes.
    """

@overload
def sign(x: Ciphertext, bound: float, gap: float, bits: float) -> Ciphertext: ...

@overload
def sign(x: Batch, bound: float, gap: float, bits: float) -> Batch: ...

@overload
def absolute(x: Ciphertext, bound: float, gap: float, bits: float) -> Ciphertext: ...

@overload
def absolute(x: Batch, bound: float, gap: float, bits: float) -> Batch: ...

@overload
def maximum(a: Ciphertext, b: Ciphertext, bound: float, gap: float, bits: float) -> Ciphertext: ...

@overload
def maximum(a: Batch, b: Batch, bound: float, gap: float, bits: float) -> Batch: ...

@overload
def minimum(a: Ciphertext, b: Ciphertext, bound: float, gap: float, bits: float) -> Ciphertext: ...

@overload
def minimum(a: Batch, b: Batch, bound: float, gap: float, bits: float) -> Batch: ...

@overload
def greater(a: Ciphertext, b: Ciphertext, bound: float, gap: float, bits: float) -> Ciphertext: ...

@overload
def greater(a: Batch, b: Batch, bound: float, gap: float, bits: float) -> Batch: ...

def sign_plan(bound: float, gap: float, bits: float) -> dict:
    """
    The plan of the sign and the comparisons (no encrypted work): the degrees of the composite minimax polynomials, the depth, the ciphertext products and the error max |p(x) - sign(x)| for gap <= |x| <= bound (double precision). Plans are made once per (bound, gap, bits) and kept.
    """

def newton_plan(which: str, interval: tuple[float, float], bits: float = 24.0) -> dict:
    """
    The plan of x.inverse(...), x.inverse_sqrt(...) or x.sqrt(...) (no work): the initial degree, the Newton iterations, the depth, the relative error before and after them, and times_x (sqrt as x / sqrt(x)).
    """

def presets() -> list[str]:
    """
    The names of the parameter presets: ['S1', 'S2', 'S3', 'S4', 'B1', 'B2', 'BT'] (B1: bootstrappable, N = 2^16; B2: bootstrappable at high precision, N = 2^16; BT: B1's circuit in an insecure test-only ring).
    """

def preset_info(name: str) -> dict[str, Any]:
    """
    The parameters of a preset without building its context: name, log_n, n, slots, levels, moduli_bits, special_bits, dnum, log_qp, scale_bits, security, and max_log_qp (the HE-standard limit of log2(QP) for 128/192/256-bit security at this N; None where the standard has no entry). Unknown names raise ParameterError.
    """

def set_num_threads(n: int) -> None:
    """
    Sets the number of worker threads of the C++ core (default: the hardware concurrency, or the environment variable OBORO_NUM_THREADS).
    """

def num_threads() -> int:
    """The number of worker threads of the C++ core."""

def memory_info() -> dict[str, Any]:
    """
    The large buffers of the C++ core (ciphertexts, keys, scratch: blocks of 64 KiB and more): in_use_bytes, peak_in_use_bytes (the most in use at once so far), cached_bytes (freed blocks kept for reuse: in use plus cached never exceeds the peak), cache_hits and fresh_blocks (allocations served from the cache and from the system), cache_limit_bytes (a hard cap on the cache, None: none; environment variable OBORO_POOL_MB) and idle_seconds (a cached block unused this long goes back to the system); device_key_bytes: per device used so far ('cuda:0', 'cuda-emulated'), the bytes of switching keys kept in its memory (a key's copy goes once every copy of the key is gone, before the device takes another key).
    """

def release_memory() -> None:
    """
    Gives every cached buffer back to the system now, with the key-switching scratch kept between operations (cached buffers also go back by themselves after memory_info()['idle_seconds'] unused, at the next operation).
    """

class Context:
    """
    A CKKS context: the parameters, the keys, and the mode of evaluation.

    Create one from a preset or from explicit parameters, generate keys, then encrypt, compute with
    the ciphertexts' operators, and decrypt::

        ctx = oboro.Context.from_preset("S2")         # or "S1", "S3", "S4"
        ctx.keygen(rotations=[1, -1, 4])              # keys live in the context
        ct = ctx.encrypt(np.array([0.5, -1.25]))      # -> oboro.Ciphertext
        y = (ct * ct + 2.0 * ct).rotate(4)            # automatic relinearize / rescale / alignment
        x = ctx.decrypt(y)                            # -> numpy.ndarray of the original shape

    Explicit parameters: Context(log_n, moduli_bits, special_bits, scale_bits=40, dnum=None,
    security=128, hamming_weight=None, auto=True). moduli_bits are the bit sizes of the ciphertext
    primes q_0 (first, usually 60) .. q_L (one level per prime after the first); special_bits those of
    the special primes P of hybrid key switching; dnum the most key-switching digits (None: the
    fewest that the special primes allow; the primes are split into digits balanced by bits, or as
    digit_primes says); security 128, 192 or 256 checks log2(QP) against the
    HomomorphicEncryption.org standard (ParameterError if it is exceeded), None disables the check
    (INSECURE); hamming_weight selects a sparse ternary secret with that many non-zero coefficients.

    Modes. In automatic mode (auto=True, the default) the ciphertext operators relinearize and
    rescale after multiplications and align levels and scales before additions. Every level l has a
    standard scale D_l (scale_at_level) with D_{l-1} = D_l^2 / q_l, anchored at level 0 on
    2^scale_bits; fresh ciphertexts are at the standard scale of their level and every automatic
    operation lands on the standard scale of its output level, so operands at the same level always
    match. An operand at a higher level is brought down to the other's level and exact scale in one
    step (multiply by an integer and rescale: no level beyond the drop). Multiplying by an integer (or a
    float with an integer value, such as 2.0) is exact and costs no level. In manual mode each
    operator is one core operation: multiplications leave a size-3, unrescaled ciphertext, and
    mismatched levels or scales raise LevelMismatch / ScaleMismatch; use relinearize(), rescale(),
    drop_to_level(). Manual mode is scoped: `with ctx.manual(): ...` (this thread or task only), or
    auto=False when making the context (then `with ctx.automatic():` for automatic blocks).

    A context made by public() holds no secret key: it encrypts with the public key and evaluates,
    but decrypt() raises MissingKey.
    """

    def __init__(self, log_n: int, moduli_bits: Sequence[int] | None = None, special_bits: Sequence[int] | None = None, scale_bits: float = 40, dnum: int | None = None, security: int | None = 128, hamming_weight: int | None = None, auto: bool = True, moduli: Sequence[int] | None = None, special_moduli: Sequence[int] | None = None, digit_primes: Sequence[int] | None = None) -> None:
        """
        A context for explicit parameters: ring degree N = 2^log_n, ciphertext primes of moduli_bits bits (q_0 first), special primes of special_bits bits, default scale 2^scale_bits, dnum key-switching digits (None: automatic), security 128/192/256 (None: no check, INSECURE), optional sparse secret (hamming_weight), automatic or manual mode. Instead of the sizes, the primes themselves can be given as moduli and special_moduli (each = 1 mod 2N, distinct; e.g. another library's, or ctx.moduli of a context to rebuild exactly): no prime search then. digit_primes gives the key-switching digits explicitly, as the number of ciphertext primes of each from q_0 up (None: the split balanced by bits into at most dnum digits, docs/parameters.md; ctx.digit_primes reports it). Raises ParameterError for invalid or insecure parameters.
        """

    @staticmethod
    def from_preset(name: str, auto: bool = True) -> Context:
        """
        The context of a parameter preset: 'S1' (N=2^13, 1 level), 'S2' (N=2^14, 3 levels), 'S3' (N=2^15, 9 levels), 'S4' (N=2^16, 20 levels), 'B1' (N=2^16, bootstrappable: 10 levels left after a bootstrap), 'B2' (N=2^16, bootstrappable at high precision: 9 levels of 48 bits left, two iterations per bootstrap), 'BT' (N=2^12, bootstrappable, INSECURE: tests only); see oboro.preset_info(). Unknown names raise ParameterError.
        """

    @property
    def slots(self) -> int:
        """Maximum number of values per ciphertext: N/2."""

    @property
    def max_level(self) -> int:
        """
        Level of fresh ciphertexts: the number of rescales (multiplications) available.
        """

    @property
    def log_n(self) -> int:
        """log2 of the ring degree N."""

    @property
    def n(self) -> int:
        """The ring degree N."""

    @property
    def scale(self) -> float:
        """
        Scale of fresh ciphertexts at the top level: the standard scale of that level (see scale_at_level), within a fraction of a bit of 2^scale_bits.
        """

    def scale_at_level(self, level: int) -> float:
        """
        The standard scale D_level of a level: fresh ciphertexts at that level are encrypted at it, and every automatic operation lands on it. D_0 = 2^scale_bits and D_{l-1} = D_l^2 / q_l.
        """

    @property
    def log_qp(self) -> int:
        """
        Bits of the full modulus Q*P (sum of the prime sizes), the quantity bounded by security.
        """

    @property
    def security(self) -> int | None:
        """
        The security level the parameters were checked against: 128, 192, 256, or None (no check).
        """

    @property
    def dnum(self) -> int:
        """Number of key-switching digits (hybrid key switching)."""

    @property
    def digit_primes(self) -> list[int]:
        """
        The ciphertext primes of each key-switching digit, from q_0 up: runs of consecutive primes, split into at most dnum digits of the fewest widest bits and, among those, the most even by bits (docs/parameters.md), unless the context was made with digit_primes.
        """

    @property
    def moduli(self) -> list[int]:
        """The ciphertext primes q_0 .. q_L."""

    @property
    def special_moduli(self) -> list[int]:
        """The special primes of key switching."""

    @property
    def preset(self) -> str | None:
        """The preset name, or None for explicit parameters."""

    @property
    def noise_flooding(self) -> float:
        """
        Noise flooding on decrypt, in bits (0 = off, the default; at most 50): a fresh Gaussian of standard deviation 2^bits is added to every scaled coefficient before decoding. Turn it on when decrypted values leave the secret-key holder (IND-CPA-D, see docs/security.md): e.g. 30 at scale 2^40 costs precision (absolute error about 2^(bits + log2(N)/2 + 2 - log2(scale))).
        """

    @noise_flooding.setter
    def noise_flooding(self, arg: float, /) -> None: ...

    @property
    def has_secret_key(self) -> bool:
        """True if this context holds the secret key (it can decrypt)."""

    @property
    def has_public_key(self) -> bool:
        """
        True once keys were generated (the public key is needed to encrypt without the secret key).
        """

    @property
    def has_relin_key(self) -> bool:
        """
        True if the context has a relinearization key (needed by ct * ct in automatic mode).
        """

    @property
    def has_conjugation_key(self) -> bool:
        """True if the context has the Galois key of complex conjugation."""

    @property
    def rotations(self) -> list[int]:
        """
        The rotation steps that have Galois keys (sorted). In automatic mode other steps are composed from these where possible (e.g. 3 = 4 - 1).
        """

    def keygen(self, rotations: Sequence[int] | None = None, conjugation: bool = False, relin: bool = True, bootstrap: bool | int | Sequence[int] = False, *, bootstrap_memory: str | None = None, bootstrap_order: str | None = None, bootstrap_iterations: int | None = None, bootstrap_message_ratio_bits: int | None = None, bootstrap_double_angles: int | None = None, bootstrap_eval_mod_terms: int | None = None, seed_for_testing: bytes | None = None) -> Context:
        """
        Generates keys and stores them in the context; returns the context.

        The first call draws the secret key and the public key. Each call then adds the relinearization key (relin=True; needed by ct * ct), the Galois keys of the rotation steps and, if conjugation=True, of complex conjugation; keys that exist are kept. rotations=None means the signed powers of two +-1, +-2, +-4, ..., +-slots/2: every rotation is then available in automatic mode as a sum of at most about log2(slots)/2 of them (signed binary decomposition), at the memory cost of 2*log2(slots) - 1 keys (about 20 MB at S1, 0.14 GB at S2, 0.6 GB at S3, 2.5 GB at S4, 6.4 GB at B1: with large parameters pass the steps you need). Pass an explicit list (possibly empty) to generate only those steps. A context made by public() cannot generate keys (MissingKey).

        bootstrap=True also makes the keys of bootstrapping ciphertexts of every slot count (ct.bootstrap()); an int or a list of ints makes them for those slot counts (a power of two: a bootstrapper of n slots also takes ciphertexts of fewer, at its cost). It needs bootstrappable parameters (the preset 'B1', 'B2' for high precision, or 'BT' for tests) and takes time and memory: about 30 keys, 2.8 GiB at N = 2^16 with bootstrap_memory='balanced' (see docs/bootstrapping.md and bootstrap_info()).

        bootstrap_memory: 'balanced' (default: 27 Galois keys at B1; the 22 that a bootstrap reads less than twice over keep their uniform halves as their seeds, drawn again at each use, the 5 of the DFTs' chained giant steps are stored whole: 2.6 GiB), 'seeded' (all 27 seeded, 2.2 GiB, a little slower), 'fast' (all 27 stored whole, 4.5 GiB, a little faster) or 'low' (fewer keys, 15 Galois keys of 1.3 GiB at B1, seeded, and the DFT matrices encoded at each use, for a slower bootstrap; docs/bootstrapping.md#memory). bootstrap_order: 'coeffs_to_slots_first' (default) or 'slots_to_coeffs_first' (SlotsToCoeffs on the input's own lowest levels: the output keeps them, and inputs need bootstrap_info()['min_input_level'] levels). bootstrap_iterations: None (automatic: 2 where the output scale is at least 2^45, as in 'B2'), 1, or 2 (high precision, twice the time). bootstrap_message_ratio_bits: None (automatic: 8 with EvalMod's two terms, 12 with one, 15 with SlotsToCoeffs first) or r in 4..40, the message brought to q_0 / 2^r before ModRaise (docs/bootstrapping.md#precision). bootstrap_double_angles: None (automatic) or EvalMod's double angles, 0..8. bootstrap_eval_mod_terms: None (automatic: 2 with CoeffsToSlots first and one iteration at a scale below 2^45, else 1), 1 (the sine) or 2 (a two-term sine series whose cubic error cancels, for one level more: with the smaller message ratio, more precision for every input; docs/bootstrapping.md#precision). A context holds one bootstrapper per slot count: asking for other options where keys exist raises ValueError.

        seed_for_testing: FOR TESTS AND REPRODUCIBLE RESEARCH ONLY. 32 bytes from which the secret key and every key of this and later keygen() calls of the context are made: two contexts of the same parameters keyed from the same seed by the same calls hold bit-identical keys. Whoever knows the seed knows the secret key: such keys are insecure unless the seed is itself secret and uniformly random (by default, keys come from the operating system's randomness). Only the first keygen() of a context takes it (ValueError after). Encryption still draws fresh randomness.
        """

    def public(self) -> Context:
        """
        A copy of the context without the secret key: it shares the public, relinearization and Galois keys, encrypts with the public key and evaluates, but decrypt() raises MissingKey. Ciphertexts of both contexts can be mixed (same parameters), and the original context decrypts results computed by the copy.
        """

    def encrypt(self, values: numpy.typing.ArrayLike, level: int | None = None, scale: float | None = None, slots: int | None = None) -> Ciphertext:
        """
        Encrypts an array of real or complex numbers (any shape; flattened in C order).

        values: anything numpy.asarray accepts, of at most `slots` elements (else oboro.InvalidArgument naming the sizes). The ciphertext remembers the shape and whether the data were real (decrypt then returns float64) or complex (complex128).
        level: the level to encrypt at (default: the top level, max_level).
        scale: the encoding scale (default: the standard scale of that level, scale_at_level(level)).
        slots: the slot count, a power of two >= the size (default: the smallest one); rotations act on it.

        A context with the secret key encrypts with the secret key: its only noise is the fresh Gaussian error, so it is more precise (>= 25 bits at every preset) than public-key encryption, whose noise u*e + e0 + e1*s gives about 23.4 bits at N = 2^16. A context made by public() uses the public key.
        """

    @overload
    def decrypt(self, ciphertext: Ciphertext) -> numpy.typing.NDArray[Any]:
        """
        Decrypts and decodes: a numpy.ndarray of the ciphertext's shape, float64 if the encrypted data were real (the imaginary parts, pure noise, are dropped) else complex128. Raises MissingKey on a context without the secret key (made by public()), ContextMismatch for a ciphertext of other parameters.
        """

    @overload
    def decrypt(self, batch: Batch) -> numpy.typing.NDArray[Any]:
        """
        Decrypts a Batch: an array of shape (len(batch),) + the element shape, row i from element i.
        """

    @overload
    def decrypt(self, matrix: EncryptedMatrix) -> numpy.typing.NDArray[numpy.float64]:
        """Decrypts an EncryptedMatrix to a float64 array of its shape."""

    def describe(self) -> str:
        """A human-readable summary: parameters, security, scales, keys and mode."""

    def __repr__(self) -> str: ...

    class ModeScope:
        """
        A block of code in which the values of one context are evaluated in manual or automatic mode: made by Context.manual() and Context.automatic(), used with `with`.
        """

        def __enter__(self) -> object: ...

        def __exit__(self, exc_type: object | None, exc: object | None, traceback: object | None) -> None: ...

    def manual(self) -> Context.ModeScope:
        """
        A `with` block in manual mode: every operator on this context's ciphertexts and batches is exactly one core operation (a product keeps 3 polynomials and its scale; nothing is relinearized, rescaled or aligned; mismatches raise LevelMismatch / ScaleMismatch). The mode applies to the block, in the current thread (or asyncio task) only; other threads keep theirs::

            with ctx.manual():
                t = (a * b).relinearize().rescale()
        """

    def automatic(self) -> Context.ModeScope:
        """
        A `with` block in automatic mode (for a context made with auto=False): the counterpart of manual().
        """

    @property
    def auto(self) -> bool:
        """
        Whether this context's values are evaluated in automatic mode here and now: the mode the context was made with (auto=...), unless a `with ctx.manual():` or `with ctx.automatic():` block says otherwise. Setting it (deprecated) changes the default for every thread; use the `with` blocks.
        """

    @auto.setter
    def auto(self, arg: bool, /) -> None: ...

    def encode(self, values: numpy.typing.ArrayLike, level: int | None = None, scale: float | None = None, slots: int | None = None) -> Plaintext:
        """
        Encodes an array without encrypting it (same arguments and defaults as encrypt: the top level and the standard scale of the level). Needs no keys.
        """

    def decode(self, plaintext: Plaintext) -> numpy.typing.NDArray[Any]:
        """The values of a plaintext, as a numpy.ndarray of its shape."""

    def serialize(self, *, secret_key: bool = False, keys: bool = True, compress: bool = True) -> bytes:
        """
        The context as bytes: its parameters and (keys=True) its public, relinearization and Galois keys, so that a server can compute on the client's ciphertexts. The secret key is included only with secret_key=True (MissingKey if the context has none): keep such data private. compress=True stores the uniformly random half of keys and of fresh secret-key ciphertexts as a 32-byte seed (half the size); residues are always bit-packed to the size of their prime. Load with Context.deserialize.
        """

    @staticmethod
    def deserialize(data: bytes, auto: bool = True) -> Context:
        """
        A context from Context.serialize() output (or a C++ io::serialize(Context) record): the parameters are re-created and checked (the primes must match), the keys loaded. Without the secret key in the data the context encrypts with the public key and cannot decrypt, like public(). Raises SerializationError for truncated, corrupted, foreign or unsupported data.
        """

    def save(self, path: str | os.PathLike[str], *, secret_key: bool = False, keys: bool = True, compress: bool = True) -> None:
        """
        Writes serialize(...) to a file (atomically: a temporary file, then a rename).
        """

    @staticmethod
    def load(path: str | os.PathLike[str], auto: bool = True) -> Context:
        """Context.deserialize of a file written by save()."""

    def sum_rotations(self, slots: int | None = None, block: int | None = None, stride: int | None = None, count: int | None = None, strategy: str = 'auto', h: int | None = None) -> list[int]:
        """
        The rotation steps whose keys Ciphertext.sum(...) needs with these arguments, for keygen(rotations=...). slots: the ciphertexts' slot count (default: all slots of the context). 'auto' lists the keys of the cost model's h at the top level.
        """

    @property
    def auto_bootstrap(self) -> bool:
        """
        Automatic bootstrapping (False by default): in automatic mode, an operand at level 0 of a product (ct * ct, ct * array, ct * non-integer constant) is bootstrapped first, so long computations run without counting levels. Each bootstrap takes seconds at N = 2^16 (docs/benchmarks/bootstrap.md) and gives about 20 bits of precision; polynomial and matrix methods still check their levels before any work. Needs keygen(bootstrap=...) (MissingKey otherwise). A public() copy keeps the setting; a deserialized context starts with it off.
        """

    @auto_bootstrap.setter
    def auto_bootstrap(self, arg: bool, /) -> None: ...

    def bootstrap_info(self, slots: int | None = None, *, memory: str | None = None, order: str | None = None, iterations: int | None = None, message_ratio_bits: int | None = None, double_angles: int | None = None, eval_mod_terms: int | None = None) -> dict[str, Any]:
        """
        What bootstrapping ciphertexts of `slots` slots (default all) does with these parameters: that of the keys keygen(bootstrap=...) made, or with options given (as keygen's bootstrap_memory, bootstrap_order, bootstrap_iterations, bootstrap_message_ratio_bits, bootstrap_double_angles and bootstrap_eval_mod_terms; the defaults otherwise) that of those options. Keys: slots, depth (levels consumed), output_level (levels left), max_input_scale, precision_bits (the model's bound before noise), eval_mod_degree, double_angles and eval_mod_terms (EvalMod's sine or cosine, its double angles and the terms of its sine series), iterations (2 for high precision, chosen where the output level's scale is at least 2^45, as in preset 'B2': each bootstrap then runs twice, the second on the first's error), message_ratio_bits (log2 of q_0 over the message scale), order ('coeffs_to_slots_first' or 'slots_to_coeffs_first') and min_input_level (the lowest level an input may have), memory ('balanced', 'fast', 'seeded' or 'low'), seeded_keys (whether the keys keep their uniform halves as their seeds, drawn again at each use: 'balanced', 'seeded' and 'low'), whole_galois_keys (the Galois keys stored whole all the same: 'balanced' stores whole those a bootstrap reads at least twice over), rotation_steps, galois_keys (the number of Galois keys), key_bytes (the memory of the bootstrapping keys, the relinearization key aside), relin_key_bytes (that of the relinearization key, which bootstrapping's products need), diagonal_bytes (the memory of the DFTs' diagonals, encoded by keygen(bootstrap=True) and kept), encapsulates (a sparse ephemeral secret is used for ModRaise), has_keys (keygen(bootstrap=...) made them). ParameterError when the parameters cannot bootstrap, with the reason; ValueError for an unknown option.
        """

    def encrypt_batch(self, values: numpy.typing.ArrayLike, level: int | None = None, scale: float | None = None, slots: int | None = None, device: str = 'cpu') -> Batch:
        """
        Encrypts each row of a 2-D (or higher) array as one ciphertext of a Batch: values[i] is element i. level, scale and slots as in encrypt(). device: 'cpu', or 'cuda' / 'cuda:N' to keep the batch on that GPU, where every operation on it then runs (oboro.Error 'no CUDA GPU found' when there is none), or 'cuda-emulated', a testing device that runs the CUDA kernels in a CPU emulator (slow).
        """

    def __reduce__(self) -> tuple:
        """
        pickle: the public part (parameters and the public, relinearization and Galois keys), never the secret key; pickle ctx.serialize(secret_key=True) to send that.
        """

    def __copy__(self) -> object:
        """The context itself (it is shared state)."""

    def __deepcopy__(self, memo: object) -> object:
        """
        The context itself (it is shared state; copy.deepcopy of a ciphertext keeps its context too).
        """

class Ciphertext:
    """
    An encrypted array (CKKS ciphertext).

    Made by Context.encrypt(); holds the shape and dtype (real or complex) of the encrypted array, and
    its level, exact scale and slot count. The values occupy the first `size` slots (C order); the
    slot count is the smallest power of two >= size unless encrypt(slots=...) says otherwise, and
    rotate() acts on the whole slot vector (np.roll semantics when size == slots).

    Operators (automatic mode relinearizes, rescales and aligns as needed; manual mode raises on any
    mismatch):
        ct + x, x + ct, ct - x, x - ct, -ct   x: Ciphertext (same shape), Plaintext, int, float,
                                              complex, or an array that broadcasts to ct.shape
        ct * x, x * ct                        ct * ct relinearizes and rescales (one level);
                                              ct * float/complex/array rescales (one level);
                                              ct * int is exact and consumes no level (so
                                              does a float with an integer value: 2.0)
        ct / c                                c: a non-zero scalar or array (multiplication by 1/c)
        ct += x, ct -= x, ct *= x             in place (the core's *_inplace operations)
    Scalars are added to the `size` values only (padding slots stay as they are).
    """

    __array_ufunc__: None = None

    def __add__(self, other: Ciphertext | Plaintext | complex | numpy.typing.ArrayLike, /) -> Ciphertext:
        """self + other"""

    def __radd__(self, other: Ciphertext | Plaintext | complex | numpy.typing.ArrayLike, /) -> Ciphertext:
        """other + self"""

    def __sub__(self, other: Ciphertext | Plaintext | complex | numpy.typing.ArrayLike, /) -> Ciphertext:
        """self - other"""

    def __rsub__(self, other: Ciphertext | Plaintext | complex | numpy.typing.ArrayLike, /) -> Ciphertext:
        """other - self"""

    def __mul__(self, other: Ciphertext | Plaintext | complex | numpy.typing.ArrayLike, /) -> Ciphertext:
        """self * other"""

    def __rmul__(self, other: Ciphertext | Plaintext | complex | numpy.typing.ArrayLike, /) -> Ciphertext:
        """other * self"""

    def __truediv__(self, other: Ciphertext | Plaintext | complex | numpy.typing.ArrayLike, /) -> Ciphertext:
        """self / other (other: a non-zero scalar or array, not a ciphertext)"""

    def __iadd__(self, other: Ciphertext | Plaintext | complex | numpy.typing.ArrayLike, /) -> Ciphertext:
        """self += other (in place)"""

    def __isub__(self, other: Ciphertext | Plaintext | complex | numpy.typing.ArrayLike, /) -> Ciphertext:
        """self -= other (in place)"""

    def __imul__(self, other: Ciphertext | Plaintext | complex | numpy.typing.ArrayLike, /) -> Ciphertext:
        """self *= other (in place)"""

    def __itruediv__(self, other: Ciphertext | Plaintext | complex | numpy.typing.ArrayLike, /) -> Ciphertext:
        """self /= other (in place)"""

    def __neg__(self) -> Ciphertext:
        """-self"""

    def __pos__(self) -> Ciphertext:
        """+self (a copy)"""

    def copy(self) -> Ciphertext:
        """A copy."""

    def __copy__(self) -> Ciphertext: ...

    def __deepcopy__(self, memo: object) -> Ciphertext: ...

    @property
    def auto(self) -> bool:
        """
        Whether operations on this value run in automatic mode here and now (its context's mode, or that of an enclosing `with ctx.manual():` / `with ctx.automatic():` block).
        """

    def conj(self) -> Ciphertext:
        """
        Complex conjugate of every value (needs keygen(conjugation=True), else MissingKey). Automatic mode relinearizes first.
        """

    def rescale(self) -> Ciphertext:
        """
        Divides by the last prime q_level and drops it: level - 1, scale / q_level. Needed after multiplications in manual mode (automatic mode does it itself).
        """

    def relinearize(self) -> Ciphertext:
        """
        Brings a size-3 product (manual mode) back to 2 polynomials with the relinearization key; a no-op on a size-2 ciphertext.
        """

    def drop_to_level(self, level: int) -> Ciphertext:
        """
        The same values at a lower level. Manual mode keeps the scale (limbs are dropped). Automatic mode moves a value that is at its level's standard scale to the standard scale of the new level (an integer multiplication and a rescale on the way down, no extra level), as automatic alignment does.
        """

    def rotate_many(self, steps: Sequence[int]) -> list[Ciphertext]:
        """
        [self.rotate(k) for k in steps], with one decomposition (ModUp) of each ciphertext shared by all the rotations (hoisting): cheaper than separate rotations from the second step on. Automatic mode reduces the steps modulo the slots and composes steps without a key like rotate(); manual mode needs the key of every step and raises MissingKey naming all the missing ones.
        """

    def sum(self, block: int | None = None, stride: int | None = None, count: int | None = None, strategy: str = 'auto', h: int | None = None) -> Ciphertext:
        """
        Rotate-and-sum (a trace-type function), one key switch per round or hoisted.

        * sum(): every slot holds the sum of all `slots` values (padding slots are zero).
        * sum(block=k): the FIRST slot of each block of k consecutive slots holds the block's sum; the
          other slots hold sums of windows that straddle two blocks (use decrypt(...)[::k] on a 1-D
          ciphertext). k is a power of two dividing the slots.
        * sum(stride=s, count=c): slot t holds x[t] + x[t+s] + ... + x[t+(c-1)s] (cyclic); count defaults
          to slots/|s|, c a power of two with |s|*c <= slots.

        strategy: 'doubling' (log2 of the terms key switches), 'hoisted' (Ishimaki-Yamana unrolled
        algorithm with h iterations, each one ModUp and one ModDown for 2^r - 1 rotations; h defaults to
        the cost model's choice), or 'auto' (the cheapest h whose keys the context has). The keys each
        needs: Context.sum_rotations(...). Automatic mode relinearizes first. Consumes no level.
        """

    def rotate(self, steps: int) -> Ciphertext:
        """
        Rotates the slot vector left by `steps` (negative: right), cyclically over `slots` values: np.roll(x, -steps) when size == slots. Automatic mode reduces the step modulo the slots and, when the context has no key for it, composes it from keyed steps (signed powers of two); manual mode needs the key of exactly this step. Raises MissingKey when no key fits.
        """

    def polyval(self, coeffs: numpy.typing.ArrayLike, basis: str = 'power', interval: tuple[float, float] = (-1.0, 1.0), level: int | None = None, scale: float | None = None) -> Ciphertext:
        """
        p(self) slot by slot for the polynomial with these real coefficients, lowest degree first: sum c_i x^i (basis='power') or sum c_i T_i(u) (basis='chebyshev', T_i the Chebyshev polynomials and u = (2x - lo - hi) / (hi - lo) the map of interval=(lo, hi) onto [-1, 1]). Baby-step giant-step Paterson-Stockmeyer: ceil(log2(degree + 1)) levels (one more for the map when hi - lo != 2), O(sqrt(degree)) ciphertext products, odd and even polynomials at their lower cost. The result lands exactly on `scale` (default: the standard scale) at `level` (default: the lowest level the depth leaves). Every slot, unused ones included, must lie in the interval: outside it a Chebyshev series grows like T_degree. LevelMismatch (saying how many levels are needed) before any work when there are too few; MissingKey without a relinearization key. Works in both modes.
        """

    def inverse(self, interval: tuple[float, float], bits: float = 24.0) -> Ciphertext:
        """
        1/x for every slot in interval=(lo, hi), 0 < lo < hi: a Chebyshev approximation refined by Newton's iterations y <- y (2 - x y), with the fewest levels that reach `bits` bits of relative precision (oboro.functions.plan_inverse shows the plan). Slots outside the interval give wrong values (above about 2 hi the iterations diverge).
        """

    def inverse_sqrt(self, interval: tuple[float, float], bits: float = 24.0) -> Ciphertext:
        """
        1/sqrt(x) on interval=(lo, hi), 0 < lo < hi: a Chebyshev approximation and Newton's iterations y <- y (3/2 - x y^2 / 2).
        """

    def sqrt(self, interval: tuple[float, float], bits: float = 24.0) -> Ciphertext:
        """
        sqrt(x) on interval=(lo, hi), 0 < lo < hi: the Chebyshev interpolant of sqrt where one reaches `bits` in no more levels than x * inverse_sqrt(x) (one level more than inverse_sqrt), else the latter.
        """

    def __pow__(self, k: int, /) -> Ciphertext:
        """
        self ** k for an integer k >= 1: ceil(log2 k) levels (x^(2^j) by squaring, the least depth possible).
        """

    def square(self) -> Ciphertext:
        """self * self (one level)."""

    def bootstrap(self) -> Ciphertext:
        """
        The same values with the levels back: bootstrapping (ModRaise, CoeffsToSlots, EvalMod, SlotsToCoeffs). A Batch of real values is bootstrapped two elements per bootstrap (half the time; Ciphertext.bootstrap_real_pair does it for two ciphertexts). The input may be at any level and needs |values| <= 1 for the stated precision (larger values lose precision quadratically, and the scale is checked: ValueError when it is too large); the result is at ctx.bootstrap_info()['output_level'] and that level's standard scale. Needs ctx.keygen(bootstrap=True) (MissingKey otherwise) and bootstrappable parameters (preset 'B1', or 'B2' for high precision).
        """

    def bootstrap_real_pair(self, other: Ciphertext) -> tuple[Ciphertext, Ciphertext]:
        """
        Bootstraps two real ciphertexts for the price of one bootstrap and a conjugation: self + 1j * other is bootstrapped and its real and imaginary parts are separated. Returns (self, other) with the levels back, each as bootstrap() returns it, at about the same precision (docs/bootstrapping.md). Both need real values and one shape (ValueError otherwise); in automatic mode operands at different levels are aligned first, as for a sum, while in manual mode they need one scale; a real Batch does the same for its elements in Batch.bootstrap().
        """

    def __rmatmul__(self, matrix: numpy.typing.ArrayLike | PlainMatrix, /) -> Ciphertext:
        """
        M @ self: a real matrix (NumPy array or oboro.linalg.PlainMatrix) times the encrypted vector (see oboro.linalg.matvec). One level; the rotation keys of oboro.linalg.keygen(ctx, M.shape, method='matvec').
        """

    def __matmul__(self, matrix: numpy.typing.ArrayLike | PlainMatrix, /) -> Ciphertext:
        """
        self @ M = M.T @ self (the vector as a row). One level; the keys of M.T's shape.
        """

    def dot(self, other: numpy.typing.ArrayLike | Ciphertext) -> Ciphertext:
        """
        The inner product sum_i x_i v_i with a vector of the same length (plain values or encrypted), in every slot: (self * other).sum(). One level in automatic mode; needs the keys of ctx.sum_rotations(slots=...).
        """

    def mean(self) -> Ciphertext:
        """
        The mean of the values in every slot: (self * (1/n)).sum() with 1/n in the used slots only (so padding slots do not count). One level; the keys of ctx.sum_rotations(slots=...).
        """

    def var(self) -> Ciphertext:
        """
        The population variance mean((x - mean(x))^2) in every slot (two passes: no cancellation for values far from 0). Three levels in automatic mode; the keys of ctx.sum_rotations(slots=...).
        """

    @property
    def level(self) -> int:
        """The level: the number of rescales left."""

    @property
    def scale(self) -> float:
        """
        The exact scale of the encoded message (after a rescale it is divided by the prime dropped, not rounded to a power of two).
        """

    @property
    def slots(self) -> int:
        """The slot count (power of two >= size); rotations are cyclic over it."""

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the encrypted array."""

    @property
    def size(self) -> int:
        """Number of encrypted values."""

    @property
    def ndim(self) -> int:
        """Number of dimensions."""

    @property
    def dtype(self) -> numpy.dtype[Any]:
        """
        numpy.float64 for real data, numpy.complex128 for complex data: the dtype decrypt returns.
        """

    @property
    def poly_count(self) -> int:
        """
        Number of polynomials: 2, or 3 after a manual-mode multiplication before relinearize().
        """

    def reshape(self, shape: int | Sequence[int]) -> Ciphertext:
        """
        The same ciphertext viewed with another shape of the same size (like numpy.reshape, -1 allowed); no homomorphic operation.
        """

    def __repr__(self) -> str: ...

    def serialize(self, *, compress: bool = True) -> bytes:
        """
        The ciphertext as bytes, with its level, exact scale, slots, shape, dtype and the id of the keys that encrypted it. compress=True stores the uniformly random half of keys and of fresh secret-key ciphertexts as a 32-byte seed (half the size); residues are always bit-packed to the size of their prime. Load with Ciphertext.deserialize(ctx, data).
        """

    def save(self, path: str | os.PathLike[str], *, compress: bool = True) -> None:
        """
        Writes serialize() to a file (atomically: a temporary file, then a rename).
        """

    @staticmethod
    def deserialize(context: Context, data: bytes) -> Ciphertext:
        """
        A Ciphertext from Ciphertext.serialize() output, attached to `context`, which must have the same parameters and, for encrypted data, the same keys (when both are known); else SerializationError, as for truncated, corrupted, oversized or foreign data.
        """

    @staticmethod
    def load(context: Context, path: str | os.PathLike[str]) -> Ciphertext:
        """Ciphertext.deserialize of a file written by save()."""

    def __reduce__(self) -> tuple:
        """
        pickle: serialize() (the checked format) and the key set's id; unpickling attaches it to a live context with those keys (SerializationError without one): unpickle the context first.
        """

class Plaintext:
    """
    An encoded, unencrypted array (made by Context.encode): the CKKS encoding of the values at a level and scale, ready to add to or multiply with ciphertexts of the same shape (ct + pt, ct - pt, pt - ct, ct * pt). Encoding once and reusing the plaintext saves the encoding of an array operand at every operation. Context.decode gives the values back; serialize / deserialize / save / load as for ciphertexts.
    """

    __array_ufunc__: None = None

    @property
    def level(self) -> int:
        """The level (number of primes - 1)."""

    @property
    def scale(self) -> float:
        """The exact encoding scale."""

    @property
    def slots(self) -> int:
        """The slot count (power of two)."""

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the encoded array."""

    @property
    def dtype(self) -> numpy.dtype[Any]:
        """float64 or complex128."""

    def drop_to_level(self, level: int) -> Plaintext:
        """
        The same plaintext with the primes above `level` removed (the scale is unchanged).
        """

    def __repr__(self) -> str: ...

    def serialize(self) -> bytes:
        """
        The plaintext as bytes (level, scale, slots, shape, dtype; residues bit-packed). Load with Plaintext.deserialize(ctx, data).
        """

    def save(self, path: str | os.PathLike[str]) -> None:
        """
        Writes serialize() to a file (atomically: a temporary file, then a rename).
        """

    @staticmethod
    def deserialize(context: Context, data: bytes) -> Plaintext:
        """
        A Plaintext from Plaintext.serialize() output, attached to `context`, which must have the same parameters and, for encrypted data, the same keys (when both are known); else SerializationError, as for truncated, corrupted, oversized or foreign data.
        """

    @staticmethod
    def load(context: Context, path: str | os.PathLike[str]) -> Plaintext:
        """Plaintext.deserialize of a file written by save()."""

    def __reduce__(self) -> tuple:
        """
        pickle: serialize() (the checked format) and the key set's id; unpickling attaches it to a live context with those keys (SerializationError without one): unpickle the context first.
        """

def serialized_info(data: bytes) -> dict[str, Any]:
    """
    What serialized data holds, from its headers (checksums verified): type, format_version, size, context_id, and for a bundle (a serialized context) the same for each part.
    """

class Batch:
    """
    d ciphertexts of one context, level and scale in ONE allocation, operated on together.

    Every operator is one batched call over all d elements (one parallel loop on the CPU), with the same
    results as the same operator on each oboro.Ciphertext, and the same automatic / manual mode::

        X = np.random.rand(100, 8)
        b = ctx.encrypt_batch(X)             # one row per ciphertext
        y = (b * b + 2.0 * b).rotate(1)      # 100 ciphertexts at once
        ctx.decrypt(y)                       # a (100, 8) array

    Operands: another Batch (same length and element shape), a number, an array of one element's shape
    (the same for every element) or of the batch's shape (one row per element). rotate takes one step
    for all or one step per element; automatic mode composes a step without a key from keyed steps
    exactly as Ciphertext.rotate does (one batched call per step of the longest composition).
    sum(...) and rotate_many(...) work as on a Ciphertext (bit-identical per element), and
    serialize / deserialize / save / load as for ciphertexts (fresh elements stored with their seeds).
    """

    __array_ufunc__: None = None

    def __add__(self, other: Batch | Plaintext | complex | numpy.typing.ArrayLike, /) -> Batch:
        """self + other"""

    def __radd__(self, other: Batch | Plaintext | complex | numpy.typing.ArrayLike, /) -> Batch:
        """other + self"""

    def __sub__(self, other: Batch | Plaintext | complex | numpy.typing.ArrayLike, /) -> Batch:
        """self - other"""

    def __rsub__(self, other: Batch | Plaintext | complex | numpy.typing.ArrayLike, /) -> Batch:
        """other - self"""

    def __mul__(self, other: Batch | Plaintext | complex | numpy.typing.ArrayLike, /) -> Batch:
        """self * other"""

    def __rmul__(self, other: Batch | Plaintext | complex | numpy.typing.ArrayLike, /) -> Batch:
        """other * self"""

    def __truediv__(self, other: Batch | Plaintext | complex | numpy.typing.ArrayLike, /) -> Batch:
        """self / other (other: a non-zero scalar or array, not a ciphertext)"""

    def __iadd__(self, other: Batch | Plaintext | complex | numpy.typing.ArrayLike, /) -> Batch:
        """self += other (in place)"""

    def __isub__(self, other: Batch | Plaintext | complex | numpy.typing.ArrayLike, /) -> Batch:
        """self -= other (in place)"""

    def __imul__(self, other: Batch | Plaintext | complex | numpy.typing.ArrayLike, /) -> Batch:
        """self *= other (in place)"""

    def __itruediv__(self, other: Batch | Plaintext | complex | numpy.typing.ArrayLike, /) -> Batch:
        """self /= other (in place)"""

    def __neg__(self) -> Batch:
        """-self"""

    def __pos__(self) -> Batch:
        """+self (a copy)"""

    def copy(self) -> Batch:
        """A copy."""

    def __copy__(self) -> Batch: ...

    def __deepcopy__(self, memo: object) -> Batch: ...

    @property
    def auto(self) -> bool:
        """
        Whether operations on this value run in automatic mode here and now (its context's mode, or that of an enclosing `with ctx.manual():` / `with ctx.automatic():` block).
        """

    def conj(self) -> Batch:
        """
        Complex conjugate of every value (needs keygen(conjugation=True), else MissingKey). Automatic mode relinearizes first.
        """

    def rescale(self) -> Batch:
        """
        Divides by the last prime q_level and drops it: level - 1, scale / q_level. Needed after multiplications in manual mode (automatic mode does it itself).
        """

    def relinearize(self) -> Batch:
        """
        Brings a size-3 product (manual mode) back to 2 polynomials with the relinearization key; a no-op on a size-2 ciphertext.
        """

    def drop_to_level(self, level: int) -> Batch:
        """
        The same values at a lower level. Manual mode keeps the scale (limbs are dropped). Automatic mode moves a value that is at its level's standard scale to the standard scale of the new level (an integer multiplication and a rescale on the way down, no extra level), as automatic alignment does.
        """

    def rotate_many(self, steps: Sequence[int]) -> list[Batch]:
        """
        [self.rotate(k) for k in steps], with one decomposition (ModUp) of each ciphertext shared by all the rotations (hoisting): cheaper than separate rotations from the second step on. Automatic mode reduces the steps modulo the slots and composes steps without a key like rotate(); manual mode needs the key of every step and raises MissingKey naming all the missing ones.
        """

    def sum(self, block: int | None = None, stride: int | None = None, count: int | None = None, strategy: str = 'auto', h: int | None = None) -> Batch:
        """
        Rotate-and-sum (a trace-type function), one key switch per round or hoisted.

        * sum(): every slot holds the sum of all `slots` values (padding slots are zero).
        * sum(block=k): the FIRST slot of each block of k consecutive slots holds the block's sum; the
          other slots hold sums of windows that straddle two blocks (use decrypt(...)[::k] on a 1-D
          ciphertext). k is a power of two dividing the slots.
        * sum(stride=s, count=c): slot t holds x[t] + x[t+s] + ... + x[t+(c-1)s] (cyclic); count defaults
          to slots/|s|, c a power of two with |s|*c <= slots.

        strategy: 'doubling' (log2 of the terms key switches), 'hoisted' (Ishimaki-Yamana unrolled
        algorithm with h iterations, each one ModUp and one ModDown for 2^r - 1 rotations; h defaults to
        the cost model's choice), or 'auto' (the cheapest h whose keys the context has). The keys each
        needs: Context.sum_rotations(...). Automatic mode relinearizes first. Consumes no level.
        """

    def rotate(self, steps: int | Sequence[int], /) -> Batch:
        """
        Rotates every element left by `steps`, or element i by steps[i] (one step per element, 0 allowed), in one batched call. Manual mode needs the key of each exact step, automatic mode a key of the step modulo the slots (or keyed steps it is composed from); else MissingKey naming the steps.
        """

    def polyval(self, coeffs: numpy.typing.ArrayLike, basis: str = 'power', interval: tuple[float, float] = (-1.0, 1.0), level: int | None = None, scale: float | None = None) -> Batch:
        """
        p(self) slot by slot for the polynomial with these real coefficients, lowest degree first: sum c_i x^i (basis='power') or sum c_i T_i(u) (basis='chebyshev', T_i the Chebyshev polynomials and u = (2x - lo - hi) / (hi - lo) the map of interval=(lo, hi) onto [-1, 1]). Baby-step giant-step Paterson-Stockmeyer: ceil(log2(degree + 1)) levels (one more for the map when hi - lo != 2), O(sqrt(degree)) ciphertext products, odd and even polynomials at their lower cost. The result lands exactly on `scale` (default: the standard scale) at `level` (default: the lowest level the depth leaves). Every slot, unused ones included, must lie in the interval: outside it a Chebyshev series grows like T_degree. LevelMismatch (saying how many levels are needed) before any work when there are too few; MissingKey without a relinearization key. Works in both modes.
        """

    def inverse(self, interval: tuple[float, float], bits: float = 24.0) -> Batch:
        """
        1/x for every slot in interval=(lo, hi), 0 < lo < hi: a Chebyshev approximation refined by Newton's iterations y <- y (2 - x y), with the fewest levels that reach `bits` bits of relative precision (oboro.functions.plan_inverse shows the plan). Slots outside the interval give wrong values (above about 2 hi the iterations diverge).
        """

    def inverse_sqrt(self, interval: tuple[float, float], bits: float = 24.0) -> Batch:
        """
        1/sqrt(x) on interval=(lo, hi), 0 < lo < hi: a Chebyshev approximation and Newton's iterations y <- y (3/2 - x y^2 / 2).
        """

    def sqrt(self, interval: tuple[float, float], bits: float = 24.0) -> Batch:
        """
        sqrt(x) on interval=(lo, hi), 0 < lo < hi: the Chebyshev interpolant of sqrt where one reaches `bits` in no more levels than x * inverse_sqrt(x) (one level more than inverse_sqrt), else the latter.
        """

    def __pow__(self, k: int, /) -> Batch:
        """
        self ** k for an integer k >= 1: ceil(log2 k) levels (x^(2^j) by squaring, the least depth possible).
        """

    def square(self) -> Batch:
        """self * self (one level)."""

    def bootstrap(self) -> Batch:
        """
        The same values with the levels back: bootstrapping (ModRaise, CoeffsToSlots, EvalMod, SlotsToCoeffs). A Batch of real values is bootstrapped two elements per bootstrap (half the time; Ciphertext.bootstrap_real_pair does it for two ciphertexts). The input may be at any level and needs |values| <= 1 for the stated precision (larger values lose precision quadratically, and the scale is checked: ValueError when it is too large); the result is at ctx.bootstrap_info()['output_level'] and that level's standard scale. Needs ctx.keygen(bootstrap=True) (MissingKey otherwise) and bootstrappable parameters (preset 'B1', or 'B2' for high precision).
        """

    def __rmatmul__(self, matrix: numpy.typing.ArrayLike | PlainMatrix, /) -> Batch:
        """
        M @ self: a real matrix (NumPy array or oboro.linalg.PlainMatrix) times the encrypted vector (see oboro.linalg.matvec). One level; the rotation keys of oboro.linalg.keygen(ctx, M.shape, method='matvec').
        """

    def __matmul__(self, matrix: numpy.typing.ArrayLike | PlainMatrix, /) -> Batch:
        """
        self @ M = M.T @ self (the vector as a row). One level; the keys of M.T's shape.
        """

    def dot(self, other: numpy.typing.ArrayLike | Batch) -> Batch:
        """
        The inner product sum_i x_i v_i with a vector of the same length (plain values or encrypted), in every slot: (self * other).sum(). One level in automatic mode; needs the keys of ctx.sum_rotations(slots=...).
        """

    def mean(self) -> Batch:
        """
        The mean of the values in every slot: (self * (1/n)).sum() with 1/n in the used slots only (so padding slots do not count). One level; the keys of ctx.sum_rotations(slots=...).
        """

    def var(self) -> Batch:
        """
        The population variance mean((x - mean(x))^2) in every slot (two passes: no cancellation for values far from 0). Three levels in automatic mode; the keys of ctx.sum_rotations(slots=...).
        """

    @staticmethod
    def concat(batches: Sequence[Batch]) -> Batch:
        """
        The elements of `batches`, in order, in one new Batch (as numpy.concatenate joins rows). They must share keys, element shape, level, scale and memory ('cpu' or one GPU).
        """

    @staticmethod
    def from_ciphertexts(ciphertexts: Sequence[Ciphertext], device: str = 'cpu') -> Batch:
        """
        A batch of copies of the ciphertexts (one context and keys, one level, scale and shape; else ValueError, LevelMismatch, ScaleMismatch or ContextMismatch naming the element), in the memory of `device` ('cpu', 'cuda', 'cuda:N', or 'cuda-emulated': a testing device that runs the CUDA backend's kernels in a CPU emulator, slow). A single ciphertext goes to a GPU as a batch of one.
        """

    def to(self, device: str) -> Batch:
        """
        A copy of the batch in the memory of `device` ('cpu', 'cuda', 'cuda:N'), where its operations then run: a batch received from a client (deserialize) moves to a GPU with to('cuda'), and back with to('cpu'). 'cuda-emulated' is a testing device: the CUDA backend's kernels run in a CPU emulator (slow), on separate host memory, in every build. Unknown device names: ValueError; no GPU: oboro.Error 'no CUDA GPU found'.
        """

    def to_ciphertexts(self) -> list[Ciphertext]:
        """The elements as a list of separate Ciphertexts (copies)."""

    def __len__(self) -> int:
        """The number of ciphertexts."""

    @property
    def device(self) -> str:
        """
        Where the batch lives and its operations run: 'cpu', 'cuda:N' or 'cuda-emulated'.
        """

    @overload
    def __getitem__(self, index: int) -> Ciphertext:
        """
        Element `index` as a Ciphertext (a copy); negative counts from the end.
        """

    @overload
    def __getitem__(self, index: slice | Sequence[int] | numpy.typing.ArrayLike) -> Batch:
        """
        The elements a slice, a sequence of integers or a boolean mask (one per element) selects, as a new Batch in the same memory (a copy), in the order given.
        """

    @property
    def level(self) -> int:
        """The level of every element."""

    @property
    def scale(self) -> float:
        """The exact scale of every element."""

    @property
    def slots(self) -> int:
        """The slot count of every element."""

    @property
    def shape(self) -> tuple[int, ...]:
        """(len(batch),) + the shape of one element: the shape decrypt returns."""

    @property
    def size(self) -> int:
        """
        Number of encrypted values in all elements (the size of the array decrypt returns).
        """

    @property
    def ndim(self) -> int:
        """len(shape): 1 + the dimensions of one element."""

    @property
    def element_shape(self) -> tuple[int, ...]:
        """The shape of one element (one row): batch[i].shape."""

    @property
    def dtype(self) -> numpy.dtype[Any]:
        """float64 or complex128, as decrypt returns."""

    @property
    def poly_count(self) -> int:
        """Polynomials per element: 2, or 3 after a manual-mode multiplication."""

    def __repr__(self) -> str: ...

    def serialize(self, *, compress: bool = True) -> bytes:
        """
        The batch as bytes: its count, level, exact scale, slots, the element shape and dtype, the id of the keys that encrypted it, and every element's residues bit-packed. compress=True stores the uniformly random half of keys and of fresh secret-key ciphertexts as a 32-byte seed (half the size); residues are always bit-packed to the size of their prime. (Elements of a fresh secret-key encrypt_batch keep their seeds until the batch is modified.) Load with Batch.deserialize(ctx, data).
        """

    def save(self, path: str | os.PathLike[str], *, compress: bool = True) -> None:
        """
        Writes serialize() to a file (atomically: a temporary file, then a rename).
        """

    @staticmethod
    def deserialize(context: Context, data: bytes) -> Batch:
        """
        A Batch from Batch.serialize() output, attached to `context`, which must have the same parameters and, for encrypted data, the same keys (when both are known); else SerializationError, as for truncated, corrupted, oversized or foreign data.
        """

    @staticmethod
    def load(context: Context, path: str | os.PathLike[str]) -> Batch:
        """Batch.deserialize of a file written by save()."""

    def __reduce__(self) -> tuple:
        """
        pickle: serialize() (the checked format) and the key set's id; unpickling attaches it to a live context with those keys (SerializationError without one): unpickle the context first.
        """

class EncryptedMatrix:
    """
    An encrypted real matrix laid out for one matrix-product method (make it with oboro.linalg.encrypt_matrix; decrypt it with Context.decrypt).
    """

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, cols) of the matrix."""

    @property
    def method(self) -> str:
        """The product method it is laid out for: 'jiang', '3d' or 'block'."""

    @property
    def d(self) -> int:
        """
        The power of two the matrix is zero-padded to (d x d), or the block size ('block').
        """

    @property
    def grid(self) -> tuple[int, int]:
        """
        (rows, cols) of the grid of d x d blocks, one ciphertext each ((1, 1) unless 'block').
        """

    @property
    def base(self) -> str:
        """
        The product each block uses: 'jiang' or '3d' (for 'block': '3d' where d^3 fits the slots).
        """

    @property
    def level(self) -> int:
        """The ciphertexts' level."""

    @property
    def auto(self) -> bool:
        """Whether the matrix's context is in automatic mode."""

    def band(self, block_rows: tuple[int, int], block_cols: tuple[int, int]) -> EncryptedMatrix:
        """
        The part of the matrix in block rows [block_rows[0], block_rows[1]) and block columns [block_cols[0], block_cols[1]) of its grid, as an EncryptedMatrix of that part's shape (the blocks are copied). With EncryptedMatrix.join, how a block product is cut into independent tiles.
        """

    @staticmethod
    def join(tiles: Sequence[Sequence[EncryptedMatrix]]) -> EncryptedMatrix:
        """
        One matrix from a grid of tiles (tiles[i][j]: tile row i, column j), their block grids side by side: the inverse of cutting a matrix into bands. The tiles of a row share their block rows, those of a column their block columns; all share the context, keys, method, d, level and scale.
        """

    def __repr__(self) -> str: ...

    def __matmul__(self, other: EncryptedMatrix) -> EncryptedMatrix:
        """The encrypted product self @ other (see oboro.linalg.matmul)."""

    def serialize(self, *, compress: bool = True) -> bytes:
        """
        The matrix as bytes: its layout (method, d, shape, block grid, key id) and each block ciphertext (compress=True stores the random half of fresh secret-key encryptions as a 32-byte seed). Load with EncryptedMatrix.deserialize(ctx, data).
        """

    def save(self, path: str | os.PathLike[str], *, compress: bool = True) -> None:
        """
        Writes serialize() to a file (atomically: a temporary file, then a rename).
        """

    @staticmethod
    def deserialize(context: Context, data: bytes) -> EncryptedMatrix:
        """
        A EncryptedMatrix from EncryptedMatrix.serialize() output, attached to `context`, which must have the same parameters and, for encrypted data, the same keys (when both are known); else SerializationError, as for truncated, corrupted, oversized or foreign data.
        """

    @staticmethod
    def load(context: Context, path: str | os.PathLike[str]) -> EncryptedMatrix:
        """EncryptedMatrix.deserialize of a file written by save()."""

    def __reduce__(self) -> tuple:
        """
        pickle: serialize() (the checked format) and the key set's id; unpickling attaches it to a live context with those keys (SerializationError without one): unpickle the context first.
        """

def encrypt_matrix(ctx: Context, matrix: numpy.typing.ArrayLike, method: str = 'auto', d: int | None = None, level: int | None = None) -> EncryptedMatrix:
    """
    Encrypts a real 2-D matrix for the encrypted matrix product (oboro.linalg.encrypt_matrix).
    """

def matmul(a: EncryptedMatrix, b: EncryptedMatrix) -> EncryptedMatrix:
    """The encrypted matrix product a @ b (oboro.linalg.matmul)."""

def matmul_rotation_steps(ctx: Context, shape: Sequence[int], method: str = 'auto', d: int | None = None) -> list[int]:
    """
    The rotation steps a matrix product needs (oboro.linalg.rotation_steps).
    """

class PlainMatrix:
    """
    A real matrix to multiply encrypted vectors with (oboro.linalg.matvec): its diagonals are computed once per slot count and encoded once per level, so repeated products cost only the homomorphic work. PlainMatrix(ctx, matrix). A matrix whose encoded diagonals would take more than half of the machine's memory encodes them at each product instead (keep_diagonals chooses).

    PlainMatrix(ctx, B, copies=k) is the block-diagonal matrix diag(B, ..., B) of k copies of B, each padded to d x d (d the next power of two above B's dimensions): it applies B to k vectors packed in one ciphertext at a stride of d (vector t in slots t*d ..), at the cost of one product of B whatever k is. Its shape is (k*d, k*d).
    """

    def __init__(self, ctx: Context, matrix: numpy.typing.ArrayLike, copies: int | None = None, keep_diagonals: bool | None = None) -> None: ...

    @property
    def keep_diagonals(self) -> bool | None:
        """
        True: the encoded diagonals are kept once per level (repeated products cost only the homomorphic work); False: encoded again at each product, a giant group at a time (little memory, slower); None (the default): kept unless they would take more than half of the machine's memory at the context's top level.
        """

    @property
    def memory_bytes(self) -> int:
        """
        The host memory its encoded diagonals hold now (0 before the first product, and with keep_diagonals=False).
        """

    @property
    def shape(self) -> tuple[int, int]: ...

    @property
    def T(self) -> PlainMatrix:
        """The transpose (a new PlainMatrix)."""

    def __matmul__(self, x: Ciphertext | Batch | Sequence[Ciphertext] | Sequence[Batch], /) -> Any:
        """self @ x: oboro.linalg.matvec(self, x)."""

    def __repr__(self) -> str: ...

    def diagonal_count(self, slots: int) -> int:
        """
        The non-zero diagonals (plaintexts per level) the product on `slots` slots multiplies.
        """

def matvec(matrix: numpy.typing.ArrayLike | PlainMatrix, x: Ciphertext | Batch | Sequence[Ciphertext] | Sequence[Batch]) -> Any:
    """y = M x (oboro.linalg.matvec)."""

def matvec_rotation_steps(ctx: Context, matrix: numpy.typing.ArrayLike | PlainMatrix | Sequence[int], slots: int | None = None) -> list[int]:
    """
    The rotation steps (sorted, distinct) of matvec with this matrix (its non-zero diagonals), or with a dense matrix of this shape (rows, cols), on ciphertexts of `slots` slots (default: the next power of two above both dimensions).
    """
