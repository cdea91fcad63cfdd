package main

import (
	"bytes"
	"fmt"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// family is what one kernels/ source declares.
type family struct {
	source  string // base name: "gemv.cu"
	kernels []kernel
	defines []define
	pre     string // the preprocessed text
	// macroMade holds the entry points whose declarations a macro made.
	macroMade map[string]bool
}

// kernel is one extern "C" entry point.
type kernel struct {
	name   string
	params []param
}

// param is one C parameter (or struct field): its type as written, less
// qualifiers, and its name.
type param struct {
	ctype string // "float*", "int", "unsigned long long", "int32_t[16]"
	name  string
}

// define is an object-like #define with an integer value.
type define struct {
	name  string
	value int64
}

// systemHeaderStubs makes a directory holding an empty file for each
// <header> the kernel sources include: preprocessed against it, a source
// keeps its own macros and declarations and nothing of the toolkit's.
func systemHeaderStubs(dir string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.cu*"))
	if err != nil {
		return "", err
	}
	stubs, err := os.MkdirTemp("", "kernelgen")
	if err != nil {
		return "", err
	}
	inc := regexp.MustCompile(`(?m)^\s*#\s*include\s*<([^>]+)>`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return stubs, err
		}
		for _, m := range inc.FindAllSubmatch(b, -1) {
			p := filepath.Join(stubs, filepath.FromSlash(string(m[1])))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return stubs, err
			}
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				return stubs, err
			}
		}
	}
	return stubs, nil
}

var defineRE = regexp.MustCompile(`(?m)^\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)([ \t]|$)`)

const probeMarker = "__kernelgen_define__"

// readFamily preprocesses source (in dir) and reads its entry points, the
// integer #defines of the file itself and its structs.
func readFamily(dir, stubs, source string) (*family, error) {
	raw, err := os.ReadFile(filepath.Join(dir, source))
	if err != nil {
		return nil, err
	}
	text := stripComments(string(raw))
	var defNames []string
	for _, m := range defineRE.FindAllStringSubmatch(text, -1) {
		defNames = append(defNames, m[1])
	}
	// The probe includes the source, then names each of its defines in a
	// string (left alone) beside its expansion.
	var probe strings.Builder
	fmt.Fprintf(&probe, "#include \"%s\"\n", source)
	for _, d := range defNames {
		fmt.Fprintf(&probe, "%s \"%s\" %s ;\n", probeMarker, d, d)
	}
	cmd := exec.Command("g++", "-E", "-P", "-x", "c++", "-nostdinc", "-I", stubs, "-I", dir, "-")
	cmd.Stdin = strings.NewReader(probe.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pre, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("preprocess %s: %v\n%s", source, err, stderr.String())
	}
	f := &family{source: source, macroMade: map[string]bool{}}
	body, probes, _ := strings.Cut(string(pre), probeMarker)
	if probes != "" {
		probes = probeMarker + probes
	}
	if f.kernels, err = entryPoints(body); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	// A lone kernel's source spells out its name before its parameter list;
	// a macro pastes the name (gemv_bf16_t##TPR…) or takes it as an argument.
	for _, k := range f.kernels {
		if !regexp.MustCompile(`\b` + k.name + `\s*\(`).MatchString(text) {
			f.macroMade[k.name] = true
		}
	}
	if f.defines, err = integerDefines(probes); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	f.pre = body
	return f, nil
}

// stripComments removes // and /* */ comments outside string and character
// literals.
func stripComments(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return b.String()
			}
			b.WriteByte(' ')
			i += end + 4
		case s[i] == '"' || s[i] == '\'':
			q := s[i]
			b.WriteByte(q)
			i++
			for i < len(s) && s[i] != q {
				if s[i] == '\\' && i+1 < len(s) {
					b.WriteByte(s[i])
					i++
				}
				b.WriteByte(s[i])
				i++
			}
			if i < len(s) {
				b.WriteByte(q)
				i++
			}
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

var externRE = regexp.MustCompile(`extern\s+"C"`)

// entryPoints reads every extern "C" __global__ function of preprocessed
// text, in order.
func entryPoints(text string) ([]kernel, error) {
	var ks []kernel
	seen := map[string]bool{}
	for _, loc := range externRE.FindAllStringIndex(text, -1) {
		rest := text[loc[1]:]
		end := strings.IndexAny(rest, "{;")
		if end < 0 {
			return nil, fmt.Errorf("extern \"C\" without a body at %q", head(rest))
		}
		decl := rest[:end]
		if !regexp.MustCompile(`\b__global__\b`).MatchString(decl) {
			continue // a host or device helper with C linkage
		}
		// The parameter list is the last parenthesised group; the name is the
		// identifier before it (__launch_bounds__(…) comes earlier).
		decl = strings.TrimSpace(decl)
		if !strings.HasSuffix(decl, ")") {
			return nil, fmt.Errorf("cannot read the declaration %q", head(decl))
		}
		open := matchingOpen(decl, len(decl)-1)
		if open < 0 {
			return nil, fmt.Errorf("unbalanced parentheses in %q", head(decl))
		}
		before := strings.TrimSpace(decl[:open])
		name := regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)$`).FindString(before)
		if name == "" {
			return nil, fmt.Errorf("no kernel name in %q", head(decl))
		}
		if !regexp.MustCompile(`\bvoid\b`).MatchString(before) {
			return nil, fmt.Errorf("kernel %s does not return void", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("kernel %s declared twice", name)
		}
		seen[name] = true
		params, err := parseParams(decl[open+1 : len(decl)-1])
		if err != nil {
			return nil, fmt.Errorf("kernel %s: %w", name, err)
		}
		ks = append(ks, kernel{name: name, params: params})
	}
	return ks, nil
}

func head(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

func matchingOpen(s string, close int) int {
	depth := 0
	for i := close; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// qualifiers are dropped from a parameter's type: they do not change how
// the argument is passed.
var qualifiers = map[string]bool{"const": true, "volatile": true, "__restrict__": true, "__restrict": true, "restrict": true}

// parseParams splits a parameter list into types and names.
func parseParams(list string) ([]param, error) {
	list = strings.TrimSpace(list)
	if list == "" || list == "void" {
		return nil, nil
	}
	var ps []param
	for _, p := range strings.Split(list, ",") {
		q, err := parseDecl(p)
		if err != nil {
			return nil, err
		}
		ps = append(ps, q)
	}
	return ps, nil
}

var tokenRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*|\*|\[[^\]]*\]|\S`)

