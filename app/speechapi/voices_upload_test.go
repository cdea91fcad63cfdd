package speechapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"proscenium/app/voice"
	"proscenium/engine/api"
)

func multipartBody(t testing.TB, fields map[string]string) (*bytes.Buffer, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, k := range []string{"name", "transcript", "audio", "extra"} {
		v, ok := fields[k]
		if !ok {
			continue
		}
		var w io.Writer
		var err error
		if k == "audio" {
			w, err = mw.CreateFormFile(k, "ref.wav")
		} else {
			w, err = mw.CreateFormField(k)
		}
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, v)
	}
	mw.Close()
	return &b, mw.FormDataContentType()
}

// POST /v1/audio/voices creates a library voice from a multipart upload; it
// is listed, and a request naming it speaks with its reference (then the
// request's own).
func TestLibraryVoices(t *testing.T) {
	var voices []voice.Voice
	var created []string
	lib := VoiceLibrary{
		MaxUploadBytes: 4000,
		Create: func(name, transcript string, rec []byte) ([]voice.Voice, error) {
			if string(rec) == "noise" {
				return voices, errors.New("cannot read the reference: not a WAV, FLAC, MP3 or Ogg Opus file")
			}
			created = append(created, name+"|"+transcript+"|"+string(rec))
			voices = append(voices, voice.Voice{Name: name, Sampling: api.DefaultSampling(), Reference: strings.Repeat("a", 64)})
			return voices, nil
		},
		References: func(v voice.Voice) ([]api.Reference, error) {
			return []api.Reference{{Transcript: "lib " + v.Name, Codes: [][]int{{1}}}}, nil
		},
	}
	eng := &fakeEngine{frames: 2}
	srv, h := serveHandler(t, eng, DefaultLimits())
	h.WithVoices(func() []voice.Voice { return voices }).WithVoiceLibrary(lib).
		WithReferences(func([]byte) ([][]int, error) { return [][]int{{2}}, nil })

	body, ct := multipartBody(t, map[string]string{"name": "Ada", "transcript": "Hello there.", "audio": "RIFF…"})
	resp, err := http.Post(srv.URL+"/v1/audio/voices", ct, body)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	json.NewDecoder(resp.Body).Decode(&obj)
	if resp.StatusCode != 201 || obj["id"] != "Ada" || obj["reference"] != true || len(created) != 1 || created[0] != "Ada|Hello there.|RIFF…" {
		t.Fatalf("create: %d %v %v", resp.StatusCode, obj, created)
	}
	list, _ := http.Get(srv.URL + "/v1/audio/voices")
	lb, _ := io.ReadAll(list.Body)
	if !strings.Contains(string(lb), `"id":"Ada"`) || !strings.Contains(string(lb), `"reference":true`) {
		t.Errorf("list: %s", lb)
	}
	sp := postURL(t, srv.URL, `{"model":"drama-3","input":"Hi.","voice":"Ada","ref_audio":"eA==","ref_text":"own"}`)
	io.ReadAll(sp.Body)
	want := []api.Reference{{Transcript: "lib Ada", Codes: [][]int{{1}}}, {Transcript: "own", Codes: [][]int{{2}}}}
	if sp.StatusCode != 200 || sp.Header.Get("X-Voice") != "Ada" || !reflect.DeepEqual(eng.last.References, want) {
		t.Errorf("speech: %d %q %+v", sp.StatusCode, sp.Header.Get("X-Voice"), eng.last.References)
	}

	for _, tc := range []struct {
		fields map[string]string
		status int
		want   string
	}{
		{map[string]string{"name": "Bob", "audio": "x"}, 400, "transcript is required"},
		{map[string]string{"name": "default", "transcript": "t", "audio": "x"}, 400, `"param":"name"`},
		{map[string]string{"name": " Bob", "transcript": "t", "audio": "x"}, 400, `without leading or trailing spaces","param":"name"`},
		{map[string]string{"name": "Bob", "transcript": "t", "audio": "x", "extra": "1"}, 400, `unknown field`},
		{map[string]string{"name": "Bob", "transcript": "t", "audio": "noise"}, 400, "cannot read the reference"},
		{map[string]string{"name": "Bob", "transcript": "t", "audio": strings.Repeat("x", 5000)}, 413, "larger than 4000 bytes"},
	} {
		body, ct := multipartBody(t, tc.fields)
		resp, err := http.Post(srv.URL+"/v1/audio/voices", ct, body)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.status || !strings.Contains(string(msg), tc.want) {
			t.Errorf("%v: %d %s, want %d %q", tc.fields["transcript"], resp.StatusCode, msg, tc.status, tc.want)
		}
	}
	resp, _ = http.Post(srv.URL+"/v1/audio/voices", "application/json", strings.NewReader(`{}`))
	if msg, _ := io.ReadAll(resp.Body); resp.StatusCode != 400 || !strings.Contains(string(msg), "multipart/form-data") {
		t.Errorf("json body: %d %s", resp.StatusCode, msg)
	}
}

// Without a loaded model a voice cannot be encoded: creating one answers
// 503 with the reason, as a speech request does, and the library is not
// asked.
func TestLibraryVoiceWithoutModel(t *testing.T) {
	asked := false
	srv, h := serveHandler(t, nil, DefaultLimits())
	h.WithVoiceLibrary(VoiceLibrary{MaxUploadBytes: 4000,
		Create: func(string, string, []byte) ([]voice.Voice, error) { asked = true; return nil, nil }})
	body, ct := multipartBody(t, map[string]string{"name": "Ada", "transcript": "Hello there.", "audio": "RIFF…"})
	resp, err := http.Post(srv.URL+"/v1/audio/voices", ct, body)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 503 || !strings.Contains(string(msg), "no model loaded") || asked {
		t.Errorf("create without a model: %d %s (library asked: %v)", resp.StatusCode, msg, asked)
	}
}
