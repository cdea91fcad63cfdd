package speechapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"proscenium/engine"
)

// Response formats.
const (
	FormatWAV = "wav"
	FormatPCM = "pcm"
)

// speechBody is the JSON body of POST /v1/audio/speech: OpenAI's fields plus
// the sampler extensions. Pointers tell an absent field from a zero one.
type speechBody struct {
	Model          *string  `json:"model"`
	Input          *string  `json:"input"`
	Voice          *string  `json:"voice"`
	ResponseFormat *string  `json:"response_format"`
	Speed          *float64 `json:"speed"`
	Stream         *bool    `json:"stream"`
	Instructions   *string  `json:"instructions"`

	Temperature *float64 `json:"temperature"`
	TopP        *float64 `json:"top_p"`
	TopK        *int     `json:"top_k"`
	Seed        *uint64  `json:"seed"`
	MaxFrames   *int     `json:"max_frames"`
}

// speechRequest is a validated request.
type speechRequest struct {
	engine.SpeechRequest
	Format string
	Stream bool
}

// requestError is a 400 answer naming the offending field.
type requestError struct {
	Param   string
	Message string
}

func (e *requestError) Error() string { return e.Message }

func badParam(param, format string, args ...any) error {
	return &requestError{Param: param, Message: fmt.Sprintf(format, args...)}
}

// parseSpeech decodes and validates a request body against the limits and
// the served model id. Absent sampling fields take the public defaults.
func parseSpeech(body []byte, lim Limits, modelID string) (speechRequest, error) {
	var b speechBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return speechRequest{}, jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return speechRequest{}, badParam("", "the body must hold exactly one JSON object")
	}

	var r speechRequest
	switch {
	case b.Model == nil:
		return r, badParam("model", "model is required (this server serves %q)", modelID)
	case *b.Model != modelID:
		return r, badParam("model", "unknown model %q: this server serves %q", *b.Model, modelID)
	}
	if b.Input == nil {
		return r, badParam("input", "input is required")
	}
	text := *b.Input
	switch {
	case !utf8.ValidString(text):
		return r, badParam("input", "input is not valid UTF-8")
	case strings.TrimSpace(text) == "":
		return r, badParam("input", "input is empty")
	case utf8.RuneCountInString(text) > lim.MaxInputChars:
		return r, badParam("input", "input is %d characters, the limit is %d", utf8.RuneCountInString(text), lim.MaxInputChars)
	}
	if b.Voice != nil && *b.Voice != "default" {
		return r, badParam("voice", "unknown voice %q: only \"default\" is available (no voice cloning yet)", *b.Voice)
	}
	if b.Instructions != nil {
		return r, badParam("instructions", "instructions are not supported: write directions such as [whispering] into the input")
	}
	r.Format = FormatWAV
	if b.ResponseFormat != nil {
		switch f := *b.ResponseFormat; f {
		case FormatWAV, FormatPCM:
			r.Format = f
		default:
			return r, badParam("response_format", "response_format %q is not supported: use \"wav\" or \"pcm\"", f)
		}
	}
	if b.Speed != nil && *b.Speed != 1 {
		return r, badParam("speed", "speed %v is not supported: only 1.0", *b.Speed)
	}
	if b.Stream != nil {
		r.Stream = *b.Stream
	}
	if r.Stream && r.Format != FormatPCM {
		return r, badParam("stream", "streaming needs response_format \"pcm\" (a WAV header must know its length)")
	}

	r.Text = text
	r.Sampling = engine.DefaultSampling()
	if b.Temperature != nil {
		t := *b.Temperature
		if math.IsNaN(t) || t < 0 || t > 100 {
			return r, badParam("temperature", "temperature must be in [0, 100] (0 is greedy), got %v", t)
		}
		r.Sampling.Temperature = float32(t)
	}
	if b.TopP != nil {
		p := *b.TopP
		if !(p > 0 && p <= 1) {
			return r, badParam("top_p", "top_p must be in (0, 1] (1 is off), got %v", p)
		}
		r.Sampling.TopP = float32(p)
	}
	if b.TopK != nil {
		if *b.TopK < 0 {
			return r, badParam("top_k", "top_k must be ≥ 0 (0 is off), got %d", *b.TopK)
		}
		r.Sampling.TopK = *b.TopK
	}
	if b.Seed != nil {
		r.Seed = *b.Seed
	}
	r.MaxFrames = lim.DefaultMaxFrames
	if b.MaxFrames != nil {
		if *b.MaxFrames < 1 || *b.MaxFrames > lim.MaxFrames {
			return r, badParam("max_frames", "max_frames must be in [1, %d], got %d", lim.MaxFrames, *b.MaxFrames)
		}
		r.MaxFrames = *b.MaxFrames
	}
	return r, nil
}

// jsonError turns a decoding error into a 400 that names the field.
func jsonError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	msg := err.Error()
	switch {
	case errors.As(err, &typeErr):
		return badParam(typeErr.Field, "field %q must be a JSON %s", typeErr.Field, typeErr.Type)
	case errors.As(err, &syntaxErr):
		return badParam("", "the body is not valid JSON: %s at byte %d", msg, syntaxErr.Offset)
	case strings.HasPrefix(msg, "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
		return badParam(field, "unknown field %q", field)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return badParam("", "the body is empty or cut short: a JSON object is required")
	}
	return badParam("", "the body is not a valid request: %s", msg)
}
