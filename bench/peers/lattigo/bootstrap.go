// The bootstrap mode: Lattigo's CKKS bootstrapping (circuits/ckks/bootstrapping) on one of its own
// default parameter sets, measured the way bench/bench_bootstrap.cpp measures oboro's: key generation,
// the bootstrapper's set-up, the keys' count and size, the time of one full-slot bootstrap (median of
// `repeat` runs after an untimed one whose result is checked first), its precision against the input
// values (uniform in the unit disk), the levels it leaves and the process's peak memory.
//
//	{"mode": "bootstrap", "param_set": "N16QP1546H192H32", "repeat": 3, "threads": 1, "seed": 1}
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"runtime"
	"sort"
	"time"

	"github.com/tuneinsight/lattigo/v6/circuits/ckks/bootstrapping"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
	"github.com/tuneinsight/lattigo/v6/utils"
)

// bootstrapSet is a residual (ckks) literal and a bootstrapping literal, the shape of Lattigo's defaults.
type bootstrapSet struct {
	scheme ckks.ParametersLiteral
	btp    bootstrapping.ParametersLiteral
	// messageRatioBump is added to the message ratio (log2) after the parameters are made (see testSet).
	messageRatioBump int
}

// bootstrapSets are Lattigo's default sets by name (default_parameters.go), plus "test".
func bootstrapSets() map[string]bootstrapSet {
	sets := map[string]bootstrapSet{}
	for name, d := range map[string]struct {
		SchemeParams        ckks.ParametersLiteral
		BootstrappingParams bootstrapping.ParametersLiteral
	}{
		"N16QP1546H192H32":   bootstrapping.N16QP1546H192H32,
		"N16QP1547H192H32":   bootstrapping.N16QP1547H192H32,
		"N16QP1553H192H32":   bootstrapping.N16QP1553H192H32,
		"N15QP768H192H32":    bootstrapping.N15QP768H192H32,
		"N16QP1767H32768H32": bootstrapping.N16QP1767H32768H32,
		"N16QP1788H32768H32": bootstrapping.N16QP1788H32768H32,
		"N16QP1793H32768H32": bootstrapping.N16QP1793H32768H32,
		"N15QP880H16384H32":  bootstrapping.N15QP880H16384H32,
	} {
		sets[name] = bootstrapSet{scheme: d.SchemeParams, btp: d.BootstrappingParams}
	}
	sets["test"] = testSet()
	return sets
}

// testSet is N16QP1546H192H32 shrunk to N = 2^12 for smoke tests only: the same moduli and circuit on a
// ring far too small for them (no security at all). As Lattigo's own short tests and its
// ckks_bootstrapping/basics example do, the message ratio grows by 16 - LogN bits: fewer slots make a
// smaller encoded message, and the larger ratio keeps the precision of the N = 2^16 set.
func testSet() bootstrapSet {
	const logN = 12
	s := bootstrapping.N16QP1546H192H32
	scheme := s.SchemeParams
	scheme.LogN = logN
	btp := s.BootstrappingParams
	btp.LogN = utils.Pointy(logN)
	return bootstrapSet{scheme: scheme, btp: btp, messageRatioBump: 16 - logN}
}

// errorBits is -log2 of the largest |got - want| over the slots (complex modulus) and the mean over the
// slots of -log2 |got - want| (Lattigo's "AVG Prec"). An exact slot counts as 60 bits, as in oboro.
func errorBits(got, want []complex128) (worst, mean float64) {
	const exact = 60.0
	maxErr, sum := 0.0, 0.0
	for i := range want {
		e := math.Hypot(real(got[i]-want[i]), imag(got[i]-want[i]))
		maxErr = math.Max(maxErr, e)
		if e == 0 {
			sum += exact
		} else {
			sum += math.Min(exact, -math.Log2(e))
		}
	}
	worst = exact
	if maxErr > 0 {
		worst = math.Min(exact, -math.Log2(maxErr))
	}
	return worst, sum / float64(len(want))
}

