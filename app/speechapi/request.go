package speechapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"proscenium/app/voice"
	"proscenium/engine/api"
	"proscenium/engine/audio/encode"
	"proscenium/engine/audio/stretch"
	"proscenium/engine/sampling"
	"proscenium/internal/jsonerr"
)

// NativeRate is the model's sample rate, and every format's default.
const NativeRate = 44100

// SampleRates are the rates sample_rate accepts.
var SampleRates = []int{NativeRate, 48000, 24000, 22050, 16000}

// Stream formats (stream_format).
const (
	StreamAudio = "audio" // the audio bytes, sent as they are encoded
	StreamSSE   = "sse"   // server-sent events with base64 audio
)

// speechBody is the JSON body of POST /v1/audio/speech: OpenAI's fields,
// SGLang-Omni's spellings (speaker, max_new_tokens) and our extensions.
// Pointers tell an absent field from a zero one.
type speechBody struct {
	Model          *string       `json:"model"`
	Input          *string       `json:"input"`
	Voice          *voiceField   `json:"voice"`
	Speaker        *speakerField `json:"speaker"` // SGLang-Omni's voice
	Instructions   *string       `json:"instructions"`
	ResponseFormat *string       `json:"response_format"`
	Speed          *float64      `json:"speed"`
	StreamFormat   *string       `json:"stream_format"`
	Stream         *bool         `json:"stream"`
	SampleRate     *int          `json:"sample_rate"`

	Temperature  *float64 `json:"temperature"`
	TopP         *float64 `json:"top_p"`
	TopK         *int     `json:"top_k"`
	Seed         *uint64  `json:"seed"`
	MaxFrames    *int     `json:"max_frames"`
	MaxNewTokens *int     `json:"max_new_tokens"` // SGLang-Omni's max_frames

	// Reference voices (references.go): SGLang-Omni's ref_audio + ref_text,
	// fish-speech's references.
	RefAudio   *string         `json:"ref_audio"`
	RefText    *string         `json:"ref_text"`
	References []referenceBody `json:"references"`
}

// voiceField is a voice name, given as a string or as {"id": name}.
type voiceField struct{ name string }

func (v *voiceField) UnmarshalJSON(b []byte) error {
	name, ok := voiceName(b)
	if !ok {
		return badParam("voice", `voice must be a voice name or {"id": name}`)
	}
	v.name = name
	return nil
}

// speakerField is SGLang-Omni's spelling of voiceField.
type speakerField struct{ voiceField }

func (v *speakerField) UnmarshalJSON(b []byte) error {
	name, ok := voiceName(b)
	if !ok {
		return badParam("speaker", `speaker must be a voice name or {"id": name}`)
	}
	v.name = name
	return nil
}

