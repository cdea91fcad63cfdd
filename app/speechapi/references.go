package speechapi

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"proscenium/engine/api"
)

// Per-request reference voices (SGLang-Omni's ref_audio + ref_text and
// fish-speech's references: [{audio, text}]): each recording is given as
// base64 or a data URL, read (WAV, FLAC, MP3 or Ogg Opus, 2–30 s), encoded
// by the model's codec and put before the text as MODEL.md §4 lays out.
// Nothing is saved.

// ReferenceEncoder turns a recording (the file's bytes) into codes, one
// []int of every codebook's code per frame. Its errors are the recording's
// problems (unreadable, too short, …), answered with 400.
type ReferenceEncoder func(recording []byte) ([][]int, error)

// Reference limits: the recordings of one request together, decoded from
// base64 (the server's 1 MiB body limit holds them), and their count.
const (
	DefaultMaxReferences     = 4
	DefaultMaxReferenceBytes = 700 << 10
)

// referenceBody is one entry of "references".
type referenceBody struct {
	Audio *string `json:"audio"`
	Text  *string `json:"text"`
}

// recording is a request's reference before encoding.
type recording struct {
	param, textParam string // the fields it came from, for errors
	audio            []byte
	text             string
}

// WithReferences makes per-request references speakable, encoded by enc.
// Without it a request with references is refused.
func (h *Handler) WithReferences(enc ReferenceEncoder) *Handler {
	h.encodeRef = enc
	return h
}

// parseReferences checks ref_audio/ref_text and references and decodes the
// recordings: at most lim.MaxReferences of them, lim.MaxReferenceBytes in
// all (beyond it, 413).
func parseReferences(b *speechBody, lim Limits) ([]recording, error) {
	var refs []recording
	switch {
	case b.RefAudio != nil && b.RefText == nil:
		return nil, badParam("ref_text", "ref_audio needs ref_text: what the recording says")
	case b.RefText != nil && b.RefAudio == nil:
		return nil, badParam("ref_audio", "ref_text needs ref_audio: the recording it transcribes")
	case b.RefAudio != nil:
		refs = append(refs, recording{param: "ref_audio", textParam: "ref_text", audio: []byte(*b.RefAudio), text: *b.RefText})
	}
	for i, r := range b.References {
		p := fmt.Sprintf("references[%d]", i)
		if r.Audio == nil || r.Text == nil {
			return nil, badParam(p, "%s needs audio (base64 or a data URL) and text (what it says)", p)
		}
		refs = append(refs, recording{param: p + ".audio", textParam: p + ".text", audio: []byte(*r.Audio), text: *r.Text})
	}
	if len(refs) > lim.MaxReferences {
		return nil, badParam("references", "%d references, at most %d", len(refs), lim.MaxReferences)
	}
	if err := checkTranscripts(refs); err != nil {
		return nil, err
	}
	total := 0
	for i := range refs {
		a, err := decodeAudioField(string(refs[i].audio))
		if err != nil {
			return nil, badParam(refs[i].param, "%s: %s", refs[i].param, err)
		}
		refs[i].audio = a
		total += len(a)
		if total > lim.MaxReferenceBytes {
			return nil, &requestError{Status: http.StatusRequestEntityTooLarge, Param: refs[i].param,
				Message: fmt.Sprintf("the reference recordings are more than %d bytes together: send shorter or compressed ones (MP3, Ogg Opus)", lim.MaxReferenceBytes)}
		}
	}
	return refs, nil
}

// checkTranscripts refuses an empty transcript or one holding a structural
// token, naming its field; parseReferences calls it before any recording
// is decoded.
func checkTranscripts(refs []recording) error {
	for _, r := range refs {
		switch {
		case strings.TrimSpace(r.text) == "":
			return badParam(r.textParam, "the transcript of %s is empty: give what the recording says", r.param)
		case !utf8.ValidString(r.text):
			return badParam(r.textParam, "%s is not valid UTF-8", r.textParam)
		case strings.Contains(r.text, "<|"):
			return badParam(r.textParam, "%s holds a structural token (<|…|>): give only what the recording says", r.textParam)
		}
	}
	return nil
}

// countReferences counts the references of a speech body read from r, up
// to one more than max: ref_audio, and each element of "references" begun
// before r ends (a body cut at a limit). A body that is not a JSON object
// counts 0.
func countReferences(r io.Reader, max int) int {
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0
	}
	n := 0
	for dec.More() && n <= max {
		key, err := dec.Token()
		if err != nil {
			return n
		}
		switch key {
		case "ref_audio":
			n++
			if skipValue(dec) != nil {
				return n
			}
		case "references":
			if t, err := dec.Token(); err != nil || t != json.Delim('[') {
				return n
			}
			for dec.More() && n <= max {
				n++ // begun: counted even if r ends inside it
				if skipValue(dec) != nil {
					return n
				}
			}
			if _, err := dec.Token(); err != nil {
				return n
			}
		default:
			if skipValue(dec) != nil {
				return n
			}
		}
	}
	return n
}

// skipValue reads past the next value of dec.
func skipValue(dec *json.Decoder) error {
	var v json.RawMessage
	return dec.Decode(&v)
}

// decodeAudioField reads base64 (standard or URL alphabet, padded or not)
// or a data URL "data:<type>;base64,<data>".
func decodeAudioField(s string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		if !ok || !strings.HasSuffix(meta, ";base64") {
			return nil, errors.New("a data URL must be data:<type>;base64,<data>")
		}
		s = data
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("the recording is empty")
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64 (give the file's bytes in base64 or as a data URL)")
}

// encodeReferences encodes the request's recordings; an unreadable one is
// a 400 naming its field.
func (h *Handler) encodeReferences(recs []recording) ([]api.Reference, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	if h.encodeRef == nil {
		return nil, badParam(recs[0].param, "this server does not take reference recordings")
	}
	out := make([]api.Reference, len(recs))
	for i, r := range recs {
		codes, err := h.encodeRef(r.audio)
		if err != nil {
			return nil, badParam(r.param, "%s: %s", r.param, err)
		}
		out[i] = api.Reference{Transcript: r.text, Codes: codes}
	}
	return out, nil
}

// references are the request's voice's reference (a library voice) followed
// by its own recordings.
func (h *Handler) references(req speechRequest) ([]api.Reference, error) {
	var out []api.Reference
	if req.voice.Reference != "" {
		if h.library == nil {
			return nil, badParam("voice", "voice %q has a reference recording and this server keeps no voice library", req.voice.Name)
		}
		refs, err := h.library.References(req.voice)
		if err != nil {
			return nil, badParam("voice", "%s", err)
		}
		out = refs
	}
	own, err := h.encodeReferences(req.recordings)
	if err != nil {
		return nil, err
	}
	return append(out, own...), nil
}
