package drama3

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"proscenium/engine/checkpoint"
	"proscenium/engine/demo"
)

// hostileDir is a checkpoint directory whose files are what setup makes
// them: a valid tiny config, one shard of one tensor, the demo codec and no
// tokenizer unless setup adds one.
func hostileDir(t *testing.T, setup func(dir string)) string {
	t.Helper()
	dir := t.TempDir()
	cfg := TinyConfig()
	cfg.Text.VocabSize = 1024
	js, err := MarshalConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, configFile), js, 0o644)
	os.WriteFile(filepath.Join(dir, codecFile), demo.CodecPTH, 0o644)
	if err := checkpoint.WriteSafetensors(filepath.Join(dir, checkpoint.SafetensorsSingleName),
		[]*checkpoint.Tensor{checkpoint.Float32Tensor("x", []int{1}, []float32{1})}, nil); err != nil {
		t.Fatal(err)
	}
	setup(dir)
	return dir
}

// replace puts a FIFO, a symlink or a file of secrets where a checkpoint
// file was.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	os.Remove(path)
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// secret is a file the checkpoint readers must not quote: its first eight
// bytes are what a safetensors reader takes for the header length.
const secret = "hunter2-password=AKIAIOSFODNN7EXAMPLE\n"

func secretFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secrets.txt")
	os.WriteFile(p, []byte(secret), 0o600)
	return p
}

// Issue 32 item 6: config.json as a FIFO or as /dev/zero, the tokenizer as
// a FIFO, and a shard or an index symlinked to a file of secrets are
// refused at once (no read waits for a writer), by name, with no byte of
// the file in the error (the header-size error used to print the secret's
// first eight bytes as a number; a FIFO config hung inspect and every load). Each reader reached
// from Inspect (the studio's InspectModel) and LoadEngine (synth, the
// studio's load) is tried. Breaking it: os.ReadFile back in LoadConfig
// hangs the FIFO case and the /dev/zero case exhausts memory; printing n
// again in parseSafetensorsHeader fails the shard case.
func TestHostileCheckpointFiles(t *testing.T) {
	first8 := strconv.FormatUint(binary.LittleEndian.Uint64([]byte(secret)), 10)
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"config.json a FIFO", func(t *testing.T, dir string) { mkfifo(t, filepath.Join(dir, configFile)) }, "config.json: not a regular file (a named pipe)"},
		{"config.json a symlink to /dev/zero", func(t *testing.T, dir string) { symlink(t, "/dev/zero", filepath.Join(dir, configFile)) }, "config.json: not a regular file (a character device)"},
		{"config.json a symlink to secrets", func(t *testing.T, dir string) { symlink(t, secretFile(t), filepath.Join(dir, configFile)) }, "config.json: not a JSON object: not valid JSON (at byte 1)"},
		{"config.json too large", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, configFile), make([]byte, MaxConfigBytes+1), 0o644)
		}, "config.json: file too large: 1048577 bytes, the limit is 1048576"},
		{"shard a symlink to secrets", func(t *testing.T, dir string) {
			symlink(t, secretFile(t), filepath.Join(dir, checkpoint.SafetensorsSingleName))
		}, "model.safetensors: not a safetensors file: its header length is over the"},
		{"shard a FIFO", func(t *testing.T, dir string) { mkfifo(t, filepath.Join(dir, checkpoint.SafetensorsSingleName)) }, "model.safetensors: not a regular file (a named pipe)"},
		{"index a symlink to secrets", func(t *testing.T, dir string) {
			symlink(t, secretFile(t), filepath.Join(dir, checkpoint.SafetensorsIndexName))
		}, "model.safetensors.index.json: not valid JSON (at byte 1)"},
		{"index a FIFO", func(t *testing.T, dir string) { mkfifo(t, filepath.Join(dir, checkpoint.SafetensorsIndexName)) }, "model.safetensors.index.json: not a regular file (a named pipe)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := hostileDir(t, func(dir string) { c.setup(t, dir) })
			// A hang (what a FIFO config did) never answers; a loaded
			// machine under -race answers in a second or two. The time is
			// logged, not held to a bound (no timing assertions in tests).
			var inspectErr, loadErr error
			start := time.Now()
			answered := make(chan struct{})
			go func() {
				defer close(answered)
				_, inspectErr = Inspect(dir, 64)
				_, loadErr = LoadEngine(dir)
			}()
			select {
			case <-answered:
				t.Logf("answered after %v", time.Since(start))
			case <-time.After(time.Minute):
				t.Fatal("no answer after a minute: the read hangs")
			}
			for _, err := range []error{inspectErr, loadErr} {
				if err == nil {
					t.Fatal("no error")
				}
				msg := err.Error()
				if strings.Contains(msg, first8) || strings.Contains(msg, "hunter") || strings.Contains(msg, "AKIA") || strings.Contains(msg, "'h'") {
					t.Errorf("error quotes the file: %s", msg)
				}
			}
			if !strings.Contains(inspectErr.Error(), c.want) {
				t.Errorf("inspect: %v, want %q", inspectErr, c.want)
			}
		})
	}
	t.Run("tokenizer.json and codec.pth FIFOs", func(t *testing.T) {
		dir := hostileDir(t, func(dir string) {
			mkfifo(t, filepath.Join(dir, tokenizerFile))
			mkfifo(t, filepath.Join(dir, codecFile))
		})
		if _, err := LoadTokenizer(dir); err == nil || !strings.Contains(err.Error(), "tokenizer.json: not a regular file (a named pipe)") {
			t.Errorf("LoadTokenizer: %v", err)
		}
		if _, err := UsesDemoCodec(dir); err == nil || !strings.Contains(err.Error(), "codec.pth: not a regular file (a named pipe)") {
			t.Errorf("UsesDemoCodec: %v", err)
		}
		if _, err := ReadModelCodecEncoder(dir, CodecOptions{}); err == nil || !strings.Contains(err.Error(), "codec.pth: not a regular file (a named pipe)") {
			t.Errorf("ReadModelCodecEncoder: %v", err)
		}
	})
}

