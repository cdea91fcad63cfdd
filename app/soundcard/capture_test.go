package soundcard

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The sound card test: a take plays through oto into ALSA's `file` plugin
// over the `null` device (ALSA_CONFIG_PATH), and the captured samples must
// be the take's PCM exactly (oto's FormatFloat32LE at volume 1 passes
// float32 samples through unchanged), in order, with only silence between. oto's context is once per process
// and reads ALSA's configuration when it opens, so the playing runs in a
// child process (this test binary, re-executed).

const captureChildEnv = "PROSCENIUM_ALSA_CAPTURE_CHILD"

// captureReport is what the child prints as its last line.
type captureReport struct {
	Samples int    `json:"samples"`
	Gaps    []gap  `json:"gaps"`
	Error   string `json:"error"`
}

func TestMain(m *testing.M) {
	if os.Getenv(captureChildEnv) != "" {
		rep := playCaptureTake()
		b, _ := json.Marshal(rep)
		fmt.Println(string(b))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// captureFrames is the take the child plays: 15 frames in chunks of 1, 2, 4
// and 8 frames, the engine's chunk policy.
const captureFrames = 15

// playCaptureTake runs in the child: it feeds the chunks to the live
// playback path as an engine would, and waits for the end.
func playCaptureTake() captureReport {
	out := OpenAudioOutput(3 * time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for out.Status().State == AudioOpening && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if st := out.Status(); st.State != AudioReady {
		return captureReport{Error: st.Message}
	}
	p := newPlayback(out)
	s := p.liveStream(1)
	n := 0
	for from, size := 0, 1; from < captureFrames; size *= 2 {
		to := min(from+size, captureFrames)
		pcm := make([]float32, (to-from)*testSPF)
		for i := range pcm {
			pcm[i] = testSignal(n + i)
		}
		n += len(pcm)
		p.liveChunk(1, s, pcm, testSPF)
		from = to
		time.Sleep(2 * time.Millisecond)
	}
	p.liveEnd(s)
	for time.Now().Before(deadline) {
		if st := p.status(); st.State == PlayStopped {
			break
		}
		time.Sleep(time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return captureReport{Samples: n, Gaps: append([]gap{}, s.gaps...)}
}

func TestPlaybackThroughALSAFileSink(t *testing.T) {
	if _, err := os.Stat("/usr/share/alsa/alsa.conf"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("libasound2 is not installed (run make deps)")
		}
		t.Skip("libasound2 is not installed: run make deps")
	}
	dir := t.TempDir()
	capture := filepath.Join(dir, "capture.raw")
	conf := filepath.Join(dir, "asound.conf")
	// The file plugin writes what it is given (oto asks for FLOAT_LE) to
	// the file, raw, and passes it to the null device, which has no clock.
	os.WriteFile(conf, []byte(fmt.Sprintf(`pcm.!default {
	type file
	slave.pcm { type null }
	file %q
	format "raw"
}
`, capture)), 0o644)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), captureChildEnv+"=1", "ALSA_CONFIG_PATH="+conf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var rep captureReport
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil {
		t.Fatalf("child said %q", out)
	}
	if rep.Error != "" {
		t.Fatalf("child: %s", rep.Error)
	}

	// The null device plays as fast as it is fed, so the capture holds
	// silence before the take and keeps growing after it until the child
	// exits: find the take's span and bound the file.
	f, err := os.Open(capture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	const maxCapture = 1 << 30
	if fi.Size() > maxCapture {
		t.Fatalf("capture grew to %d bytes", fi.Size())
	}
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	got := decodeFloat32LE(data)
	// The take has no zero sample. Without a clock the device also runs dry
	// between chunks inside oto (its mixer pads with zeros), so the sounding
	// samples, in order, must be the take exactly, and everything else
	// silence: no sample lost, repeated, reordered or altered.
	var sounding []float32
	first, last := -1, -1
	for i, v := range got {
		if v != 0 {
			sounding = append(sounding, v)
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if len(sounding) != rep.Samples {
		t.Fatalf("captured %d sounding samples, the take has %d", len(sounding), rep.Samples)
	}
	for i, v := range sounding {
		if v != testSignal(i) {
			t.Fatalf("captured sample %d of the take: %v, want %v", i, v, testSignal(i))
		}
	}
	t.Logf("captured %d samples; the take's %d span samples %d…%d; the stream inserted %d silences %v; file %d bytes",
		len(got), rep.Samples, first, last, len(rep.Gaps), rep.Gaps, fi.Size())
}

func TestStreamInsertsCountedSilenceAndResumesAtTarget(t *testing.T) {
	s := &pcmStream{target: 4}
	buf := make([]byte, 4*3)
	if n, err := s.Read(buf); n != 12 || err != nil || s.underruns != 1 { // nothing queued: silence
		t.Fatalf("empty read: %d %v underruns %d", n, err, s.underruns)
	}
	s.write([]float32{1, 2, 3})
	s.Read(buf) // 3 < target 4: still silence, same underrun
	s.write([]float32{4})
	s.Read(buf) // 4 queued: plays 1, 2, 3
	if got := decodeFloat32LE(buf); got[0] != 1 || got[2] != 3 {
		t.Fatalf("after rebuffering: %v", got)
	}
	s.close()
	if n, _ := s.Read(buf); n != 4 {
		t.Fatalf("last sample: %d bytes", n)
	}
	if _, err := s.Read(buf); err != io.EOF {
		t.Fatalf("after the end: %v", err)
	}
	played, silence, underruns := s.counts()
	if played != 4 || silence != 6 || underruns != 1 || len(s.gaps) != 1 || s.gaps[0] != (gap{At: 0, Samples: 6}) {
		t.Fatalf("played %d silence %d underruns %d gaps %v", played, silence, underruns, s.gaps)
	}
}
