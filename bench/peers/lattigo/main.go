// lattigo-bench: the Lattigo v6 side of `oboro compare` (python/oboro/compare/worker.py is the
// Python side; both read the same JSON task on stdin and print the same JSON result on stdout).
//
// Ops are timed through Lattigo's fastest interface: the evaluator writes into outputs allocated
// once before the clock starts (the Python libraries allocate their result inside the call; this
// is noted in the report). Every op is checked against the expected values before it is timed.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
)

type task struct {
	Mode     string `json:"mode"`
	ParamSet string `json:"param_set"` // mode "bootstrap": a bootstrapping default set's name (bootstrap.go)
	Scheme   string `json:"scheme"`    // "ckks" (default), or "bfv" / "bgv" (chain mode only: integer.go)
	Params   struct {
		LogN         int     `json:"log_n"`
		ModuliBits   []int   `json:"moduli_bits"`
		SpecialBits  []int   `json:"special_bits"`
		ScaleBits    float64 `json:"scale_bits"`
		PlainModulus uint64  `json:"plain_modulus"`
	} `json:"params"`
	Threads    int           `json:"threads"`
	Repeat     int           `json:"repeat"`
	MinSeconds float64       `json:"min_seconds"`
	Ops        []string      `json:"ops"`
	Depth      int           `json:"depth"`
	Seed       int64         `json:"seed"`
	Cases      []circuitCase `json:"cases"` // mode "circuits" (circuits.go)
	// mode "circuits": each case checked on this many encryptions of its input (at least 1)
	CheckEncryptions int `json:"check_encryptions"`
}

type timing struct {
	MedianUs float64 `json:"median_us"`
	MinUs    float64 `json:"min_us"`
	MaxUs    float64 `json:"max_us"`
	Repeats  int     `json:"repeats"`
}

// measure mirrors oboro/timing.py: one warm-up call, then runs until `repeat` runs and
// `minSeconds` of timed runs (at most max(1000, repeat) runs).
func measure(fn func(), repeat int, minSeconds float64) timing {
	fn()
	return measureRuns(fn, repeat, minSeconds)
}

// measureRuns is measure without its warm-up call (the caller made that call: the circuits' check).
func measureRuns(fn func(), repeat int, minSeconds float64) timing {
	limit := 1000
	if repeat > limit {
		limit = repeat
	}
	var times []float64
	total := 0.0
	for len(times) < limit {
		t0 := time.Now()
		fn()
		d := time.Since(t0).Seconds()
		times = append(times, d)
		total += d
		if len(times) >= repeat && total >= minSeconds {
			break
		}
	}
	sort.Float64s(times)
	n := len(times)
	med := times[n/2]
	if n%2 == 0 {
		med = (times[n/2-1] + times[n/2]) / 2
	}
	return timing{med * 1e6, times[0] * 1e6, times[n-1] * 1e6, n}
}

// toComplex is x as complex numbers (errorBits's operands).
func toComplex(x []float64) []complex128 {
	c := make([]complex128, len(x))
	for i, v := range x {
		c[i] = complex(v, 0)
	}
	return c
}

func maxErr(got []float64, want []float64) float64 {
	m := 0.0
	for i := range want {
		m = math.Max(m, math.Abs(got[i]-want[i]))
	}
	return m
}

// peakRSS is this process's VmHWM (the parent's rusage would include its own peak: Linux keeps
// ru_maxrss across fork + exec).
func peakRSS() int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.Atoi(f[1])
				return kb * 1024
			}
		}
	}
	return 0
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "lattigo-bench:", err)
		os.Exit(1)
	}
}

