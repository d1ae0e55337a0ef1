// The circuits mode of `oboro compare --circuits` (python/oboro/compare/worker.py run_circuits is the
// Python side; same task and result JSON): Chebyshev series, the sigmoid and sqrt interpolants through
// Lattigo's polynomial evaluator, 1/x through its Goldschmidt division, and a plaintext matrix times an
// encrypted vector through its linear-transformation evaluator (lintrans). Every result is checked
// against double precision; the check call is the warm-up of the timed runs.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"os"
	"sort"
	"time"

	"github.com/tuneinsight/lattigo/v6/circuits/ckks/inverse"
	"github.com/tuneinsight/lattigo/v6/circuits/ckks/lintrans"
	"github.com/tuneinsight/lattigo/v6/circuits/ckks/minimax"
	"github.com/tuneinsight/lattigo/v6/circuits/ckks/polynomial"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
	"github.com/tuneinsight/lattigo/v6/utils/bignum"
)

// circuitCase is one row of the circuits mode (command.plan_circuits in Python writes them).
type circuitCase struct {
	Key      string    `json:"key"`
	Kind     string    `json:"kind"` // chebyshev, sigmoid, inverse, sqrt, scale, matvec
	Degree   int       `json:"degree"`
	Interval []float64 `json:"interval"`
	Coeffs   []float64 `json:"coeffs"`   // Chebyshev coefficients on Interval, lowest first (sum c_k T_k)
	Constant float64   `json:"constant"` // scale: the constant x is multiplied by
	Bits     float64   `json:"bits"`
	Size     int       `json:"size"` // matvec: the matrix is Size x Size, the vector fills Size slots
	Seed     uint64    `json:"seed"`
}

// uniform is protocol.uniform_at for i = 0 .. n-1: SplitMix64 of seed*2^32 + i, the top 53 bits as
// u in [0, 1), lo + (hi - lo) * u (the same doubles as the Python workers get).
func uniform(seed uint64, n int, lo, hi float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		z := (seed << 32) + uint64(i) + 0x9E3779B97F4A7C15
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		z ^= z >> 31
		u := float64(z>>11) * 0x1p-53
		out[i] = lo + float64((hi-lo)*u) // no fused multiply-add: the same rounding as NumPy
	}
	return out
}

// chebval is sum c_k T_k(u) by Clenshaw's recurrence.
func chebval(u float64, c []float64) float64 {
	b1, b2 := 0.0, 0.0
	for k := len(c) - 1; k >= 1; k-- {
		b1, b2 = c[k]+2*u*b1-b2, b1
	}
	return c[0] + u*b1 - b2
}

// runCircuit is one case: the input ciphertext, the timed call and what Lattigo chose.
type runCircuit struct {
	in     *rlwe.Ciphertext
	call   func() (*rlwe.Ciphertext, error)
	chosen string
	n      int       // slots to decrypt
	want   []float64 // double-precision result
}

type circuitEnv struct {
	params ckks.Parameters
	kgen   *rlwe.KeyGenerator
	sk     *rlwe.SecretKey
	rlk    *rlwe.RelinearizationKey
	ecd    *ckks.Encoder
	enc    *rlwe.Encryptor
	dec    *rlwe.Decryptor
	eval   *ckks.Evaluator
}

// encrypt encodes v on len(v) slots (a power of two: sparse packing below MaxSlots) at the top level.
func (env *circuitEnv) encrypt(v []float64) (*rlwe.Ciphertext, error) {
	pt := ckks.NewPlaintext(env.params, env.params.MaxLevel())
	pt.LogDimensions = ring.Dimensions{Rows: 0, Cols: bits.Len(uint(len(v))) - 1}
	if err := env.ecd.Encode(v, pt); err != nil {
		return nil, err
	}
	return env.enc.EncryptNew(pt)
}

func (env *circuitEnv) decrypt(ct *rlwe.Ciphertext, n int) ([]float64, error) {
	out := make([]float64, ct.Slots())
	if err := env.ecd.Decode(env.dec.DecryptNew(ct), out); err != nil {
		return nil, err
	}
	return out[:n], nil
}

// goldschmidtIterations is the iteration count that Lattigo's GoldschmidtDivisionNew chooses itself
// (its documented estimate: precision (N/2)/scale, doubling each iteration, at least 3), for the report.
func goldschmidtIterations(params ckks.Parameters, scale rlwe.Scale, log2min float64) int {
	prec := float64(params.N()/2) / scale.Float64()
	start, iters := 1-math.Exp2(log2min), 1
	for start >= prec {
		start *= start
		iters++
	}
	if iters < 3 {
		iters = 3
	}
	return iters
}

