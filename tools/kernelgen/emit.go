package main

import (
	"bytes"
	"fmt"
	"go/format"
	"regexp"
	"strings"
)

// structParams is the parameter count from which a launch function takes
// the kernel's parameters as a struct.
const structParams = 15

// goType is how a C parameter type is passed: its Go type and the
// expression that puts a Go value v into the argument's 8-byte slot (the
// kernel reads as many bytes as the parameter's size, little-endian).
type goType struct{ typ, slot string }

var scalarTypes = map[string]goType{
	"int":                {"int", "uint64(uint32(int32(%s)))"},
	"int32_t":            {"int", "uint64(uint32(int32(%s)))"},
	"unsigned":           {"uint32", "uint64(%s)"},
	"unsigned int":       {"uint32", "uint64(%s)"},
	"uint32_t":           {"uint32", "uint64(%s)"},
	"long":               {"int64", "uint64(%s)"}, // LP64: the host's and the device's long are 64 bits
	"long long":          {"int64", "uint64(%s)"},
	"long int":           {"int64", "uint64(%s)"},
	"long long int":      {"int64", "uint64(%s)"},
	"int64_t":            {"int64", "uint64(%s)"},
	"unsigned long":      {"uint64", "%s"},
	"unsigned long long": {"uint64", "%s"},
	"uint64_t":           {"uint64", "%s"},
	"size_t":             {"uint64", "%s"},
	"float":              {"float32", "uint64(math.Float32bits(%s))"},
	"double":             {"float64", "math.Float64bits(%s)"},
}

func paramGoType(ctype string) (goType, error) {
	if strings.HasSuffix(ctype, "*") {
		return goType{"Ptr", "uint64(%s)"}, nil
	}
	if t, ok := scalarTypes[ctype]; ok {
		return t, nil
	}
	return goType{}, fmt.Errorf("parameter type %q has no Go binding (pass a pointer, or add it to tools/kernelgen's scalarTypes)", ctype)
}

// acronyms are written in capitals in Go names.
var acronyms = map[string]bool{
	"bf16": true, "fp8": true, "fp16": true, "f32": true, "f64": true, "i32": true, "rvq": true,
	"kv": true, "zc": true, "eh": true,
}

// words are written as the model's papers write them.
var words = map[string]string{
	"rmsnorm": "RMSNorm", "swiglu": "SwiGLU", "deltanet": "DeltaNet", "layernorm": "LayerNorm", "moe": "MoE",
}

var acronymPrefixRE = regexp.MustCompile(`^[a-z]+[0-9]+`)

// exported turns snake_case (or SCREAMING_CASE) into an exported Go name.
func exported(s string) string {
	var b strings.Builder
	for _, t := range strings.Split(s, "_") {
		if t == "" {
			continue
		}
		if t == strings.ToUpper(t) {
			t = strings.ToLower(t)
		}
		if acronyms[t] {
			b.WriteString(strings.ToUpper(t))
			continue
		}
		if w, ok := words[t]; ok {
			b.WriteString(w)
			continue
		}
		if m := acronymPrefixRE.FindString(t); m != "" && acronyms[m] {
			// "bf16d": an acronym ending in a digit, then a letter.
			b.WriteString(strings.ToUpper(m) + t[len(m):])
			continue
		}
		b.WriteString(strings.ToUpper(t[:1]) + t[1:])
	}
	return b.String()
}

// unexported is exported with its first word in lower case.
func unexported(s string) string {
	e := exported(s)
	if e == "" {
		return e
	}
	// The leading capitals of an acronym go down together ("BF16x" → "bf16x").
	i := 1
	for i < len(e) && e[i] >= 'A' && e[i] <= 'Z' && (i+1 == len(e) || !(e[i+1] >= 'a' && e[i+1] <= 'z')) {
		i++
	}
	return strings.ToLower(e[:i]) + e[i:]
}

// reserved are the names a launch function's own parameters and body use,
// and Go's keywords: a C parameter named so gets a suffix.
var reserved = map[string]bool{
	"q": true, "k": true, "grid": true, "block": true, "a": true, "math": true, "policy": true, "name": true,
	"break": true, "case": true, "chan": true, "const": true, "continue": true, "default": true,
	"defer": true, "else": true, "fallthrough": true, "for": true, "func": true, "go": true,
	"goto": true, "if": true, "import": true, "interface": true, "map": true, "package": true,
	"range": true, "return": true, "select": true, "struct": true, "switch": true, "type": true, "var": true,
}

