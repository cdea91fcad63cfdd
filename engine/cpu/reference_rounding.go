package cpu

import (
	"math/rand/v2"
	"reflect"
)

// RoundingNoise is the relative size of the perturbation Rounded applies:
// about half a float32 ulp, what one rounding step changes.
const RoundingNoise = 6e-8

// Rounded returns a deep copy of the weight tree w (structs of exported
// fields, pointers and slices down to []float32) with every weight x
// replaced by the float32 nearest x·(1 + RoundingNoise·N(0,1)), the product
// taken in float64 and the normal drawn from seed: many weights move by a
// float32 step or two, many (those the noise moves by less than half a
// step) not at all, as a different rounding leaves them. Other kinds of
// values (maps, interfaces, other element types) are not weights of this
// package's trees; Rounded panics naming them.
//
// A backend that sums in another order than this package differs from it by
// float32 rounding alone. This package run on Rounded weights shows how far
// such differences move its own outputs: rows that move by more than a
// comparison's tolerance are ill-conditioned, and takes that change are
// near-ties. It is the baseline the GPU backend is held against (engine/cuda
// tests, proscenium-gpu debug-take).
func Rounded[T any](w *T, seed uint64) *T {
	r := rand.New(rand.NewPCG(seed, 0x726f756e64))
	return rounded(reflect.ValueOf(w).Elem(), r).Addr().Interface().(*T)
}

func rounded(v reflect.Value, r *rand.Rand) reflect.Value {
	out := reflect.New(v.Type()).Elem()
	switch {
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Float32:
		if v.IsNil() {
			return out
		}
		src := v.Interface().([]float32)
		dst := make([]float32, len(src))
		for i, x := range src {
			dst[i] = float32(float64(x) * (1 + r.NormFloat64()*RoundingNoise))
		}
		out.Set(reflect.ValueOf(dst))
	case v.Kind() == reflect.Slice:
		if v.IsNil() {
			return out
		}
		out.Set(reflect.MakeSlice(v.Type(), v.Len(), v.Len()))
		for i := 0; i < v.Len(); i++ {
			out.Index(i).Set(rounded(v.Index(i), r))
		}
	case v.Kind() == reflect.Pointer:
		if !v.IsNil() {
			out.Set(rounded(v.Elem(), r).Addr())
		}
	case v.Kind() == reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !out.Field(i).CanSet() {
				panic("cpu.Rounded: unexported field " + v.Type().Field(i).Name + " of " + v.Type().String())
			}
			out.Field(i).Set(rounded(v.Field(i), r))
		}
	case v.Kind() == reflect.Map || v.Kind() == reflect.Interface || v.Kind() == reflect.Array ||
		v.Kind() == reflect.Func || v.Kind() == reflect.Chan:
		panic("cpu.Rounded: a " + v.Type().String() + " in a weight tree")
	default:
		out.Set(v) // numbers, strings: configuration, copied as they are
	}
	return out
}
