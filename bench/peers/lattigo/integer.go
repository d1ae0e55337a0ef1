// The BFV / BGV side of the chain mode (paper 002, Figures 2 and 3 show them beside CKKS): the same
// chain of squarings (multiply + relinearize, and for BGV the modulus switch) on integer slots
// modulo the plaintext modulus t, checked exactly against x^(2^depth) mod t.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"time"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// powMod is x^(2^depth) mod t by repeated squaring (x, t < 2^32: no overflow).
func powMod(x uint64, depth int, t uint64) uint64 {
	for d := 0; d < depth; d++ {
		x = x * x % t
	}
	return x
}

func runIntegerChain(t task) {
	if t.Mode != "chain" {
		fail(fmt.Errorf("scheme %q is measured in chain mode only", t.Scheme))
	}
	t0 := time.Now()
	params, err := bgv.NewParametersFromLiteral(bgv.ParametersLiteral{
		LogN: t.Params.LogN, LogQ: t.Params.ModuliBits, LogP: t.Params.SpecialBits,
		PlaintextModulus: t.Params.PlainModulus,
	})
	fail(err)
	kgen := rlwe.NewKeyGenerator(params)
	sk, pk := kgen.GenKeyPairNew()
	rlk := kgen.GenRelinearizationKeyNew(sk)
	sizes := map[string]int{"public": pk.BinarySize(), "relin": rlk.BinarySize()}
	ecd := bgv.NewEncoder(params)
	enc := rlwe.NewEncryptor(params, pk)
	dec := rlwe.NewDecryptor(params, sk)
	// BFV is Lattigo's BGV evaluator in scale-invariant mode: its multiply keeps the level (no rescale).
	bfv := t.Scheme == "bfv"
	eval := bgv.NewEvaluator(params, rlwe.NewMemEvaluationKeySet(rlk), bfv)
	setup := time.Since(t0).Seconds()

	slots := params.MaxSlots()
	tm := params.PlaintextModulus()
	rng := rand.New(rand.NewSource(t.Seed))
	x, want := make([]uint64, slots), make([]uint64, slots)
	for i := range x {
		x[i] = uint64(rng.Int63n(int64(tm)))
		want[i] = powMod(x[i], t.Depth, tm)
	}
	top := params.MaxLevel()
	pt := bgv.NewPlaintext(params, top)
	fail(ecd.Encode(x, pt))
	a, err := enc.EncryptNew(pt)
	fail(err)

	var c *rlwe.Ciphertext
	chain := func() {
		c = a
		for d := 0; d < t.Depth; d++ {
			prod := bgv.NewCiphertext(params, 1, c.Level())
			fail(eval.MulRelin(c, c, prod))
			if bfv {
				c = prod
				continue
			}
			out := bgv.NewCiphertext(params, 1, prod.Level()-1)
			fail(eval.Rescale(prod, out))
			c = out
		}
	}
	chain()
	got := make([]uint64, slots)
	fail(ecd.Decode(dec.DecryptNew(c), got))
	wrong := 0.0
	for i := range got {
		if got[i] != want[i] {
			wrong = math.Max(wrong, math.Abs(float64(got[i])-float64(want[i])))
		}
	}
	chainTime := measure(chain, t.Repeat, t.MinSeconds)
	dnum := params.BaseRNSDecompositionVectorSize(params.MaxLevelQ(), params.MaxLevelP())
	result := map[string]interface{}{
		"library": "lattigo", "version": "v6.1.1", "scheme": t.Scheme,
		"used": map[string]interface{}{"N": params.N(), "logQ": t.Params.ModuliBits, "logP": t.Params.SpecialBits,
			"dnum": dnum, "t": tm, "logQP": math.Round(params.LogQP()), "security": "not enforced by Lattigo (logQP as for oboro)"},
		"notes": []string{"BFV: bgv.Evaluator in scale-invariant mode (no modulus switch); BGV: MulRelin + Rescale (modulus switch) per squaring;" +
			" results allocated inside the chain, as for CKKS"},
		"setup_seconds": setup, "times": map[string]timing{"chain": chainTime},
		"checks": map[string]float64{"chain": wrong}, "sizes": sizes, "peak_rss_bytes": peakRSS(),
	}
	fail(json.NewEncoder(os.Stdout).Encode(result))
}