// group is one launch function: a lone entry point, a numerics policy
// family (name and name_fast with one signature: kernels/numerics.cuh
// NUMERICS_KERNEL), or the instances a macro made with one signature (names
// that differ in the last '_' token).
type group struct {
	goName    string   // the launch function
	instances []string // nil for a lone entry point or a policy family
	policy    bool     // kernel.name is the Exact instance, kernel.name+"_fast" the Fast one
	kernel             // the (shared) signature; name is the lone entry point's
}

// fastSuffix names a policy family's Fast instance (NUMERICS_KERNEL).
const fastSuffix = "_fast"

// groups sorts f's entry points into launch functions, in source order.
func (f *family) groups() ([]*group, error) {
	byKey := map[string]*group{}
	var gs []*group
	sigs := map[string]string{}
	for _, k := range f.kernels {
		sigs[k.name] = signature(k.params)
	}
	for _, k := range f.kernels {
		if base, ok := strings.CutSuffix(k.name, fastSuffix); ok && sigs[base] == sigs[k.name] {
			continue // with its Exact instance
		}
		if sig, ok := sigs[k.name+fastSuffix]; ok {
			if sig != sigs[k.name] {
				return nil, fmt.Errorf("%s: %s and %s%s differ in signature: a policy family's instances take the same parameters",
					f.source, k.name, k.name, fastSuffix)
			}
			gs = append(gs, &group{goName: exported(k.name), policy: true, kernel: k})
			continue
		}
		if !f.macroMade[k.name] {
			gs = append(gs, &group{goName: exported(k.name), kernel: k})
			continue
		}
		prefix := k.name
		if i := strings.LastIndex(k.name, "_"); i > 0 {
			prefix = k.name[:i]
		}
		key := prefix + "|" + signature(k.params)
		g, ok := byKey[key]
		if !ok {
			g = &group{kernel: kernel{name: prefix, params: k.params}}
			byKey[key] = g
			gs = append(gs, g)
		}
		g.instances = append(g.instances, k.name)
	}
	taken := map[string]bool{}
	for _, g := range gs {
		if taken[g.goName] {
			return nil, fmt.Errorf("%s: two entry points take the Go name %s", f.source, g.goName)
		}
		if g.instances == nil {
			taken[g.goName] = true
		}
	}
	for _, g := range gs {
		if g.instances == nil {
			continue
		}
		if len(g.instances) == 1 {
			// A macro made one entry point of this shape: a lone one.
			g.goName, g.kernel.name, g.instances = exported(g.instances[0]), g.instances[0], nil
			taken[g.goName] = true
			continue
		}
		g.goName = exported(g.kernel.name)
		if taken[g.goName] {
			// gemm_bf16_tc16, gemm_bf16_tc32 beside gemm_bf16: name the group
			// by the instances' longest common prefix.
			g.goName = exported(strings.TrimRight(commonPrefix(g.instances), "_"))
		}
		if taken[g.goName] {
			return nil, fmt.Errorf("%s: the instances %s would take the Go name %s another kernel has", f.source,
				strings.Join(g.instances, ", "), g.goName)
		}
		taken[g.goName] = true
	}
	return gs, nil
}

func signature(ps []param) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.ctype+" "+p.name)
	}
	return strings.Join(s, ", ")
}

