package drama3

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// checkpointFileNames are the names of a checkpoint directory's files.
var checkpointFileNames = []string{configFile, tokenizerFile, codecFile, "model.safetensors", "model.safetensors.index.json"}

// fileNameExceptions are the places besides engine/drama3 that may spell a
// checkpoint file name in a string, each with its reason. Test files and
// testdata are excepted as a whole: a test that fakes a directory (a FIFO
// named config.json, a cache snapshot) must name the files it fakes.
var fileNameExceptions = map[string]string{
	"engine/checkpoint/safetensors_index.go": "the safetensors format's own names (SafetensorsIndexName, SafetensorsSingleName)",
}

// Issue 33: the checkpoint's file names appear only in engine/drama3, which
// opens the directory once (Checkpoint); every other package asks it
// (LoadEngine, CodecPath, MissingFiles…). This test parses every Go file of
// the module and fails on a string literal that is a checkpoint file name or
// ends in one ("…/codec.pth"), outside engine/drama3, tests, testdata and
// the exceptions above. Help texts that mention a name in a sentence pass.
// Broken once: `filepath.Join(dir, "codec.pth")` back in app/model/references.go
// fails it, naming the file and line.
func TestCheckpointFileNamesOnlyInDrama3(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root %s: %v", root, err)
	}
	used := map[string]bool{}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case rel == "engine/drama3", d.Name() == "testdata", d.Name() == "node_modules",
				rel != "." && strings.HasPrefix(d.Name(), "."), rel == "out", rel == "build":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		files++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, name := range checkpointFileNames {
				if s == name || strings.HasSuffix(s, "/"+name) {
					if _, ok := fileNameExceptions[rel]; ok {
						used[rel] = true
						continue
					}
					t.Errorf("%s: %q: a checkpoint file name outside engine/drama3 (ask drama3: LoadEngine, CodecPath, MissingFiles…)", fset.Position(lit.Pos()), s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d Go files under %s: the walk missed the module", files, root)
	}
	for rel := range fileNameExceptions {
		if !used[rel] {
			t.Errorf("exception %s no longer needed: remove it", rel)
		}
	}
}
