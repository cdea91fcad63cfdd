package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"proscenium/app/script"
)

func TestScreenplayCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "play.fountain")
	if err := os.WriteFile(path, []byte("INT. HALL\n\nThe clock strikes.\n\nANNA\nMidnight.\n\nBen: Already?"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := screenplay([]string{path}, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if out.String() != "<|speaker:0|>Midnight.\n<|speaker:1|>Already?\n" {
		t.Errorf("stdout %q", out.String())
	}
	if want := "2 speeches by 2 characters:\n  speaker 0  ANNA (1)\n  speaker 1  Ben (1)\nleft out: 1 scene headings, 1 action paragraphs\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}

	out.Reset()
	if err := screenplay([]string{"--narrate", "--json", "-"}, strings.NewReader("The clock strikes.\n\nBen: Already?"), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var sp script.Screenplay
	if err := json.Unmarshal(out.Bytes(), &sp); err != nil || sp.Lines != 2 || sp.Characters[0].Name != script.Narrator {
		t.Errorf("--json: %s (%v)", out.String(), err)
	}

	for _, args := range [][]string{{}, {"a", "b"}} {
		if err := screenplay(args, nil, &out, &errOut); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	if err := screenplay([]string{"-"}, strings.NewReader("Nothing said here."), &out, &errOut); err == nil || !strings.Contains(err.Error(), "found no dialogue") {
		t.Errorf("no dialogue: %v", err)
	}
	// Read only as far as the limit, and refused as larger than it.
	if err := screenplay([]string{"-"}, strings.NewReader(strings.Repeat("Ann: Hi.\n", 100_000)), &out, &errOut); err == nil || !strings.Contains(err.Error(), "larger than 512 KiB") {
		t.Errorf("a screenplay of 900 KiB: %v", err)
	}
}
