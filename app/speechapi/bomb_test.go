package speechapi

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"proscenium/app/voice"
	"proscenium/app/voicelib"
	"proscenium/engine/api"
	"proscenium/engine/audio/decode"
	"proscenium/engine/audio/decode/decodetest"
	"proscenium/engine/demo"
)

// rss is this process's resident set in bytes (Linux).
func rss(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skip("no /proc/self/statm")
	}
	var size, pages int64
	fmt.Sscan(string(b), &size, &pages)
	return pages * int64(os.Getpagesize())
}

// Issue 32, item 1: a valid 12.6 KB FLAC declaring 655350 Hz and 8
// channels (and its 20 KB variant) raised the server from 160 MiB to
// 3.1 GB and was accepted, as an upload to POST /v1/audio/voices and as a
// speech request's ref_audio; three at once reached 5.3 GB. Through the
// real decoding path (voicelib, decode in its child process, as the
// programs run it) each is now a 400 naming the declared rate, the process
// grows by less than 100 MB, and none takes long (the time is logged; the
// bound below is loose, only a decode of the bomb reaches it).
func TestFLACBombsRefused(t *testing.T) {
	if !decode.Isolated() {
		t.Fatal("TestMain does not decode in a child as the programs do")
	}
	enc, err := voicelib.LoadCPUEncoderBytes(demo.CodecPTH, "engine/demo/codec.pth")
	if err != nil {
		t.Fatal(err)
	}
	lib, err := voicelib.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, h := serveHandler(t, &fakeEngine{frames: 2}, DefaultLimits())
	h.WithReferences(enc.EncodeRecording).WithVoiceLibrary(VoiceLibrary{MaxUploadBytes: voicelib.MaxAudioBytes + 64<<10, MaxRecordingBytes: voicelib.MaxAudioBytes,
		Create: func(name, transcript string, rec []byte) ([]voice.Voice, error) {
			if _, err := lib.Add(rec, transcript, enc); err != nil {
				return nil, err
			}
			return []voice.Voice{{Name: name, Sampling: api.DefaultSampling()}}, nil
		},
		References: func(voice.Voice) ([]api.Reference, error) { return nil, nil }})
	bombs := map[string][]byte{
		"12.6 KB": decodetest.FLACBomb(655350, 8, 0, 12600),
		"20 KB":   decodetest.FLACBomb(655350, 8, 0, 20<<10),
	}
	send := func(kind string, bomb []byte) (int, string) {
		var resp *http.Response
		var err error
		if kind == "upload" {
			body, ct := multipartBody(t, map[string]string{"name": "bomb", "transcript": "Hello.", "audio": string(bomb)})
			resp, err = http.Post(srv.URL+"/v1/audio/voices", ct, body)
		} else {
			resp, err = http.Post(srv.URL+"/v1/audio/speech", "application/json", strings.NewReader(
				`{"model":"drama-3","input":"Hi.","ref_audio":"`+base64.StdEncoding.EncodeToString(bomb)+`","ref_text":"Hello."}`))
		}
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	runtime.GC()
	before := rss(t)
	for name, bomb := range bombs {
		for _, kind := range []string{"upload", "ref_audio"} {
			start := time.Now()
			status, body := send(kind, bomb)
			took := time.Since(start)
			t.Logf("%s bomb as %s: %d in %v", name, kind, status, took)
			if status != 400 || !strings.Contains(body, "sample rate of 655350 Hz") {
				t.Errorf("%s bomb as %s: %d %s", name, kind, status, body)
			}
			if took > 5*time.Second {
				t.Errorf("%s bomb as %s took %v", name, kind, took)
			}
		}
	}
	var wg sync.WaitGroup
	for i, kind := range []string{"upload", "ref_audio", "upload"} {
		wg.Go(func() {
			if status, body := send(kind, bombs["20 KB"]); status != 400 {
				t.Errorf("three at once, %d (%s): %d %s", i, kind, status, body)
			}
		})
	}
	wg.Wait()
	if grew := rss(t) - before; grew > 100<<20 {
		t.Errorf("the server grew by %d MB", grew>>20)
	}
	if n, _ := lib.Bytes(); n != 0 {
		t.Errorf("the library holds %d bytes after refusals", n)
	}
}
