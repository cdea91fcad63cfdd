package app

import (
	"net/http"
	"strings"
	"testing"

	"proscenium/app/server"
)

// POST /v1/audio/voices takes multipart uploads past the policy's JSON
// check (its handler answers: here 404, no library), and only there; a
// foreign origin is refused as for every route.
func TestPolicyLetsVoiceUploadsThrough(t *testing.T) {
	base := policyServer(t, server.HTTPPolicy{}, server.DefaultServeLimits(), nil)
	post := func(path, ct, origin string) int {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader("--x\r\n"))
		req.Header.Set("Content-Type", ct)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	mp := "multipart/form-data; boundary=x"
	if got := post("/v1/audio/voices", mp, ""); got != 404 {
		t.Errorf("upload: %d, want the handler's 404 (no library)", got)
	}
	if got := post("/v1/audio/speech", mp, ""); got != 415 {
		t.Errorf("multipart speech: %d, want 415", got)
	}
	if got := post("/v1/audio/voices", mp, "https://evil.example"); got != 403 {
		t.Errorf("foreign upload: %d, want 403", got)
	}
}