func main() {
	var t task
	fail(json.NewDecoder(os.Stdin).Decode(&t))
	if t.Threads > 0 {
		runtime.GOMAXPROCS(t.Threads)
	}
	if t.Scheme == "bfv" || t.Scheme == "bgv" {
		runIntegerChain(t)
		return
	}
	if t.Mode == "circuits" {
		runCircuits(t)
		return
	}
	if t.Mode == "bootstrap" {
		runBootstrap(t)
		return
	}
	t0 := time.Now()
	params, err := ckks.NewParametersFromLiteral(ckks.ParametersLiteral{
		LogN: t.Params.LogN, LogQ: t.Params.ModuliBits, LogP: t.Params.SpecialBits,
		LogDefaultScale: int(t.Params.ScaleBits),
	})
	fail(err)
	slots := params.MaxSlots()
	kgen := rlwe.NewKeyGenerator(params)
	sk, pk := kgen.GenKeyPairNew()
	rlk := kgen.GenRelinearizationKeyNew(sk)
	sizes := map[string]int{"public": pk.BinarySize(), "relin": rlk.BinarySize()}
	var gks []*rlwe.GaloisKey
	if t.Mode == "ops" {
		gk1 := kgen.GenGaloisKeyNew(params.GaloisElement(1), sk)
		sizes["rotation"] = gk1.BinarySize()
		// InnerSum's keys: the powers of two up to slots (rotation by 1 is among them).
		gks = kgen.GenGaloisKeysNew(params.GaloisElementsForInnerSum(1, slots), sk)
	}
	evk := rlwe.NewMemEvaluationKeySet(rlk, gks...)
	ecd := ckks.NewEncoder(params)
	enc := rlwe.NewEncryptor(params, pk)
	dec := rlwe.NewDecryptor(params, sk)
	eval := ckks.NewEvaluator(params, evk)
	setup := time.Since(t0).Seconds()

	rng := rand.New(rand.NewSource(t.Seed))
	lo := -1.0
	if t.Mode == "chain" {
		lo = 0.999
	}
	x, y := make([]float64, slots), make([]float64, slots)
	for i := range x {
		x[i] = lo + (1-lo)*rng.Float64()
		y[i] = -1 + 2*rng.Float64()
	}
	top := params.MaxLevel()
	encrypt := func(v []float64) *rlwe.Ciphertext {
		pt := ckks.NewPlaintext(params, top)
		fail(ecd.Encode(v, pt))
		ct, err := enc.EncryptNew(pt)
		fail(err)
		return ct
	}
	decrypt := func(ct *rlwe.Ciphertext) []float64 {
		out := make([]float64, slots)
		fail(ecd.Decode(dec.DecryptNew(ct), out))
		return out
	}
	a, b := encrypt(x), encrypt(y)
	times := map[string]timing{}
	checks := map[string]float64{}
	result := map[string]interface{}{}

	if t.Mode == "chain" {
		want := make([]float64, slots)
		for i := range x {
			want[i] = math.Pow(x[i], math.Pow(2, float64(t.Depth)))
		}
		prod := ckks.NewCiphertext(params, 1, top)
		var c *rlwe.Ciphertext
		chain := func() {
			c = a
			for d := 0; d < t.Depth; d++ {
				fail(eval.MulRelin(c, c, prod))
				out := ckks.NewCiphertext(params, 1, prod.Level()-1)
				fail(eval.Rescale(prod, out))
				c = out
				prod = ckks.NewCiphertext(params, 1, out.Level())
			}
			prod = ckks.NewCiphertext(params, 1, top)
		}
		chain()
		checks["chain"] = maxErr(decrypt(c), want)
		times["chain"] = measure(chain, t.Repeat, t.MinSeconds)
	} else {
		pt := ckks.NewPlaintext(params, top)
		ptY := ckks.NewPlaintext(params, top) // the plaintext operand, encoded before any clock starts
		fail(ecd.Encode(y, ptY))
		prodP, prodPRs := ckks.NewCiphertext(params, 1, top), ckks.NewCiphertext(params, 1, top-1)
		sum, prod, prodRs := ckks.NewCiphertext(params, 1, top), ckks.NewCiphertext(params, 1, top), ckks.NewCiphertext(params, 1, top-1)
		rot, tot := ckks.NewCiphertext(params, 1, top), ckks.NewCiphertext(params, 1, top)
		out := make([]float64, slots)
		calls := map[string]func(){
			"encode": func() { fail(ecd.Encode(x, pt)) },
			"encrypt": func() {
				p := ckks.NewPlaintext(params, top)
				fail(ecd.Encode(x, p))
				_, err := enc.EncryptNew(p)
				fail(err)
			},
			"decrypt":   func() { fail(ecd.Decode(dec.DecryptNew(a), out)) },
			"add":       func() { fail(eval.Add(a, b, sum)) },
			"mul_plain": func() { fail(eval.Mul(a, ptY, prodP)); fail(eval.Rescale(prodP, prodPRs)) },
			"multiply":  func() { fail(eval.MulRelin(a, b, prod)); fail(eval.Rescale(prod, prodRs)) },
			"rotate":    func() { fail(eval.Rotate(a, 1, rot)) },
			"sum":       func() { fail(eval.InnerSum(a, 1, slots, tot)) },
		}
		for _, op := range []string{"encode", "add", "mul_plain", "multiply", "rotate", "sum"} {
			calls[op]()
		}
		dx := make([]float64, slots)
		fail(ecd.Decode(pt, dx))
		want := func(f func(i int) float64) []float64 {
			w := make([]float64, slots)
			for i := range w {
				w[i] = f(i)
			}
			return w
		}
		total := 0.0
		for _, v := range x {
			total += v
		}
		checks["encode"] = maxErr(dx, x)
		checks["encrypt"] = maxErr(decrypt(a), x)
		checks["decrypt"] = checks["encrypt"]
		checks["add"] = maxErr(decrypt(sum), want(func(i int) float64 { return x[i] + y[i] }))
		checks["mul_plain"] = maxErr(decrypt(prodPRs), want(func(i int) float64 { return x[i] * y[i] }))
		checks["multiply"] = maxErr(decrypt(prodRs), want(func(i int) float64 { return x[i] * y[i] }))
		checks["rotate"] = maxErr(decrypt(rot), want(func(i int) float64 { return x[(i+1)%slots] }))
		checks["sum"] = maxErr(decrypt(tot)[:1], []float64{total})
		keygen := map[string]bool{"relin_keygen": true, "rotation_keygen": true}
		for _, op := range t.Ops {
			if keygen[op] {
				continue
			}
			fn, ok := calls[op]
			if !ok {
				fail(fmt.Errorf("unknown op %q", op))
			}
			times[op] = measure(fn, t.Repeat, t.MinSeconds)
		}
		sizes["ciphertext"] = a.BinarySize()
		// Key generation last, after the peak memory of the ops above is read (worker.py does the
		// same): a new key each call, returned to the caller as Lattigo's API does.
		result["peak_rss_bytes"] = peakRSS()
		for _, op := range t.Ops {
			switch op {
			case "relin_keygen":
				times[op] = measure(func() { kgen.GenRelinearizationKeyNew(sk) }, t.Repeat, t.MinSeconds)
				key := kgen.GenRelinearizationKeyNew(sk)
				p := ckks.NewCiphertext(params, 1, top)
				e := eval.WithKey(rlwe.NewMemEvaluationKeySet(key))
				fail(e.MulRelin(a, b, p))
				rs := ckks.NewCiphertext(params, 1, top-1)
				fail(e.Rescale(p, rs))
				checks[op] = maxErr(decrypt(rs), want(func(i int) float64 { return x[i] * y[i] }))
			case "rotation_keygen":
				// new steps down from slots - 1, as worker.py's; the keys are kept, as a user keeps the
				// keys made (and as oboro and OpenFHE keep them in their contexts)
				step := slots
				var kept []*rlwe.GaloisKey
				times[op] = measure(func() {
					step--
					kept = append(kept, kgen.GenGaloisKeyNew(params.GaloisElement(step), sk))
				}, t.Repeat, t.MinSeconds)
				kept = nil
				step--
				key := kgen.GenGaloisKeyNew(params.GaloisElement(step), sk)
				r := ckks.NewCiphertext(params, 1, top)
				fail(eval.WithKey(rlwe.NewMemEvaluationKeySet(nil, key)).Rotate(a, step, r))
				checks[op] = maxErr(decrypt(r), want(func(i int) float64 { return x[(i+step)%slots] }))
			}
		}
	}
	dnum := params.BaseRNSDecompositionVectorSize(params.MaxLevelQ(), params.MaxLevelP())
	notes := []string{
		"ops write into outputs allocated before the clock starts (Lattigo's fastest interface; the Python libraries allocate inside the call)",
		"total sum: Evaluator.InnerSum (library call); each op runs on one goroutine, GOMAXPROCS only helps the runtime",
	}
	result["library"] = "lattigo"
	result["version"] = "v6.1.1"
	result["used"] = map[string]interface{}{"N": params.N(), "logQ": t.Params.ModuliBits, "logP": t.Params.SpecialBits,
		"dnum": dnum, "logQP": math.Round(params.LogQP()), "security": "not enforced by Lattigo (logQP as for oboro)"}
	result["notes"] = notes
	result["setup_seconds"] = setup
	result["times"] = times
	result["checks"] = checks
	result["sizes"] = sizes
	if _, ok := result["peak_rss_bytes"]; !ok {
		result["peak_rss_bytes"] = peakRSS()
	}
	fail(json.NewEncoder(os.Stdout).Encode(result))
}