type bootstrapResult struct {
	Library           string    `json:"library"`
	Version           string    `json:"version"`
	ParamSet          string    `json:"param_set"`
	LogN              int       `json:"log_n"`
	Slots             int       `json:"slots"`
	LevelsLeft        int       `json:"levels_left"`
	ParamsS           float64   `json:"params_s"`
	KeygenS           float64   `json:"keygen_s"`
	SetupS            float64   `json:"setup_s"`
	Keys              int       `json:"keys"`
	KeyGiB            float64   `json:"key_gib"`
	BootstrapMedianS  float64   `json:"bootstrap_median_s"`
	BootstrapMinS     float64   `json:"bootstrap_min_s"`
	BootstrapRuns     []float64 `json:"bootstrap_runs"`
	PrecisionBits     float64   `json:"precision_bits"`
	MeanPrecisionBits float64   `json:"mean_precision_bits"`
	ConstantBits      float64   `json:"constant_precision_bits"`
	PeakGiB           float64   `json:"peak_gib"`
	Threads           int       `json:"threads"`
	Notes             []string  `json:"notes"`
}

// minBootstrapBits: a warm-up bootstrap worse than this is a broken set-up, not a slow one, and is not timed
// (Lattigo's weakest default set is documented at 15.4 bits).
const minBootstrapBits = 10

