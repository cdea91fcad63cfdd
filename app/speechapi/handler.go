package speechapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"proscenium/engine"
	"proscenium/engine/audio"
)

// Limits bound what one request may ask for.
type Limits struct {
	MaxBodyBytes     int64 // larger bodies get 413
	MaxInputChars    int   // longer input gets 400
	MaxFrames        int   // the largest max_frames accepted
	DefaultMaxFrames int   // max_frames when the request has none
	QueueDepth       int   // requests that may wait behind the running take
}

// DefaultLimits: OpenAI's 4096-character input limit, a 64 KiB body, takes up
// to 65536 frames (about 50 minutes), engine.DefaultMaxFrames by default,
// and 8 waiting requests.
func DefaultLimits() Limits {
	return Limits{MaxBodyBytes: 64 << 10, MaxInputChars: 4096, MaxFrames: 1 << 16, DefaultMaxFrames: engine.DefaultMaxFrames, QueueDepth: 8}
}

// EngineFunc returns the loaded engine, or an error saying why there is none
// (the request then gets 503 with that message).
type EngineFunc func() (engine.Engine, error)

// Handler serves the speech API.
type Handler struct {
	engine  EngineFunc
	modelID string
	lim     Limits
	q       *queue
}

// New returns the speech API for the engine that eng returns, serving the
// model under the id modelID (what clients put in "model").
func New(eng EngineFunc, modelID string, lim Limits) *Handler {
	return &Handler{engine: eng, modelID: modelID, lim: lim, q: newQueue(lim.QueueDepth)}
}

// Register adds the routes to mux.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/audio/speech", h.speech)
	mux.HandleFunc("GET /v1/models", h.models)
	mux.HandleFunc("GET /healthz", h.health)
}

// apiError writes an OpenAI-style error object.
func apiError(w http.ResponseWriter, status int, kind, param, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]any{"error": map[string]any{"message": msg, "type": kind, "param": nullable(param), "code": nil}}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // messages quote tokens like <|im_end|>: keep them readable
	enc.Encode(body)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (h *Handler) health(w http.ResponseWriter, r *http.Request) {
	status := map[string]any{"status": "ok", "model_loaded": false}
	if eng, err := h.engine(); err == nil {
		status["model_loaded"] = true
		status["backend"] = eng.Info().Backend
	} else {
		status["reason"] = err.Error()
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(status)
}

func (h *Handler) models(w http.ResponseWriter, r *http.Request) {
	data := []any{}
	if eng, err := h.engine(); err == nil {
		info := eng.Info()
		data = append(data, map[string]any{
			"id": h.modelID, "object": "model", "owned_by": "fishaudio", "created": 0,
			"backend": info.Backend, "demo": info.Demo, "sample_rate": info.SampleRate,
		})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

func (h *Handler) speech(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.lim.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			apiError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "",
				fmt.Sprintf("the body is larger than %d bytes", tooBig.Limit))
			return
		}
		apiError(w, http.StatusBadRequest, "invalid_request_error", "", "reading the body: "+err.Error())
		return
	}
	req, err := parseSpeech(body, h.lim, h.modelID)
	if err != nil {
		var re *requestError
		errors.As(err, &re)
		apiError(w, http.StatusBadRequest, "invalid_request_error", re.Param, re.Message)
		return
	}
	eng, err := h.engine()
	if err != nil {
		apiError(w, http.StatusServiceUnavailable, "server_error", "", err.Error())
		return
	}
	admitted, err := h.q.acquire(r.Context())
	if !admitted {
		w.Header().Set("Retry-After", "5")
		apiError(w, http.StatusTooManyRequests, "rate_limit_error", "",
			fmt.Sprintf("the engine is busy and %d requests are already waiting", h.lim.QueueDepth))
		return
	}
	if err != nil { // the client left while waiting
		return
	}
	defer h.q.release()

	info := eng.Info()
	if req.Stream {
		h.stream(w, r, eng, info, req)
		return
	}
	h.whole(w, r, eng, info, req)
}

// chunkCursor checks that an engine's audio chunks tile the take in order
// (the API promises whole takes; a gap or overlap is an engine fault, never
// audio sent as if it were right).
type chunkCursor struct {
	frames          int // frames received so far
	samplesPerFrame int
}

func (c *chunkCursor) next(a *engine.AudioChunk) error {
	if a.FromFrame != c.frames || a.ToFrame <= a.FromFrame || len(a.PCM) != (a.ToFrame-a.FromFrame)*c.samplesPerFrame {
		return fmt.Errorf("engine sent frames %d..%d with %d samples after frame %d", a.FromFrame, a.ToFrame, len(a.PCM), c.frames)
	}
	c.frames = a.ToFrame
	return nil
}