// parseDecl reads "const float* __restrict__ x" as {float*, x}, and
// "int32_t codes[16]" as {int32_t[16], codes}.
func parseDecl(s string) (param, error) {
	toks := tokenRE.FindAllString(s, -1)
	var words []string
	stars, array := 0, ""
	for _, t := range toks {
		switch {
		case qualifiers[t]:
		case t == "*":
			stars++
		case strings.HasPrefix(t, "["):
			array += t
		case regexp.MustCompile(`^[A-Za-z_]`).MatchString(t):
			words = append(words, t)
		default:
			return param{}, fmt.Errorf("cannot read the parameter %q", strings.TrimSpace(s))
		}
	}
	if len(words) < 2 {
		return param{}, fmt.Errorf("parameter %q has no name", strings.TrimSpace(s))
	}
	name := words[len(words)-1]
	ctype := strings.Join(words[:len(words)-1], " ") + strings.Repeat("*", stars) + array
	return param{ctype: ctype, name: name}, nil
}

// integerDefines evaluates the probe lines: `marker "NAME" expansion ;`.
// Defines that are not integer constants (function-like helpers, floats)
// are left out.
func integerDefines(probes string) ([]define, error) {
	var ds []define
	for _, line := range strings.Split(probes, probeMarker) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		line = strings.TrimSuffix(line, ";")
		name, expr, ok := strings.Cut(line[1:], "\"")
		if !ok {
			return nil, fmt.Errorf("cannot read the probe %q", line)
		}
		v, ok := evalInteger(expr)
		if !ok {
			continue
		}
		ds = append(ds, define{name: name, value: v})
	}
	return ds, nil
}

var intSuffixRE = regexp.MustCompile(`\b(0[xX][0-9a-fA-F]+|[0-9]+)([uUlL]+)\b`)

// evalInteger evaluates a C integer constant expression with Go's constant
// arithmetic (the same for the + - * / % << >> & | ^ ~ and parentheses the
// kernels use; C's ~ is Go's ^).
func evalInteger(expr string) (int64, bool) {
	expr = strings.TrimSpace(intSuffixRE.ReplaceAllString(expr, "$1"))
	if expr == "" || strings.ContainsAny(expr, "~?.") {
		return 0, false
	}
	tv, err := types.Eval(token.NewFileSet(), nil, token.NoPos, expr)
	if err != nil || tv.Value == nil {
		return 0, false
	}
	if !types.Identical(tv.Type, types.Typ[types.UntypedInt]) && !types.Identical(tv.Type, types.Typ[types.UntypedRune]) {
		return 0, false
	}
	v, ok := int64Value(tv.Value.ExactString())
	return v, ok
}

func int64Value(s string) (int64, bool) {
	var v int64
	_, err := fmt.Sscan(s, &v)
	return v, err == nil
}

// structFields reads struct name's definition in the preprocessed source as
// a field list.
func (f *family) structFields(name string) ([]param, error) {
	m := regexp.MustCompile(`struct\s+` + name + `\s*\{`).FindStringIndex(f.pre)
	if m == nil {
		return nil, fmt.Errorf("%s: no struct %s", f.source, name)
	}
	body := f.pre[m[1]:]
	end := strings.Index(body, "}")
	if end < 0 {
		return nil, fmt.Errorf("%s: struct %s has no end", f.source, name)
	}
	var fields []param
	for _, stmt := range strings.Split(body[:end], ";") {
		stmt = strings.TrimSpace(stmt)
		if stmt == "" {
			continue
		}
		// "uint32_t seed_lo, seed_hi" declares two fields of one type.
		parts := strings.Split(stmt, ",")
		first, err := parseDecl(parts[0])
		if err != nil {
			return nil, fmt.Errorf("%s: struct %s: %w", f.source, name, err)
		}
		fields = append(fields, first)
		base := strings.TrimRight(regexp.MustCompile(`\[[^\]]*\]`).ReplaceAllString(first.ctype, ""), "*")
		for _, p := range parts[1:] {
			q, err := parseDecl(base + " " + p)
			if err != nil {
				return nil, fmt.Errorf("%s: struct %s: %w", f.source, name, err)
			}
			fields = append(fields, q)
		}
	}
	return fields, nil
}
