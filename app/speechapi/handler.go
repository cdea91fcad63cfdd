package speechapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"proscenium/app/voice"
	"proscenium/engine/api"
	"proscenium/engine/audio/encode"
)

// Limits bound what one request may ask for.
type Limits struct {
	MaxBodyBytes  int64 // larger bodies get 413
	MaxInputChars int   // longer input gets 400
	// MaxTakeSeconds bounds a take's audio (--max-take-seconds): the
	// largest max_frames accepted is that many seconds of frames.
	MaxTakeSeconds   float64
	DefaultMaxFrames int // max_frames when the request has none
	// QueueDepth is how many requests may wait behind the running takes;
	// one client (its API key, else its address) holds at most half of
	// the places (see queue).
	QueueDepth int
	// Batch is the takes the engine runs together (0: 1): that many
	// requests run at once, QueueDepth more wait, the next gets 429.
	Batch int
	// Reference recordings of one request (ref_audio, references): their
	// count (more: 400) and their decoded bytes together (more: 413).
	MaxReferences     int
	MaxReferenceBytes int
}

// DefaultMaxTakeSeconds is the longest take the API makes unless the
// server says otherwise: 5 minutes of audio, so one request cannot hold the
// engine for long (65536 frames, the engine's own limit, is 50 minutes).
const DefaultMaxTakeSeconds = 300

// samplesPerFrame is the model's frame (docs/MODEL.md: the codec's strides
// multiply to 2048 samples at 44.1 kHz, 21.5 frames a second).
const samplesPerFrame = 2048

// MaxFrames is the largest max_frames accepted: MaxTakeSeconds of frames
// (MaxTakeSeconds 0: DefaultMaxTakeSeconds).
func (l Limits) MaxFrames() int {
	if l.MaxTakeSeconds <= 0 {
		l.MaxTakeSeconds = DefaultMaxTakeSeconds
	}
	return max(1, int(l.MaxTakeSeconds*NativeRate/samplesPerFrame))
}

// DefaultLimits: OpenAI's 4096-character input limit, a 64 KiB body, takes up
// to DefaultMaxTakeSeconds, api.DefaultMaxFrames by default, and 8
// waiting requests.
func DefaultLimits() Limits {
	return Limits{MaxBodyBytes: 64 << 10, MaxInputChars: 4096, MaxTakeSeconds: DefaultMaxTakeSeconds, DefaultMaxFrames: api.DefaultMaxFrames, QueueDepth: 8,
		MaxReferences: DefaultMaxReferences, MaxReferenceBytes: DefaultMaxReferenceBytes}
}

// EngineFunc returns the loaded engine, or an error saying why there is none
// (the request then gets 503 with that message).
type EngineFunc func() (api.Engine, error)

// Handler serves the speech API.
type Handler struct {
	engine  EngineFunc
	modelID string
	lim     Limits
	q       *queue
	voices  func() []voice.Voice
	tokens  func(text string) (int, error) // nil: usage has no input_tokens
	// encodeRef encodes per-request references (nil: refused).
	encodeRef ReferenceEncoder
	library   *VoiceLibrary // nil: no library voices
}

// New returns the speech API for the engine that eng returns, serving the
// model under the id modelID (what clients put in "model", besides its
// aliases: see ModelNames).
func New(eng EngineFunc, modelID string, lim Limits) *Handler {
	return &Handler{engine: eng, modelID: modelID, lim: lim, q: newQueue(lim.QueueDepth, max(lim.Batch, 1)),
		voices: func() []voice.Voice { return nil }}
}

// WithVoices makes the user's voices (as fn returns them at each request)
// speakable and lists them at GET /v1/audio/voices.
func (h *Handler) WithVoices(fn func() []voice.Voice) *Handler {
	h.voices = fn
	return h
}

// WithTokenCounter lets the sse stream's usage report input_tokens: fn
// counts the tokens of the text the model is given (the input with the
// voice's and the instructions' prefix).
func (h *Handler) WithTokenCounter(fn func(text string) (int, error)) *Handler {
	h.tokens = fn
	return h
}

// route is one endpoint of the API: its method, path and handler.
type route struct {
	method, path string
	serve        http.HandlerFunc
}

func (h *Handler) routes() []route {
	return []route{
		{http.MethodPost, "/v1/audio/speech", h.speech},
		{http.MethodGet, "/v1/audio/voices", h.listVoices},
		{http.MethodPost, "/v1/audio/voices", h.createVoice},
		{http.MethodGet, "/v1/models", h.models},
		{http.MethodGet, "/healthz", h.health},
	}
}