// whole synthesises the take, then answers with all of it.
func (h *Handler) whole(w http.ResponseWriter, r *http.Request, eng engine.Engine, info engine.Info, req speechRequest) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var pcm []float32
	var chunkErr error
	cur := chunkCursor{samplesPerFrame: info.SamplesPerFrame}
	fin, err := eng.Synthesize(ctx, req.SpeechRequest, func(e engine.Event) {
		if e.Kind != engine.EventAudio || chunkErr != nil {
			return
		}
		if chunkErr = cur.next(e.Audio); chunkErr != nil {
			cancel()
			return
		}
		pcm = append(pcm, e.Audio.PCM...)
	})
	if err == nil {
		err = chunkErr
	}
	if err != nil {
		synthesisError(w, err)
		return
	}
	if r.Context().Err() != nil { // the client is gone; the take was cancelled
		return
	}
	var out []byte
	if req.Format == FormatWAV {
		out, err = audio.EncodeWAV(pcm, info.SampleRate, audio.PCM16)
	} else {
		out, err = audio.EncodeRaw(pcm, audio.PCM16)
	}
	if err != nil {
		apiError(w, http.StatusInternalServerError, "server_error", "", "encoding the take: "+err.Error())
		return
	}
	setFigures(w.Header(), fin)
	w.Header().Set("Content-Type", contentType(req.Format, info.SampleRate))
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	w.Write(out)
}

// stream sends each decoded chunk as it arrives (HTTP/1.1 chunked). The
// figures follow as trailers. A failure after the first chunk aborts the
// connection without the terminating chunk, so no client can take the cut
// audio for a whole take.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, eng engine.Engine, info engine.Info, req speechRequest) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	rc := http.NewResponseController(w)
	hdr := w.Header()
	hdr.Set("Content-Type", contentType(FormatPCM, info.SampleRate))
	hdr.Set("Trailer", "X-Finish-Reason, X-Time-To-First-Audio-Ms, X-Real-Time-Factor, X-Audio-Frames")
	hdr.Set("X-Content-Type-Options", "nosniff")
	started := false
	var chunkErr error
	cur := chunkCursor{samplesPerFrame: info.SamplesPerFrame}
	fin, err := eng.Synthesize(ctx, req.SpeechRequest, func(e engine.Event) {
		if e.Kind != engine.EventAudio || ctx.Err() != nil {
			return
		}
		if chunkErr = cur.next(e.Audio); chunkErr != nil {
			cancel()
			return
		}
		buf, err := audio.EncodeRaw(e.Audio.PCM, audio.PCM16)
		if err != nil {
			chunkErr = fmt.Errorf("encoding frames %d..%d: %w", e.Audio.FromFrame, e.Audio.ToFrame, err)
			cancel()
			return
		}
		if !started {
			w.WriteHeader(http.StatusOK)
			started = true
		}
		if _, werr := w.Write(buf); werr != nil {
			cancel() // the client is gone: stop the take
			return
		}
		if ferr := rc.Flush(); ferr != nil {
			cancel()
		}
	})
	if err == nil {
		err = chunkErr
	}
	switch {
	case err != nil && !started:
		synthesisError(w, err)
		return
	case err != nil:
		panic(http.ErrAbortHandler) // ends the response without its last chunk
	case r.Context().Err() != nil:
		return
	}
	if !started {
		w.WriteHeader(http.StatusOK)
	}
	setFigures(hdr, fin)
}

// synthesisError answers a take that failed before any audio: 400 when the
// engine refused the request as given (e.g. structural tokens in the input),
// else 500.
func synthesisError(w http.ResponseWriter, err error) {
	if errors.Is(err, engine.ErrInvalidRequest) {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "input", err.Error())
		return
	}
	apiError(w, http.StatusInternalServerError, "server_error", "", "synthesis failed: "+err.Error())
}

func contentType(format string, rate int) string {
	if format == FormatWAV {
		return "audio/wav"
	}
	return fmt.Sprintf("audio/pcm;rate=%d;channels=1;format=s16le", rate)
}

// setFigures writes the take's finish reason and timing as headers (or, after
// the body has started, as the declared trailers).
func setFigures(h http.Header, fin *engine.Finish) {
	if fin == nil {
		return
	}
	h.Set("X-Finish-Reason", fin.Reason)
	h.Set("X-Audio-Frames", strconv.Itoa(fin.Frames))
	h.Set("X-Time-To-First-Audio-Ms", strconv.FormatFloat(float64(fin.TimeToFirstAudio)/float64(time.Millisecond), 'f', 1, 64))
	h.Set("X-Real-Time-Factor", strconv.FormatFloat(fin.RealTimeFactor, 'f', 4, 64))
}
