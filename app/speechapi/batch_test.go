package speechapi

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"proscenium/engine/api"
)

// firstAudioBarrier holds each take's first audio until n takes have
// reached theirs: with requests that do not run together it never opens
// (the take fails the test at the deadline).
type firstAudioBarrier struct {
	api.Engine
	t    *testing.T
	made sync.WaitGroup
	all  chan struct{}
}

func newFirstAudioBarrier(t *testing.T, eng api.Engine, n int) *firstAudioBarrier {
	b := &firstAudioBarrier{Engine: eng, t: t, all: make(chan struct{})}
	b.made.Add(n)
	go func() { b.made.Wait(); close(b.all) }()
	return b
}

func (b *firstAudioBarrier) Synthesize(ctx context.Context, req api.SpeechRequest, emit func(api.Event)) (*api.Finish, error) {
	first := true
	return b.Engine.Synthesize(ctx, req, func(ev api.Event) {
		if ev.Kind == api.EventAudio && first {
			first = false
			b.made.Done()
			select {
			case <-b.all:
			case <-time.After(20 * time.Second):
				b.t.Error("a request's first audio waited for the others': the requests do not run together")
			}
		}
		emit(ev)
	})
}

// Four streamed requests at once all receive their first audio before the
// first of them finishes, and each reports the batch it ran in.
func TestDemoModelRequestsShareTheBatch(t *testing.T) {
	lim := DefaultLimits()
	lim.Batch, lim.QueueDepth = 4, 1
	srv := serve(t, newFirstAudioBarrier(t, openDemo(t), 4), lim)
	// Four clients (their keys): one client holds at most half the places.
	var order atomic.Int64
	var first, done [4]int64
	var batch [4]string
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := `{"model":"drama-3","input":"Together.","response_format":"pcm","stream_format":"audio","max_frames":12,"seed":` + strconv.Itoa(i+1) + `}`
			resp, err := postAs(srv.URL, "client-"+strconv.Itoa(i), body)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("request %d: %d", i, resp.StatusCode)
				return
			}
			buf := make([]byte, 1)
			if _, err := io.ReadFull(resp.Body, buf); err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			first[i] = order.Add(1)
			io.Copy(io.Discard, resp.Body)
			done[i] = order.Add(1)
			batch[i] = resp.Trailer.Get("X-Batch")
		}()
	}
	wg.Wait()
	end := int64(1 << 62)
	for i := range 4 {
		end = min(end, done[i])
	}
	for i := range 4 {
		if first[i] == 0 || first[i] > end {
			t.Errorf("request %d: first audio at event %d, the first request finished at event %d", i, first[i], end)
		}
		if b, err := strconv.Atoi(batch[i]); err != nil || b < 1 || b > 4 {
			t.Errorf("request %d: X-Batch %q", i, batch[i])
		}
	}
}

// The 429 limit counts the takes running together and the queue: with a
// batch of 2 and 1 waiting, a fourth client's request is refused; the
// others are served.
func TestDemoModelQueueCountsTheBatch(t *testing.T) {
	lim := DefaultLimits()
	lim.Batch, lim.QueueDepth = 2, 1
	eng := &interceptedEngine{Engine: openDemo(t), gate: make(chan struct{}), started: make(chan struct{}, 3)}
	srv, h := serveHandler(t, eng, lim)
	body := `{"model":"drama-3","input":"Hello.","response_format":"pcm","max_frames":3}`
	statuses := make(chan int, 3)
	for i := range 3 {
		go func() {
			resp, err := postAs(srv.URL, "client-"+strconv.Itoa(i), body)
			if err != nil {
				statuses <- -1
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	<-eng.started
	<-eng.started // two takes reached the engine together
	for deadline := time.Now().Add(10 * time.Second); len(h.q.slots) < 3 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	resp, err := postAs(srv.URL, "client-3", body)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 || !strings.Contains(string(msg), "2 takes are running together and 1 requests are already waiting") {
		t.Errorf("fourth request: %d %s, want 429 naming the batch and the queue", resp.StatusCode, msg)
	}
	close(eng.gate)
	for range 3 {
		if s := <-statuses; s != 200 {
			t.Errorf("a request got %d", s)
		}
	}
}

// postAs posts body to the speech API as the client with API key key.
func postAs(url, key, body string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, url+"/v1/audio/speech", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	return http.DefaultClient.Do(req)
}