func commonPrefix(names []string) string {
	p := names[0]
	for _, n := range names[1:] {
		for !strings.HasPrefix(n, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// goName is the binding file of the family: gemv.cu → gemv.go, a header
// deltanet.cuh → deltanet_cuh.go.
func (f *family) goName() string {
	if strings.HasSuffix(f.source, ".cuh") {
		return strings.TrimSuffix(f.source, ".cuh") + "_cuh.go"
	}
	return strings.TrimSuffix(f.source, ".cu") + ".go"
}

// identifiers lists the package-level Go names the family's file declares.
func (f *family) identifiers() []string {
	var ids []string
	gs, _ := f.groups()
	for _, g := range gs {
		ids = append(ids, g.goName)
		if g.instances != nil {
			ids = append(ids, g.goName+"Kernel", g.goName+"Kernels")
			for _, in := range g.instances {
				ids = append(ids, exported(in))
			}
		}
		if len(g.params) >= structParams {
			ids = append(ids, g.goName+"Args")
		}
	}
	for _, d := range f.defines {
		ids = append(ids, exported(d.name))
	}
	return ids
}

// goParam is a C parameter as the launch function takes it.
type goParam struct {
	name, field string // Go parameter name; struct field name
	goType
	c param
}

func goParams(ps []param) ([]goParam, error) {
	var out []goParam
	used := map[string]bool{}
	for _, p := range ps {
		t, err := paramGoType(p.ctype)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", p.name, err)
		}
		name := unexported(p.name)
		if reserved[name] || used[name] {
			name += "Arg"
		}
		if used[name] {
			return nil, fmt.Errorf("parameters %s: two map to the Go name %s", p.name, name)
		}
		used[name] = true
		out = append(out, goParam{name: name, field: exported(p.name), goType: t, c: p})
	}
	fields := map[string]bool{}
	for _, p := range out {
		if fields[p.field] {
			return nil, fmt.Errorf("two parameters map to the field name %s", p.field)
		}
		fields[p.field] = true
	}
	return out, nil
}

func cSignature(name string, ps []param) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.ctype+" "+p.name)
	}
	return name + "(" + strings.Join(s, ", ") + ")"
}

// goFile renders the family's binding file.
func (f *family) goFile() ([]byte, error) {
	gs, err := f.groups()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s%s by `go generate ./engine/cuda/kernel`; DO NOT EDIT.\n\n", generatedHeader, f.source)
	b.WriteString("package kernel\n\n")
	var body bytes.Buffer
	usesMath := false
	if len(f.defines) > 0 {
		fmt.Fprintf(&body, "// The integer #defines of kernels/%s.\nconst (\n", f.source)
		for _, d := range f.defines {
			fmt.Fprintf(&body, "\t%s = %d // %s\n", exported(d.name), d.value, d.name)
		}
		body.WriteString(")\n\n")
	}
	for _, g := range gs {
		ps, err := goParams(g.params)
		if err != nil {
			return nil, fmt.Errorf("%s: kernel %s: %w", f.source, g.kernel.name, err)
		}
		for _, p := range ps {
			usesMath = usesMath || strings.Contains(p.slot, "math.")
		}
		writeLaunch(&body, f.source, g, ps)
	}
	if usesMath {
		b.WriteString("import \"math\"\n\n")
	}
	b.Write(body.Bytes())
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s: gofmt of the generated file: %w\n%s", f.source, err, b.String())
	}
	return out, nil
}

func writeLaunch(b *bytes.Buffer, source string, g *group, ps []goParam) {
	useStruct := len(ps) >= structParams
	nameArg := fmt.Sprintf("%q", g.kernel.name)
	if g.instances != nil {
		kt := g.goName + "Kernel"
		fmt.Fprintf(b, "// %s is one of the %s_* instances of kernels/%s, which share one signature.\ntype %s string\n\n",
			kt, g.kernel.name, source, kt)
		fmt.Fprintf(b, "// The %s instances.\nconst (\n", g.kernel.name)
		for _, in := range g.instances {
			fmt.Fprintf(b, "\t%s %s = %q\n", exported(in), kt, in)
		}
		b.WriteString(")\n\n")
		fmt.Fprintf(b, "// %sKernels lists the %s instances in source order.\nvar %sKernels = []%s{", g.goName, g.kernel.name, g.goName, kt)
		for i, in := range g.instances {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(exported(in))
		}
		b.WriteString("}\n\n")
		nameArg = "string(k)"
	}
	if useStruct {
		fmt.Fprintf(b, "// %sArgs are the parameters of %s.\ntype %sArgs struct {\n", g.goName, displayName(g), g.goName)
		for _, p := range ps {
			fmt.Fprintf(b, "\t%s %s // %s %s\n", p.field, p.typ, p.c.ctype, p.c.name)
		}
		b.WriteString("}\n\n")
	}
	fmt.Fprintf(b, "// %s enqueues kernels/%s's\n//\n//\t%s\n//\n// on q with grid blocks of block threads.\n", g.goName, source,
		cSignature(displayName(g), g.params))
	if g.policy {
		fmt.Fprintf(b, "// policy picks the instance: %s (Exact) or %s%s (Fast).\n", g.kernel.name, g.kernel.name, fastSuffix)
	}
	fmt.Fprintf(b, "func %s(q Launcher, ", g.goName)
	if g.instances != nil {
		fmt.Fprintf(b, "k %sKernel, ", g.goName)
	}
	if g.policy {
		b.WriteString("policy Policy, ")
	}
	b.WriteString("grid [3]int, block int")
	if useStruct {
		fmt.Fprintf(b, ", a %sArgs", g.goName)
	} else {
		for i, p := range ps {
			if i == 0 || ps[i-1].typ != p.typ {
				b.WriteString(", ")
				b.WriteString(p.name)
			} else {
				b.WriteString(", " + p.name)
			}
			if i+1 == len(ps) || ps[i+1].typ != p.typ {
				b.WriteString(" " + p.typ)
			}
		}
	}
	b.WriteString(") error {\n")
	if g.policy {
		fmt.Fprintf(b, "\tname := %q\n\tif policy == Fast {\n\t\tname = %q\n\t}\n", g.kernel.name, g.kernel.name+fastSuffix)
		nameArg = "name"
	}
	fmt.Fprintf(b, "\treturn q.Launch(%s, grid, block", nameArg)
	for _, p := range ps {
		v := p.name
		if useStruct {
			v = "a." + p.field
		}
		b.WriteString(", " + fmt.Sprintf(p.slot, v))
	}
	b.WriteString(")\n}\n\n")
}