func (env *circuitEnv) prepare(c circuitCase) (*runCircuit, error) {
	params, eval := env.params, env.eval
	if c.Kind == "matvec" {
		return env.prepareMatvec(c)
	}
	if len(c.Interval) != 2 {
		return nil, fmt.Errorf("case %q has no interval", c.Key)
	}
	lo, hi := c.Interval[0], c.Interval[1]
	slots := params.MaxSlots()
	x := uniform(c.Seed, slots, lo, hi)
	want := make([]float64, slots)
	for i, v := range x {
		switch c.Kind {
		case "chebyshev":
			u := v
			if lo != -1 || hi != 1 {
				u = (2*v - lo - hi) / (hi - lo)
			}
			want[i] = chebval(u, c.Coeffs)
		case "sigmoid":
			want[i] = 1 / (1 + math.Exp(-v))
		case "inverse":
			want[i] = 1 / v
		case "sqrt":
			want[i] = math.Sqrt(v)
		case "scale":
			want[i] = c.Constant * v
		default:
			return nil, fmt.Errorf("unknown circuit kind %q", c.Kind)
		}
	}
	ct, err := env.encrypt(x)
	if err != nil {
		return nil, err
	}
	r := &runCircuit{in: ct, n: slots, want: want}
	if c.Kind == "scale" {
		r.chosen = fmt.Sprintf("MulNew(ct, %g) + Rescale", c.Constant)
		r.call = func() (*rlwe.Ciphertext, error) {
			t, err := eval.MulNew(ct, c.Constant)
			if err != nil {
				return nil, err
			}
			return t, eval.Rescale(t, t)
		}
		return r, nil
	}
	if c.Kind == "inverse" {
		// x/hi in [lo/hi, 1] (one level), Goldschmidt's 1/(x/hi), then /hi by the scale (no level).
		invEval := inverse.NewEvaluator(params, minimax.NewEvaluator(params, eval, nil))
		log2min := math.Log2(lo / hi)
		iters := goldschmidtIterations(params, params.DefaultScale(), log2min)
		r.chosen = fmt.Sprintf("inverse.GoldschmidtDivisionNew on x/%g in [2^%.0f, 1]: %d iterations (its own estimate "+
			"for the scale); the /%g by the scale", hi, log2min, iters, hi)
		r.call = func() (*rlwe.Ciphertext, error) {
			t, err := eval.MulNew(ct, 1/hi)
			if err != nil {
				return nil, err
			}
			if err = eval.Rescale(t, t); err != nil {
				return nil, err
			}
			out, err := invEval.GoldschmidtDivisionNew(t, log2min)
			if err != nil {
				return nil, err
			}
			out.Scale = out.Scale.Mul(rlwe.NewScale(hi))
			return out, nil
		}
		return r, nil
	}
	// chebyshev, sigmoid, sqrt: the polynomial evaluator on the task's Chebyshev coefficients
	bpoly := bignum.NewPolynomial(bignum.Chebyshev, c.Coeffs, [2]float64{lo, hi})
	poly := polynomial.NewPolynomial(bpoly)
	polyEval := polynomial.NewEvaluator(params, eval)
	mapped := lo != -1 || hi != 1
	r.chosen = fmt.Sprintf("polynomial.Evaluator, degree %d (BSGS, Chebyshev basis)", len(c.Coeffs)-1)
	if mapped {
		r.chosen = "change of basis onto [-1, 1] + " + r.chosen
	}
	scalar, constant := bpoly.ChangeOfBasis()
	r.call = func() (*rlwe.Ciphertext, error) {
		in := ct
		if mapped {
			t, err := eval.MulNew(ct, scalar)
			if err != nil {
				return nil, err
			}
			if err = eval.Add(t, constant, t); err != nil {
				return nil, err
			}
			if err = eval.Rescale(t, t); err != nil {
				return nil, err
			}
			in = t
		}
		return polyEval.Evaluate(in, poly, params.DefaultScale())
	}
	return r, nil
}

// prepareMatvec: y = M x through lintrans on a sparse packing of Size slots, every diagonal of the
// dense matrix encoded (and the Galois keys made) before the clock starts; outputs allocated once.
func (env *circuitEnv) prepareMatvec(c circuitCase) (*runCircuit, error) {
	params, n := env.params, c.Size
	if n < 2 || n&(n-1) != 0 || n > params.MaxSlots() {
		return nil, fmt.Errorf("matvec size %d is not a power of two <= %d", n, params.MaxSlots())
	}
	x := uniform(c.Seed, n, -1, 1)
	m := uniform(c.Seed+1, n*n, -1, 1)
	want := make([]float64, n)
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < n; j++ {
			s += m[i*n+j] * x[j]
		}
		want[i] = s
	}
	ct, err := env.encrypt(x)
	if err != nil {
		return nil, err
	}
	diagonals := make(lintrans.Diagonals[float64], n)
	for k := 0; k < n; k++ {
		d := make([]float64, n)
		for t := 0; t < n; t++ {
			d[t] = m[t*n+(t+k)%n]
		}
		diagonals[k] = d
	}
	ltparams := lintrans.Parameters{
		DiagonalsIndexList:        diagonals.DiagonalsIndexList(),
		LevelQ:                    ct.Level(),
		LevelP:                    params.MaxLevelP(),
		Scale:                     rlwe.NewScale(params.Q()[ct.Level()]),
		LogDimensions:             ct.LogDimensions,
		LogBabyStepGiantStepRatio: 1,
	}
	lt := lintrans.NewTransformation(params, ltparams)
	if err := lintrans.Encode(env.ecd, diagonals, lt); err != nil {
		return nil, err
	}
	galEls := lintrans.GaloisElements(params, ltparams)
	gks := env.kgen.GenGaloisKeysNew(galEls, env.sk)
	ltEval := lintrans.NewEvaluator(env.eval.WithKey(rlwe.NewMemEvaluationKeySet(env.rlk, gks...)))
	prod := ckks.NewCiphertext(params, 1, ct.Level())
	out := ckks.NewCiphertext(params, 1, ct.Level()-1)
	return &runCircuit{
		in: ct, n: n, want: want,
		chosen: fmt.Sprintf("lintrans.Evaluator (BSGS, log2 ratio 1): %d diagonals, %d Galois keys; outputs allocated "+
			"before the clock", n, len(galEls)),
		call: func() (*rlwe.Ciphertext, error) {
			if err := ltEval.Evaluate(ct, lt, prod); err != nil {
				return nil, err
			}
			return out, env.eval.Rescale(prod, out)
		},
	}, nil
}