// Register adds the routes to mux, and answers any other path or method
// under /v1/ with an OpenAI-style error (the mux's own 404 and 405 are
// plain text, which OpenAI clients show as an unreadable body).
func (h *Handler) Register(mux *http.ServeMux) {
	rs := h.routes()
	for _, r := range rs {
		mux.HandleFunc(r.method+" "+r.path, r.serve)
	}
	// One catch-all a method: a method-less "/v1/" would conflict with the
	// studio's "GET /" on the same mux.
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		mux.HandleFunc(m+" /v1/", func(w http.ResponseWriter, req *http.Request) { unrouted(w, req, rs) })
	}
}

// unrouted answers a request no route took: 405 with Allow where the path
// is an endpoint, else 404.
func unrouted(w http.ResponseWriter, req *http.Request, rs []route) {
	var allow, all []string
	for _, r := range rs {
		if r.path == req.URL.Path {
			allow = append(allow, r.method)
		}
		if strings.HasPrefix(r.path, "/v1/") {
			all = append(all, r.method+" "+r.path)
		}
	}
	if len(allow) == 0 {
		apiError(w, http.StatusNotFound, "invalid_request_error", "",
			fmt.Sprintf("no endpoint %s: this server answers %s", req.URL.Path, strings.Join(all, ", ")))
		return
	}
	if slices.Contains(allow, http.MethodGet) {
		allow = append(allow, http.MethodHead)
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	apiError(w, http.StatusMethodNotAllowed, "invalid_request_error", "",
		fmt.Sprintf("%s takes %s, not %s", req.URL.Path, orList(allow), req.Method))
}

// orList joins words as "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
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

// models lists the loaded model under each name "model" accepts.
func (h *Handler) models(w http.ResponseWriter, r *http.Request) {
	data := []any{}
	if eng, err := h.engine(); err == nil {
		info := eng.Info()
		for _, id := range ModelNames(h.modelID) {
			data = append(data, map[string]any{
				"id": id, "object": "model", "owned_by": "fishaudio", "created": 0, "root": h.modelID,
				"backend": info.Backend, "demo": info.Demo, "sample_rate_hz": info.SampleRate,
			})
		}
	}
	writeJSON(w, map[string]any{"object": "list", "data": data})
}

// listVoices lists the voices a request may name: "default", the user's,
// and what each of OpenAI's names stands for.
func (h *Handler) listVoices(w http.ResponseWriter, r *http.Request) {
	user := h.voices()
	data := []any{voiceObject(voice.DefaultVoice())}
	for _, v := range user {
		data = append(data, voiceObject(v))
	}
	aliases := map[string]string{}
	for _, name := range voice.OpenAI {
		v, _ := voice.Resolve(name, user)
		aliases[name] = v.Name
	}
	writeJSON(w, map[string]any{"object": "list", "data": data, "openai_aliases": aliases})
}

func voiceObject(v voice.Voice) map[string]any {
	return map[string]any{"id": v.Name, "object": "voice", "speaker": v.Speaker, "direction": v.Direction,
		"sampling": v.Sampling, "seed": v.Seed, "reference": v.Reference != ""}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	writeJSONBody(w, v)
}

func writeJSONBody(w http.ResponseWriter, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func (h *Handler) speech(w http.ResponseWriter, r *http.Request) {
	// A body with reference recordings (base64) may be larger: read up to
	// that, then hold a body without references to MaxBodyBytes.
	limit := h.lim.MaxBodyBytes
	if h.encodeRef != nil {
		limit += int64(h.lim.MaxReferenceBytes)*4/3 + 4<<10
	}
	// Past the limit the rest is read (up to 4 times it) only to count the
	// references: too many is the 400 it is in a body that fits.
	rest := http.MaxBytesReader(w, r.Body, 4*limit)
	body, err := io.ReadAll(io.LimitReader(rest, limit+1))
	if err != nil {
		bodyReadError(w, "", err)
		return
	}
	if int64(len(body)) > limit {
		if n := countReferences(io.MultiReader(bytes.NewReader(body), rest), h.lim.MaxReferences); n > h.lim.MaxReferences {
			apiError(w, http.StatusBadRequest, "invalid_request_error", "references", fmt.Sprintf("more than %d references, at most %d", h.lim.MaxReferences, h.lim.MaxReferences))
			return
		}
		w.Header().Set("Connection", "close")
		apiError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "", fmt.Sprintf("the body is larger than %d bytes", limit))
		return
	}
	req, err := parseSpeech(body, h.lim, h.modelID, h.voices())
	if len(req.recordings) == 0 && int64(len(body)) > h.lim.MaxBodyBytes {
		apiError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "",
			fmt.Sprintf("the body is larger than %d bytes (only reference recordings may make it larger)", h.lim.MaxBodyBytes))
		return
	}
	if err == nil {
		req.References, err = h.references(req)
	}
	if err != nil {
		var re *requestError
		errors.As(err, &re)
		status := http.StatusBadRequest
		if re.Status != 0 {
			status = re.Status
		}
		apiError(w, status, "invalid_request_error", re.Param, re.Message)
		return
	}
	eng, err := h.engine()
	if err != nil {
		apiError(w, http.StatusServiceUnavailable, "server_error", "", err.Error())
		return
	}
	client := clientKey(r)
	admitted, err := h.q.acquire(r.Context(), client)
	if admitted != admittedYes {
		w.Header().Set("Retry-After", "5")
		msg := fmt.Sprintf("the engine is busy: %d takes are running together and %d requests are already waiting", max(h.lim.Batch, 1), h.lim.QueueDepth)
		if admitted == refusedClientShare {
			msg = fmt.Sprintf("this client already holds %d of the queue's %d places (at most half): wait for one to finish", h.q.perClient, cap(h.q.slots))
		}
		apiError(w, http.StatusTooManyRequests, "rate_limit_error", "", msg)
		return
	}
	if err != nil { // the client left while waiting
		return
	}
	defer h.q.release(client)

	info := eng.Info()
	w.Header().Set("X-Voice", req.Voice)
	switch req.StreamFormat {
	case "":
		h.whole(w, r, eng, info, req)
	default:
		h.stream(w, r, eng, info, req)
	}
}