func runBootstrap(t task) {
	set, ok := bootstrapSets()[t.ParamSet]
	if !ok {
		fail(fmt.Errorf("unknown bootstrapping param_set %q", t.ParamSet))
	}
	repeat := t.Repeat
	if repeat < 1 {
		repeat = 1
	}

	t0 := time.Now()
	params, err := ckks.NewParametersFromLiteral(set.scheme)
	fail(err)
	btpParams, err := bootstrapping.NewParametersFromLiteral(params, set.btp)
	fail(err)
	btpParams.Mod1ParametersLiteral.LogMessageRatio += set.messageRatioBump
	paramsS := time.Since(t0).Seconds()

	// The bootstrapping keys are made under the residual secret (GenEvaluationKeys extends it, or switches
	// to the bootstrapping ring's own secret when N differs); the public key is part of the user's keys.
	t0 = time.Now()
	kgen := rlwe.NewKeyGenerator(params)
	sk, pk := kgen.GenKeyPairNew()
	evk, _, err := btpParams.GenEvaluationKeys(sk)
	fail(err)
	keygenS := time.Since(t0).Seconds()

	// NewEvaluator encodes the CoeffsToSlots / SlotsToCoeffs matrices and the EvalMod polynomial.
	t0 = time.Now()
	eval, err := bootstrapping.NewEvaluator(btpParams, evk)
	fail(err)
	setupS := time.Since(t0).Seconds()

	// Every key the bootstrapper holds: relinearization, Galois, encapsulation (dense <-> sparse secret) and,
	// for the N=2^15 sets, the ring switches; bytes as serialised (BinarySize of the whole set).
	keys := len(evk.GaloisKeys)
	if evk.RelinearizationKey != nil {
		keys++
	}
	for _, k := range []*rlwe.EvaluationKey{evk.EvkN1ToN2, evk.EvkN2ToN1, evk.EvkRealToCmplx, evk.EvkCmplxToReal,
		evk.EvkDenseToSparse, evk.EvkSparseToDense} {
		if k != nil {
			keys++
		}
	}
	keyGiB := float64(evk.BinarySize()) / (1 << 30)

	slots := params.MaxSlots()
	rng := rand.New(rand.NewSource(t.Seed))
	values := make([]complex128, slots)
	for i := range values {
		// sqrt of a uniform radius: uniform over the disk's area, not clustered at its centre
		r, a := math.Sqrt(rng.Float64()), 2*math.Pi*rng.Float64()
		values[i] = complex(r*math.Cos(a), r*math.Sin(a))
	}
	// As in Lattigo's ckks_bootstrapping/basics example: encoded at level 0 with the default scale, the
	// input Bootstrap expects (at level 0 the scale must be the default one; no level is left to adjust it).
	ecd := ckks.NewEncoder(params)
	dec := rlwe.NewDecryptor(params, sk)
	pt := ckks.NewPlaintext(params, 0)
	fail(ecd.Encode(values, pt))
	in, err := rlwe.NewEncryptor(params, pk).EncryptNew(pt)
	fail(err)

	got := make([]complex128, slots)
	check := func(out *rlwe.Ciphertext) (worst, mean float64) {
		fail(ecd.Decode(dec.DecryptNew(out), got))
		return errorBits(got, values)
	}
	// Bootstrap works in place on its input's polynomials (ScaleDown, ModUp), so every run gets a fresh
	// copy, made before the clock starts.
	bootstrapOnce := func() (*rlwe.Ciphertext, float64) {
		ct := in.CopyNew()
		t0 := time.Now()
		out, err := eval.Bootstrap(ct)
		d := time.Since(t0).Seconds()
		fail(err)
		return out, d
	}

	// the untimed warm-up, checked before anything is timed
	out, _ := bootstrapOnce()
	worst, mean := check(out)
	if worst < minBootstrapBits {
		fail(fmt.Errorf("bootstrap on %s: %.1f bits (< %d): not timed", t.ParamSet, worst, minBootstrapBits))
	}
	levelsLeft := out.Level()
	var runs []float64
	for r := 0; r < repeat; r++ {
		out, d := bootstrapOnce()
		runs = append(runs, d)
		w, m := check(out)
		worst, mean = math.Min(worst, w), math.Min(mean, m)
	}
	// the hardest input for the sine of EvalMod, measured as oboro's bench_bootstrap does: every slot
	// 1, whose polynomial is the constant 1 (untimed, after the timed runs)
	ones := make([]complex128, slots)
	for i := range ones {
		ones[i] = 1
	}
	onesPt := ckks.NewPlaintext(params, 0)
	fail(ecd.Encode(ones, onesPt))
	onesCt, err := rlwe.NewEncryptor(params, pk).EncryptNew(onesPt)
	fail(err)
	onesOut, err := eval.Bootstrap(onesCt)
	fail(err)
	fail(ecd.Decode(dec.DecryptNew(onesOut), got))
	constantBits, _ := errorBits(got, ones)

	sorted := append([]float64(nil), runs...)
	sort.Float64s(sorted)
	n := len(sorted)
	median := sorted[n/2]
	if n%2 == 0 {
		median = (sorted[n/2-1] + sorted[n/2]) / 2
	}

	notes := []string{
		"Lattigo's default bootstrapping set as given (circuits/ckks/bootstrapping/default_parameters.go); input encoded at level 0 with the default scale, full slots",
		"keys: relinearization + Galois + encapsulation (+ ring switch) keys of the bootstrapper, bytes as serialised; oboro's key_gib counts the same keys",
		"each bootstrap runs on one goroutine (Lattigo has no threads inside an op; GOMAXPROCS only helps the runtime)",
		"precision: worst over the warm-up and the timed runs; mean_precision_bits is the mean over slots of -log2|error| (Lattigo's AVG Prec)",
	}
	if t.ParamSet == "test" {
		notes = append(notes, "test: N16QP1546H192H32 on N=2^12 with the message ratio raised by 4 bits; insecure, smoke tests only")
	}
	fail(json.NewEncoder(os.Stdout).Encode(bootstrapResult{
		Library: "lattigo", Version: "v6.1.1", ParamSet: t.ParamSet,
		LogN: params.LogN(), Slots: slots, LevelsLeft: levelsLeft,
		ParamsS: paramsS, KeygenS: keygenS, SetupS: setupS, Keys: keys, KeyGiB: keyGiB,
		BootstrapMedianS: median, BootstrapMinS: sorted[0], BootstrapRuns: runs,
		PrecisionBits: worst, MeanPrecisionBits: mean, ConstantBits: constantBits,
		PeakGiB: float64(peakRSS()) / (1 << 30), Threads: runtime.GOMAXPROCS(0), Notes: notes,
	}))
}
