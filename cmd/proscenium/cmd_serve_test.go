package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/adrg/xdg"
)

// Command-line mistakes are usage errors (exit 2) that say what is wrong,
// and a model folder that is wrong or has no readable config stops serve
// before it listens.
func TestServeRefusesBadCommandLines(t *testing.T) {
	cases := []struct {
		args  []string
		usage bool
		says  string
	}{
		{nil, true, "nothing to serve"},
		{[]string{"--ui", "--port", "70000"}, true, "not a TCP port"},
		{[]string{"--ui", "extra"}, true, `unexpected argument "extra"`},
		{[]string{"--ui", "--log-format", "xml"}, true, "--log-format"},
		{[]string{"--ui", "--api-key", "short"}, true, "at least 8 characters"},
		{[]string{"--ui", "--api-key", "has a space"}, true, "--api-key"},
		{[]string{"--ui", "--allow-origin", "evil.example"}, true, "is not an origin"},
		{[]string{"--ui", "--allow-origin", "https://evil.example/path"}, true, "is not an origin"},
		{[]string{"--model", t.TempDir() + "/absent", "--settings", ""}, false, "absent: no such folder"},
		{[]string{"--model", t.TempDir(), "--settings", ""}, false, "is not a Drama 3 checkpoint folder: it has no config.json"},
		{[]string{"--model", configOnly(t), "--settings", ""}, false, "config.json: model_type: missing"},
	}
	for _, c := range cases {
		err := runServe(c.args)
		if err == nil || errors.Is(err, errUsage) != c.usage || !strings.Contains(err.Error(), c.says) {
			t.Errorf("serve %q: %v (usage error: %v), want one containing %q (usage error: %v)",
				c.args, err, errors.Is(err, errUsage), c.says, c.usage)
		}
	}
}

