package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"proscenium/app/model"
	"proscenium/app/speechapi"
	"proscenium/app/studio"
	"proscenium/app/takes"
	"proscenium/app/voice"
	"proscenium/app/voices"
	"proscenium/engine/api"
	"proscenium/engine/demo"
)

// A voice created from a recording keeps it in the library and speaks with
// its transcript and codes; its recording plays back as given; a missing
// library entry is an error naming the voice.
func TestCreateVoiceFromRecording(t *testing.T) {
	rec, err := os.ReadFile(filepath.Join("..", "engine", "audio", "decode", "testdata", "ref.flac"))
	if err != nil {
		t.Fatal(err)
	}
	eng := &testEngine{frames: 1}
	lib := t.TempDir()
	svc, err := New(Config{Open: func(string) (api.Engine, error) { return eng, nil }, VoicesDir: lib})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Shutdown(svc) })
	if _, err := svc.CreateVoice("Ada", "Hello.", rec); !errors.Is(err, studio.ErrNoModel) {
		t.Errorf("without a model: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "codec.pth"), demo.CodecPTH, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.LoadModel(dir); err != nil {
		t.Fatal(err)
	}
	saved, err := svc.CreateVoice("Ada", "  The quick brown fox. ", rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(saved) != 1 || saved[0].Name != "Ada" || len(saved[0].Reference) != 64 || saved[0].Sampling != api.DefaultSampling() {
		t.Fatalf("voices %+v", saved)
	}
	refs, err := svc.VoiceReferences(saved[0])
	if err != nil {
		t.Fatal(err)
	}
	direct, err := svc.EncodeReference(rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 1 || refs[0].Transcript != "The quick brown fox." || len(refs[0].Codes) != len(direct) || refs[0].Codes[7][3] != direct[7][3] {
		t.Fatalf("references %+v", refs)
	}
	if none, err := svc.VoiceReferences(voice.Voice{Name: "plain"}); err != nil || none != nil {
		t.Errorf("a voice without a recording: %v %v", none, err)
	}
	played, err := svc.VoiceRecording("Ada")
	if err != nil || played.File != "reference.flac" || !bytes.Equal(played.Data, rec) {
		t.Errorf("recording: %s, %d bytes, %v", played.File, len(played.Data), err)
	}
	for _, tc := range []struct {
		name, transcript string
		rec              []byte
		want             string
	}{
		{"default", "Hi.", rec, "cannot be redefined"},
		{"Bob", "", rec, "transcript is empty"},
		{"Bob", "Hi.", []byte("noise"), "cannot read the reference"},
	} {
		if _, err := svc.CreateVoice(tc.name, tc.transcript, tc.rec); !errors.Is(err, studio.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CreateVoice(%q, %q): %v, want %q", tc.name, tc.transcript, err, tc.want)
		}
	}
	if n := len(svc.Voices()); n != 1 {
		t.Errorf("refusals changed the voices: %d", n)
	}
	// The speech API's POST /v1/audio/voices says the refusal's own sentence
	// (no "invalid: " in front of it).
	resp := postAPIVoice(t, svc, "Bob", "Hi.", "noise.wav", []byte("noise"))
	var refusal struct {
		Error struct{ Message, Param string }
	}
	json.NewDecoder(resp.Body).Decode(&refusal)
	resp.Body.Close()
	if msg := refusal.Error.Message; resp.StatusCode != 400 || !strings.HasPrefix(msg, "cannot read the reference") || refusal.Error.Param != "audio" {
		t.Errorf("speech API upload of noise: %d %q (param %q), want 400 \"cannot read the reference…\"", resp.StatusCode, msg, refusal.Error.Param)
	}
	if err := os.RemoveAll(filepath.Join(lib, saved[0].Reference)); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.VoiceReferences(saved[0]); err == nil || !strings.Contains(err.Error(), `voice "Ada": its recording is no longer in the voice library`) {
		t.Errorf("missing recording: %v", err)
	}
}

// A cast take carries each voice's reference in speaker order and keeps
// the cast; re-running it keeps both.
func TestSpeakCast(t *testing.T) {
	rec, err := os.ReadFile(filepath.Join("..", "engine", "audio", "decode", "testdata", "ref.flac"))
	if err != nil {
		t.Fatal(err)
	}
	rec2, err := os.ReadFile(filepath.Join("..", "engine", "audio", "decode", "testdata", "ref.wav"))
	if err != nil {
		t.Fatal(err)
	}
	eng := &testEngine{frames: 1}
	svc := voiceService(t, eng)
	if _, err := svc.CreateVoice("Ada", "Ada speaks.", rec); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateVoice("Bob", "Bob speaks.", rec2); err != nil {
		t.Fatal(err)
	}
	take, err := svc.SpeakCast(voices.CastRequest{Request: speech("<|speaker:1|>Hi Ada. <|speaker:0|>Hi Bob."), Cast: []string{"Ada", "Bob"}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return svc.Takes()[0].State != takes.TakeRunning })
	refs := take.Request.References
	if len(refs) != 2 || refs[0].Transcript != "Ada speaks." || refs[1].Transcript != "Bob speaks." || !slices.Equal(take.Voices, []string{"Ada", "Bob"}) {
		t.Fatalf("take %+v", take)
	}
	again, err := svc.RerunTake(takes.Rerun{ID: take.ID})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Request.References, refs) || !slices.Equal(again.Voices, take.Voices) {
		t.Errorf("re-run lost the voices: %+v", again)
	}
	waitFor(t, func() bool { return svc.Takes()[1].State != takes.TakeRunning })
	for _, tc := range []struct {
		cast []string
		want string
	}{
		{[]string{"Nobody"}, `speaker 0: no voice called "Nobody" has a recording`},
		{[]string{"Ada", "Ada", "Ada", "Ada", "Ada"}, "5 voices cast, at most 4"},
	} {
		if _, err := svc.SpeakCast(voices.CastRequest{Request: speech("Hi."), Cast: tc.cast}); !errors.Is(err, studio.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("cast %v: %v, want %q", tc.cast, err, tc.want)
		}
	}
}

// postAPIVoice makes a voice through the service's speech API (POST
// /v1/audio/voices, multipart) and returns the response.
func postAPIVoice(t *testing.T, svc *Service, name, transcript, file string, audio []byte) *http.Response {
	t.Helper()
	mux := http.NewServeMux()
	SpeechAPI(svc, "drama-3", speechapi.DefaultLimits()).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("name", name)
	mw.WriteField("transcript", transcript)
	fw, _ := mw.CreateFormFile("audio", file)
	fw.Write(audio)
	mw.Close()
	resp, err := http.Post(srv.URL+"/v1/audio/voices", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// voiceService is a service over eng with a voice library and a loaded
// model directory holding the demo codec.
func voiceService(t *testing.T, eng api.Engine) *Service {
	t.Helper()
	return loadedService(t, Config{Open: func(string) (api.Engine, error) { return eng, nil }, VoicesDir: t.TempDir()})
}

// loadedService is a service of cfg with a model directory holding the demo
// codec loaded (the directory: ModelStatus().Dir).
func loadedService(t *testing.T, cfg Config) *Service {
	t.Helper()
	svc, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Shutdown(svc) })
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "codec.pth"), demo.CodecPTH, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.LoadModel(dir); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return svc.ModelStatus().State == model.ModelLoaded })
	return svc
}