// chunkCursor checks that an engine's audio chunks tile the take in order
// (the API promises whole takes; a gap or overlap is an engine fault, never
// audio sent as if it were right).
type chunkCursor struct {
	frames          int // frames received so far
	samplesPerFrame int
}

func (c *chunkCursor) next(a *api.AudioChunk) error {
	if a.FromFrame != c.frames || a.ToFrame <= a.FromFrame || len(a.PCM) != (a.ToFrame-a.FromFrame)*c.samplesPerFrame {
		return fmt.Errorf("engine sent frames %d..%d with %d samples after frame %d", a.FromFrame, a.ToFrame, len(a.PCM), c.frames)
	}
	c.frames = a.ToFrame
	return nil
}

// take runs the request on the engine, passing each checked chunk through
// out and then calling sent (nil: nothing to do per chunk). A chunk error
// or a sent error cancels the take and is returned.
func take(ctx context.Context, eng api.Engine, info api.Info, req speechRequest, out *output, sent func() error) (*api.Finish, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var chunkErr error
	cur := chunkCursor{samplesPerFrame: info.SamplesPerFrame}
	fin, err := eng.Synthesize(ctx, req.SpeechRequest, func(e api.Event) {
		if e.Kind != api.EventAudio || chunkErr != nil || ctx.Err() != nil {
			return
		}
		if chunkErr = cur.next(e.Audio); chunkErr == nil {
			if chunkErr = out.write(e.Audio.PCM); chunkErr != nil {
				chunkErr = fmt.Errorf("encoding frames %d..%d: %w", e.Audio.FromFrame, e.Audio.ToFrame, chunkErr)
			} else if sent != nil {
				chunkErr = sent()
			}
		}
		if chunkErr != nil {
			cancel()
		}
	})
	if err == nil {
		err = chunkErr
	}
	return fin, err
}

// whole synthesises the take, encoding as it goes, then answers with all of
// it (exact headers, Content-Length, the figures as headers).
func (h *Handler) whole(w http.ResponseWriter, r *http.Request, eng api.Engine, info api.Info, req speechRequest) {
	var buf encode.Buffer
	out, err := newOutput(&buf, req, info.SampleRate)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "server_error", "", "preparing the encoder: "+err.Error())
		return
	}
	fin, err := take(r.Context(), eng, info, req, out, nil)
	if err != nil {
		out.free()
		synthesisError(w, err)
		return
	}
	if r.Context().Err() != nil { // the client is gone; the take was cancelled
		out.free()
		return
	}
	if err := out.close(); err != nil {
		apiError(w, http.StatusInternalServerError, "server_error", "", "encoding the take: "+err.Error())
		return
	}
	setFigures(w.Header(), fin)
	w.Header().Set("Content-Type", req.Format.ContentType(req.SampleRate))
	w.Header().Set("Content-Length", strconv.Itoa(len(buf.Bytes())))
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
}