func displayName(g *group) string {
	if g.instances != nil {
		return g.kernel.name + "_*"
	}
	return g.kernel.name
}

// entriesFile lists every entry point by module (the .cu file's base name),
// for the device to check a kernel build against when it opens.
func entriesFile(fs []*family) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s*.cu by `go generate ./engine/cuda/kernel`; DO NOT EDIT.\n\n", generatedHeader)
	b.WriteString("package kernel\n\n")
	b.WriteString("// EntryPoints lists each module's extern \"C\" entry points (module: the\n")
	b.WriteString("// kernels/*.cu file's base name), in source order.\n")
	b.WriteString("var EntryPoints = map[string][]string{\n")
	for _, f := range fs {
		fmt.Fprintf(&b, "\t%q: {", strings.TrimSuffix(f.source, ".cu"))
		for i, k := range f.kernels {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", k.name)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

// frameControlFile renders struct FrameControl (frame_control.cuh) as the
// word offsets of its fields and the header's integer defines, in package
// cuda. Every field must be 32-bit words (scalars or arrays of them), so that
// the block is a []uint32 on the host.
func frameControlFile(f *family) ([]byte, error) {
	fields, err := f.structFields("FrameControl")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s%s by `go generate ./engine/cuda/kernel`; DO NOT EDIT.\n\n", generatedHeader, f.source)
	b.WriteString("package cuda\n\n")
	b.WriteString("// Word offsets of struct FrameControl's fields (kernels/frame_control.cuh):\n")
	b.WriteString("// every field is 32-bit, so the block is a []uint32 on the host.\nconst (\n")
	word := int64(0)
	arrayRE := regexp.MustCompile(`^([A-Za-z_0-9 ]+?)((?:\[[^\]]*\])*)$`)
	for _, fl := range fields {
		m := arrayRE.FindStringSubmatch(fl.ctype)
		if m == nil {
			return nil, fmt.Errorf("%s: FrameControl.%s: cannot read type %q", f.source, fl.name, fl.ctype)
		}
		switch m[1] {
		case "uint32_t", "int32_t", "float", "int", "unsigned":
		default:
			return nil, fmt.Errorf("%s: FrameControl.%s is %s, not a 32-bit word", f.source, fl.name, fl.ctype)
		}
		n := int64(1)
		for _, dim := range regexp.MustCompile(`\[([^\]]*)\]`).FindAllStringSubmatch(m[2], -1) {
			v, ok := evalInteger(dim[1])
			if !ok {
				return nil, fmt.Errorf("%s: FrameControl.%s: array length %q is not an integer constant", f.source, fl.name, dim[1])
			}
			n *= v
		}
		fmt.Fprintf(&b, "\tfc%s = %d // %s %s\n", exported(fl.name), word, fl.ctype, fl.name)
		word += n
	}
	fmt.Fprintf(&b, "\tframeCtrlWords = %d // sizeof(FrameControl) / 4\n)\n\n", word)
	if len(f.defines) > 0 {
		b.WriteString("// The integer #defines of kernels/frame_control.cuh.\nconst (\n")
		for _, d := range f.defines {
			fmt.Fprintf(&b, "\t%s = %d // %s\n", unexported(d.name), d.value, d.name)
		}
		b.WriteString(")\n")
	}
	return format.Source(b.Bytes())
}