// MissingFiles lists the tokenizer, the codec and the shards of the index,
// counting a dangling link or a FIFO as missing.
func TestMissingFiles(t *testing.T) {
	dir := hostileDir(t, func(dir string) {
		mkfifo(t, filepath.Join(dir, codecFile))
	})
	if got := strings.Join(MissingFiles(dir), ","); got != "tokenizer.json,codec.pth" {
		t.Errorf("missing %s", got)
	}
	os.Remove(filepath.Join(dir, checkpoint.SafetensorsSingleName))
	if got := strings.Join(MissingFiles(dir), ","); got != "tokenizer.json,codec.pth,model.safetensors" {
		t.Errorf("missing %s", got)
	}
	os.WriteFile(filepath.Join(dir, checkpoint.SafetensorsIndexName), []byte(`{"weight_map":{"a":"s1.safetensors","b":"s2.safetensors"}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "s1.safetensors"), nil, 0o644)
	symlink(t, filepath.Join(dir, "gone"), filepath.Join(dir, "s2.safetensors"))
	if got := strings.Join(MissingFiles(dir), ","); got != "tokenizer.json,codec.pth,s2.safetensors" {
		t.Errorf("missing %s", got)
	}
	os.WriteFile(filepath.Join(dir, checkpoint.SafetensorsIndexName), []byte(`{`), 0o644)
	if got := strings.Join(MissingFiles(dir), ","); got != "model.safetensors.index.json (unreadable),tokenizer.json,codec.pth" {
		t.Errorf("missing %s", got)
	}
}

// A wrong --model (no such folder, a file, a folder without config.json)
// is said as such by every opener, not as the first file a reader misses
// ("stat DIR/tokenizer.json: no such file or directory"), and still
// matches fs.ErrNotExist where something is absent.
func TestCheckDir(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "take.wav")
	os.WriteFile(file, []byte("RIFF"), 0o644)
	empty := filepath.Join(root, "empty")
	os.Mkdir(empty, 0o755)
	cases := []struct {
		dir, want string
		notExist  bool
	}{
		{filepath.Join(root, "absent"), filepath.Join(root, "absent") + ": no such folder", true},
		{file, file + " is a file, not a checkpoint folder (give the folder that holds config.json)", false},
		{empty, empty + " is not a Drama 3 checkpoint folder: it has no config.json", true},
	}
	for _, c := range cases {
		_, inspectErr := Inspect(c.dir, 64)
		_, openErr := Open(c.dir)
		_, engineErr := LoadEngine(c.dir)
		_, tokErr := LoadTokenizer(c.dir)
		for i, err := range []error{checkDir(c.dir), inspectErr, openErr, engineErr, tokErr} {
			if err == nil || err.Error() != c.want || errors.Is(err, fs.ErrNotExist) != c.notExist {
				t.Errorf("%s, opener %d: %v, want %q (not exist: %v)", c.dir, i, err, c.want, c.notExist)
			}
		}
	}
	// A folder with a config (complete or not) is the readers' to judge.
	dir := hostileDir(t, func(string) {})
	if err := checkDir(dir); err != nil {
		t.Errorf("a folder with config.json: %v", err)
	}
	if _, err := LoadEngine(dir); err == nil || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Errorf("without a tokenizer: %v, want the tokenizer named", err)
	}
}