func runCircuits(t task) {
	t0 := time.Now()
	params, err := ckks.NewParametersFromLiteral(ckks.ParametersLiteral{
		LogN: t.Params.LogN, LogQ: t.Params.ModuliBits, LogP: t.Params.SpecialBits,
		LogDefaultScale: int(t.Params.ScaleBits),
	})
	fail(err)
	kgen := rlwe.NewKeyGenerator(params)
	sk, pk := kgen.GenKeyPairNew()
	rlk := kgen.GenRelinearizationKeyNew(sk)
	env := &circuitEnv{params: params, kgen: kgen, sk: sk, rlk: rlk, ecd: ckks.NewEncoder(params),
		enc: rlwe.NewEncryptor(params, pk), dec: rlwe.NewDecryptor(params, sk),
		eval: ckks.NewEvaluator(params, rlwe.NewMemEvaluationKeySet(rlk))}
	setup := time.Since(t0).Seconds()

	times := map[string]timing{}
	checks := map[string]float64{}
	worst := map[string]float64{}
	meanBits := map[string]float64{}
	levels := map[string]int{}
	chosen := map[string]string{}
	errs := map[string]string{}
	encryptions := max(t.CheckEncryptions, 1)
	for _, c := range t.Cases {
		// the check on `encryptions` fresh encryptions of the input: the median and the worst error,
		// and the median of the mean bits over the slots (the worker's check_mean_bits)
		var r *runCircuit
		var errors, means []float64
		var failure error
		for e := 0; e < encryptions && failure == nil; e++ {
			if r, failure = env.prepare(c); failure != nil {
				break
			}
			res, err := r.call()
			if failure = err; err != nil {
				break
			}
			got, err := env.decrypt(res, r.n)
			if failure = err; err != nil {
				break
			}
			errors = append(errors, maxErr(got, r.want))
			_, mean := errorBits(toComplex(got), toComplex(r.want))
			means = append(means, mean)
			levels[c.Key] = r.in.Level() - res.Level()
		}
		if failure != nil {
			errs[c.Key] = failure.Error()
			delete(levels, c.Key)
			continue
		}
		chosen[c.Key] = r.chosen
		sort.Float64s(errors)
		sort.Float64s(means)
		checks[c.Key] = errors[len(errors)/2]
		worst[c.Key] = errors[len(errors)-1]
		meanBits[c.Key] = means[len(means)/2]
		var callErr error
		times[c.Key] = measureRuns(func() {
			if _, err := r.call(); err != nil && callErr == nil {
				callErr = err
			}
		}, t.Repeat, t.MinSeconds)
		if callErr != nil {
			delete(times, c.Key)
			errs[c.Key] = callErr.Error()
		}
	}
	dnum := params.BaseRNSDecompositionVectorSize(params.MaxLevelQ(), params.MaxLevelP())
	result := map[string]interface{}{
		"library": "lattigo", "scheme": "ckks", "version": "v6.1.1",
		"used": map[string]interface{}{"N": params.N(), "logQ": t.Params.ModuliBits, "logP": t.Params.SpecialBits,
			"dnum": dnum, "logQP": math.Round(params.LogQP()), "security": "not enforced by Lattigo (logQP as for oboro)"},
		"notes": []string{
			"each circuit runs on one goroutine (Lattigo has no threads inside an op; GOMAXPROCS only helps the runtime)",
			"polynomials: the runner's Chebyshev coefficients through circuits/ckks/polynomial (the interval mapped onto [-1, 1] by one level)",
		},
		"setup_seconds": setup, "times": times, "checks": checks, "check_worst": worst, "check_mean_bits": meanBits, "levels": levels, "chosen": chosen,
		"skipped_cases": map[string]string{}, "errors": errs, "sizes": map[string]int{}, "peak_rss_bytes": peakRSS(),
	}
	fail(json.NewEncoder(os.Stdout).Encode(result))
}
