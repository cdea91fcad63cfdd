//go:build cuda

package kernels

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed build/*.fatbin build/buildinfo.txt
var build embed.FS

// Modules lists the embedded kernel modules, one per kernels/*.cu file (the
// base name: "gemv", "norms", …), sorted.
func Modules() []string {
	entries, _ := fs.ReadDir(build, "build")
	var names []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, ".fatbin") && !strings.HasSuffix(n, "_sm90a.fatbin") {
			names = append(names, strings.TrimSuffix(n, ".fatbin"))
		}
	}
	sort.Strings(names)
	return names
}

// Generic returns the fatbin of source module (the .cu file's base name) that
// runs on every supported architecture, or nil if there is no such module.
func Generic(module string) []byte { return read(module + ".fatbin") }

// SM90a returns the sm_90a-only fatbin of module, or nil when the nvcc that
// built the kernels could not build one.
func SM90a(module string) []byte { return read(module + "_sm90a.fatbin") }

// BuildInfo is the nvcc release and the variants built, as `make kernels` wrote them.
func BuildInfo() string {
	b, _ := build.ReadFile("build/buildinfo.txt")
	return strings.TrimSpace(string(b))
}

func read(name string) []byte {
	b, err := build.ReadFile("build/" + name)
	if err != nil {
		return nil
	}
	return b
}