// stream sends the audio as each decoded chunk is encoded: raw bytes
// (HTTP/1.1 chunked, the figures as trailers) or server-sent events
// (speech.audio.delta with base64 audio, then speech.audio.done). A failure
// after the first bytes aborts the connection without the terminating
// chunk (and, for events, without speech.audio.done), so no client can take
// the cut audio for a whole take.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, eng api.Engine, info api.Info, req speechRequest) {
	rc := http.NewResponseController(w)
	hdr := w.Header()
	sse := req.StreamFormat == StreamSSE
	if sse {
		hdr.Set("Content-Type", "text/event-stream")
		hdr.Set("Cache-Control", "no-cache")
	} else {
		hdr.Set("Content-Type", req.Format.ContentType(req.SampleRate))
		hdr.Set("Trailer", "X-Finish-Reason, X-Time-To-First-Audio-Ms, X-Real-Time-Factor, X-Audio-Frames, X-Batch")
	}
	hdr.Set("X-Content-Type-Options", "nosniff")

	var pending bytes.Buffer // what the encoder has emitted since the last send
	out, err := newOutput(&pending, req, info.SampleRate)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "server_error", "", "preparing the encoder: "+err.Error())
		return
	}
	started := false
	send := func() error {
		if pending.Len() == 0 {
			return nil
		}
		if !started {
			w.WriteHeader(http.StatusOK)
			started = true
		}
		var err error
		if sse {
			err = writeEvent(w, map[string]any{"type": "speech.audio.delta", "audio": base64.StdEncoding.EncodeToString(pending.Bytes())})
		} else {
			_, err = w.Write(pending.Bytes())
		}
		pending.Reset()
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			return errClientGone
		}
		return nil
	}
	fin, err := take(r.Context(), eng, info, req, out, send)
	if err == nil && r.Context().Err() == nil {
		if err = out.close(); err == nil {
			err = send()
		}
	} else {
		out.free()
	}
	switch {
	case errors.Is(err, errClientGone) || r.Context().Err() != nil:
		return
	case err != nil && !started:
		synthesisError(w, err)
		return
	case err != nil:
		if sse {
			writeEvent(w, map[string]any{"type": "error", "error": map[string]any{"message": "synthesis failed: " + err.Error(), "type": "server_error"}})
			rc.Flush() // before the abort, which drops what is buffered
		}
		panic(http.ErrAbortHandler) // ends the response without its last chunk
	}
	if !started {
		w.WriteHeader(http.StatusOK)
	}
	if !sse {
		setFigures(hdr, fin)
		return
	}
	done := map[string]any{"type": "speech.audio.done"}
	if fin != nil {
		done["usage"] = h.usage(req, fin)
		done["finish_reason"] = fin.Reason
		done["audio_frames"] = fin.Frames
		done["real_time_factor"] = fin.RealTimeFactor
		done["time_to_first_audio_ms"] = fin.TimeToFirstAudioMs
		done["batch"] = fin.Batch
	}
	writeEvent(w, done)
	rc.Flush()
}

var errClientGone = errors.New("the client is gone")

// usage is OpenAI's usage object: output_tokens are the take's frames (one
// step of codes each), input_tokens the text's tokens in the model's
// tokenizer, when a counter is set and can count.
func (h *Handler) usage(req speechRequest, fin *api.Finish) map[string]any {
	u := map[string]any{"output_tokens": fin.Frames}
	if h.tokens != nil {
		if n, err := h.tokens(req.Text); err == nil {
			u["input_tokens"] = n
			u["total_tokens"] = n + fin.Frames
		}
	}
	return u
}

// writeEvent writes one server-sent event carrying v as JSON.
func writeEvent(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "data: %s\n\n", data)
	return err
}

// synthesisError answers a take that failed before any audio: 400 when the
// engine refused the request as given, naming the field its message names
// (the sampler's settings; else the script, which is input), else 500.
func synthesisError(w http.ResponseWriter, err error) {
	if errors.Is(err, api.ErrInvalidRequest) {
		param := "input"
		for _, f := range []string{"temperature", "top_p", "top_k", "max_frames"} {
			if strings.Contains(err.Error(), f) {
				param = f
				break
			}
		}
		apiError(w, http.StatusBadRequest, "invalid_request_error", param, err.Error())
		return
	}
	apiError(w, http.StatusInternalServerError, "server_error", "", "synthesis failed: "+err.Error())
}

// setFigures writes the take's finish reason and timing as headers (or, after
// the body has started, as the declared trailers).
func setFigures(h http.Header, fin *api.Finish) {
	if fin == nil {
		return
	}
	h.Set("X-Finish-Reason", fin.Reason)
	h.Set("X-Audio-Frames", strconv.Itoa(fin.Frames))
	h.Set("X-Time-To-First-Audio-Ms", strconv.FormatFloat(fin.TimeToFirstAudioMs, 'f', 1, 64))
	h.Set("X-Real-Time-Factor", strconv.FormatFloat(fin.RealTimeFactor, 'f', 4, 64))
	h.Set("X-Batch", strconv.Itoa(fin.Batch))
}