func voiceName(b []byte) (string, bool) {
	var name string
	if err := json.Unmarshal(b, &name); err == nil {
		return name, true
	}
	var obj struct {
		ID *string `json:"id"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obj); err != nil || obj.ID == nil {
		return "", false
	}
	return *obj.ID, true
}

// speechRequest is a validated request.
type speechRequest struct {
	api.SpeechRequest
	Model        string        // as the client named it
	Voice        string        // the voice used
	Format       encode.Format // response_format
	SampleRate   int
	Speed        float64     // 1: unchanged
	StreamFormat string      // "": one whole reply; StreamAudio or StreamSSE
	recordings   []recording // reference recordings, encoded by the handler
	voice        voice.Voice // the resolved voice
}

// requestError is a 400 answer (or Status) naming the offending field.
type requestError struct {
	Status  int // 0: 400
	Param   string
	Message string
}

func (e *requestError) Error() string { return e.Message }

func badParam(param, format string, args ...any) error {
	return &requestError{Param: param, Message: fmt.Sprintf(format, args...)}
}

// ModelNames are the names "model" accepts for the loaded model id: the id,
// "fishaudio/" + id, and OpenAI's speech model names as aliases.
func ModelNames(id string) []string {
	return []string{id, "fishaudio/" + id, "tts-1", "tts-1-hd", "gpt-4o-mini-tts"}
}

// parseSpeech decodes and validates a request body against the limits, the
// served model id and the user's voices. Absent fields take the voice's
// settings, then the defaults: mp3, 44.1 kHz, speed 1, one whole reply.
func parseSpeech(body []byte, lim Limits, modelID string, voices []voice.Voice) (speechRequest, error) {
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
	names := ModelNames(modelID)
	switch {
	case b.Model == nil:
		return r, badParam("model", "model is required: one of %s", quoteAll(names))
	case !slices.Contains(names, *b.Model):
		return r, badParam("model", "unknown model %q: this server accepts %s (all the loaded Drama 3 model)", *b.Model, quoteAll(names))
	}
	r.Model = *b.Model

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

	voiceParam, name := "voice", voice.Default
	switch {
	case b.Voice != nil && b.Speaker != nil:
		return r, badParam("speaker", "give voice or speaker (SGLang-Omni's name for it), not both")
	case b.Voice != nil:
		name = b.Voice.name
	case b.Speaker != nil:
		voiceParam, name = "speaker", b.Speaker.name
	}
	v, err := voice.Resolve(name, voices)
	if err != nil {
		return r, badParam(voiceParam, "%s", err)
	}
	r.Voice = v.Name // an OpenAI name not defined by the user gives "default"
	r.voice = v

	var instructions string
	if b.Instructions != nil && strings.TrimSpace(*b.Instructions) != "" {
		instructions = strings.TrimSpace(*b.Instructions)
		if err := voice.CheckDirection(instructions); err != nil {
			return r, badParam("instructions", "instructions %s", err)
		}
	}
	r.Text = v.Prefix()
	if instructions != "" {
		r.Text += "[" + instructions + "] "
	}
	r.Text += text

	r.Format = encode.MP3 // OpenAI's default
	if b.ResponseFormat != nil {
		f, ok := encode.Lookup(*b.ResponseFormat)
		if !ok {
			return r, badParam("response_format", "response_format %q is not supported: use one of %s", *b.ResponseFormat, quoteAll(encode.Formats()))
		}
		r.Format = f
	}
	r.SampleRate = NativeRate
	if b.SampleRate != nil {
		if !slices.Contains(SampleRates, *b.SampleRate) {
			return r, badParam("sample_rate", "sample_rate %d is not offered: use one of %v (44100 is the model's own)", *b.SampleRate, SampleRates)
		}
		r.SampleRate = *b.SampleRate
	}
	r.Speed = 1
	if b.Speed != nil {
		s := *b.Speed
		if !(s >= stretch.MinSpeed && s <= stretch.MaxSpeed) {
			return r, badParam("speed", "speed must be in [%v, %v], got %v", stretch.MinSpeed, stretch.MaxSpeed, s)
		}
		r.Speed = s
	}

	if b.StreamFormat != nil {
		switch sf := *b.StreamFormat; sf {
		case StreamAudio, StreamSSE:
			r.StreamFormat = sf
		default:
			return r, badParam("stream_format", "stream_format %q is not supported: use %q or %q", sf, StreamAudio, StreamSSE)
		}
	}
	if b.Stream != nil {
		switch {
		case *b.Stream && r.StreamFormat == "":
			r.StreamFormat = StreamAudio
		case !*b.Stream && r.StreamFormat != "":
			return r, badParam("stream", "stream is false but stream_format is %q: leave one out", r.StreamFormat)
		}
	}

	r.Sampling = v.Sampling
	r.Seed = v.Seed
	if b.Temperature != nil {
		if r.Sampling.Temperature, err = sampling.Float32("temperature", *b.Temperature); err != nil {
			return r, settingParam(err)
		}
	}
	if b.TopP != nil {
		if r.Sampling.TopP, err = sampling.Float32("top_p", *b.TopP); err != nil {
			return r, settingParam(err)
		}
	}
	if b.TopK != nil {
		r.Sampling.TopK = *b.TopK
	}
	if err := r.Sampling.Validate(); err != nil {
		return r, settingParam(err)
	}
	if b.Seed != nil {
		r.Seed = *b.Seed
	}
	r.MaxFrames = lim.DefaultMaxFrames
	frames, framesParam := b.MaxFrames, "max_frames"
	if b.MaxNewTokens != nil {
		if b.MaxFrames != nil {
			return r, badParam("max_new_tokens", "give max_frames or max_new_tokens (SGLang-Omni's name for it), not both")
		}
		frames, framesParam = b.MaxNewTokens, "max_new_tokens"
	}
	if frames != nil {
		if *frames < 1 {
			return r, badParam(framesParam, "%s must be at least 1, got %d", framesParam, *frames)
		}
		if max := lim.MaxFrames(); *frames > max {
			return r, badParam(framesParam, "%s %d is %.0f s of audio, more than this server's limit of %.0f s a take (--max-take-seconds): at most %d frames",
				framesParam, *frames, float64(*frames)*samplesPerFrame/NativeRate, float64(max)*samplesPerFrame/NativeRate, max)
		}
		r.MaxFrames = *frames
	}
	r.MaxFrames = min(r.MaxFrames, lim.MaxFrames())
	if r.recordings, err = parseReferences(&b, lim); err != nil {
		return r, err
	}
	return r, nil
}

// settingParam is a refused sampler setting (sampling.Error) as a 400
// naming its field.
func settingParam(err error) error {
	return &requestError{Param: sampling.FieldOf(err), Message: err.Error()}
}

func quoteAll[S ~string](xs []S) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", string(x))
	}
	return strings.Join(q, ", ")
}

// jsonError turns a decoding error into a 400 that names the field.
func jsonError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	msg := err.Error()
	switch {
	case errors.As(err, &typeErr):
		return badParam(typeErr.Field, "%v", jsonerr.Phrase(err))
	case errors.As(err, new(*requestError)):
		return err
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