// configOnly is a folder with a config.json and nothing else: a checkpoint
// whose readers name what it lacks.
func configOnly(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// serveInProcess runs `proscenium serve ARGS` in this process and returns
// its base URL and a function that stops it (SIGINT, as Ctrl-C) and returns
// its error.
func serveInProcess(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	// SIGINT never ends the test process: TestMain holds it.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	done := make(chan error, 1)
	go func() { done <- runServe(append([]string{"--port", "0", "--settings", ""}, args...)) }()
	// stop ends serve (SIGINT, as Ctrl-C) once, also when the test ends
	// early; os.Stdout goes back only once serve has returned: it prints
	// more lines after the first, and swapping it under them is a data race.
	var once sync.Once
	var stopErr error
	stop := func() error {
		once.Do(func() {
			syscall.Kill(os.Getpid(), syscall.SIGINT)
			select {
			case stopErr = <-done:
				os.Stdout = stdout
			case <-time.After(10 * time.Second):
				stopErr = errors.New("serve did not stop on SIGINT")
			}
			w.Close()
		})
		return stopErr
	}
	t.Cleanup(func() { stop() })
	type read struct {
		line string
		err  error
	}
	first := make(chan read, 1)
	go func() {
		br := bufio.NewReader(r)
		line, err := br.ReadString('\n')
		first <- read{line, err}
		io.Copy(io.Discard, br) // the server's later lines
	}()
	var line string
	select {
	case got := <-first:
		if got.err != nil {
			t.Fatal(got.err)
		}
		line = got.line
	case err := <-done:
		done <- err // for stop
		// A serve that listened and then ended at once (a load that fails in
		// milliseconds) has still said where it listened, and both are
		// ready together (select picks either): the line decides.
		select {
		case got := <-first:
			if got.err != nil {
				t.Fatalf("serve %q returned before it listened: %v", args, err)
			}
			line = got.line
		case <-time.After(5 * time.Second):
			t.Fatalf("serve %q returned before it listened: %v", args, err)
		}
	}
	m := regexp.MustCompile(`http://[0-9.:]+`).FindString(line)
	if m == "" {
		t.Fatalf("no URL in %q", line)
	}
	return m, stop
}

// A settings file that does not load is said on stderr at start-up (the
// studio's status line is not there for a headless serve), and the file is
// left as it was.
func TestServeSaysStartupWarnings(t *testing.T) {
	t.Cleanup(xdg.Reload)
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	xdg.Reload()
	bad := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(bad, []byte("RIFF, not settings"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var said strings.Builder
	read := make(chan struct{})
	go func() { io.Copy(&said, r); close(read) }()
	stderr := os.Stderr
	os.Stderr = w
	_, stop := serveInProcess(t, "--ui", "--settings", bad)
	err = stop()
	os.Stderr = stderr // serve has returned: nothing writes it now
	w.Close()
	<-read
	if err != nil {
		t.Fatal(err)
	}
	if want := "proscenium serve: warning: settings " + bad; !strings.Contains(said.String(), want) || !strings.Contains(said.String(), "using the default settings") {
		t.Errorf("stderr %q, want a line starting %q", said.String(), want)
	}
	if b, _ := os.ReadFile(bad); string(b) != "RIFF, not settings" {
		t.Errorf("the settings file changed: %q", b)
	}
}

// serve wires the HTTP policy: the key from the environment, an allowed
// origin, and the refusals of everything else.
func TestServeAppliesThePolicy(t *testing.T) {
	t.Cleanup(xdg.Reload) // after the variable below is restored (cleanups run last first)
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	xdg.Reload() // takes and the demo model under the test's directory
	t.Setenv(apiKeyEnv, "env-key-1234")
	base, stop := serveInProcess(t, "--ui", "--allow-origin", "https://app.example")
	get := func(path string, header map[string]string) int {
		req, _ := http.NewRequest("GET", base+path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	auth := map[string]string{"Authorization": "Bearer env-key-1234"}
	for _, c := range []struct {
		path   string
		header map[string]string
		want   int
	}{
		{"/v1/models", nil, 401},
		{"/v1/models", auth, 200},
		{"/healthz", nil, 200},
		{"/", nil, 200},
		{"/v1/models", map[string]string{"Authorization": auth["Authorization"], "Origin": "https://app.example"}, 200},
		{"/v1/models", map[string]string{"Authorization": auth["Authorization"], "Origin": "http://evil.example"}, 403},
	} {
		if got := get(c.path, c.header); got != c.want {
			t.Errorf("GET %s %v: %d, want %d", c.path, c.header, got, c.want)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// serve's settings come from PROSCENIUM_* when the flag is not given; the
// flag wins; an unknown flag is a usage error like any other command's.
func TestServeTakesItsSettingsFromTheEnvironment(t *testing.T) {
	if err := runServe([]string{"--bogus"}); !errors.Is(err, errUsage) {
		t.Errorf("serve --bogus: %v, want a usage error", err)
	}
	t.Setenv(portEnv, "seventy")
	if err := runServe([]string{"--ui"}); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), portEnv) {
		t.Errorf("bad $%s: %v, want a usage error naming it", portEnv, err)
	}
	t.Setenv(portEnv, "")
	absent := t.TempDir() + "/absent-from-env"
	t.Setenv(modelEnv, absent)
	if err := runServe([]string{"--settings", ""}); err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), "absent-from-env") {
		t.Errorf("$%s: %v, want the load of %s to fail", modelEnv, err, absent)
	}
	t.Setenv(modelEnv, "")
	t.Cleanup(xdg.Reload)
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	xdg.Reload()
	t.Setenv(hostEnv, "127.0.0.2")
	base, stop := serveInProcess(t, "--ui")
	if !strings.Contains(base, "127.0.0.2:") {
		t.Errorf("$%s=127.0.0.2 served at %s", hostEnv, base)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// serve --model answers while the weights load (/healthz says so) and says on
// stderr when they are loaded; a load that fails after that stops serve with
// its error; a port in use is refused at once, naming --port.
func TestServeLoadsTheModelWhileServing(t *testing.T) {
	t.Cleanup(xdg.Reload)
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	xdg.Reload()
	ckpt := demoCheckpoint(t)

	base, stop := serveInProcess(t, "--model", ckpt, "--backend", "cpu")
	if h := waitHealth(t, base, func(h health) bool { return h.ModelLoaded }); h.Backend != "cpu" {
		t.Errorf("healthz once loaded: %+v", h)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// A checkpoint whose config reads but whose tokenizer is missing fails
	// in the load, after serve has begun answering.
	broken := copyDir(t, ckpt)
	if err := os.Remove(filepath.Join(broken, "tokenizer.json")); err != nil {
		t.Fatal(err)
	}
	base, stop = serveInProcess(t, "--model", broken, "--backend", "cpu")
	waitHealth(t, base, func(h health) bool { return h.gone })
	if err := stop(); err == nil || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Errorf("serve of a checkpoint without its tokenizer: %v, want the load's error", err)
	}

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := strconv.Itoa(taken.Addr().(*net.TCPAddr).Port)
	err = runServe([]string{"--model", ckpt, "--backend", "cpu", "--port", port, "--settings", ""})
	if err == nil || !strings.Contains(err.Error(), "port "+port+" on 127.0.0.1 is in use") || !strings.Contains(err.Error(), "--port 0") {
		t.Errorf("serve on a taken port: %v", err)
	}
}

// health is GET /healthz's answer; gone: the server no longer answers.
type health struct {
	ModelLoaded bool   `json:"model_loaded"`
	Backend     string `json:"backend"`
	Reason      string `json:"reason"`
	gone        bool
}

// waitHealth polls base's /healthz until done says so (at most 60 s).
func waitHealth(t *testing.T, base string, done func(health) bool) health {
	t.Helper()
	var h health
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		h = health{}
		res, err := http.Get(base + "/healthz")
		if err != nil {
			h.gone = true
		} else {
			json.NewDecoder(res.Body).Decode(&h)
			res.Body.Close()
		}
		if done(h) {
			return h
		}
	}
	t.Fatalf("healthz after 60 s: %+v", h)
	return h
}
