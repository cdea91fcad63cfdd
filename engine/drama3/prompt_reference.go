package drama3

import (
	"fmt"
	"strings"
)

// This file builds reference-voice (cloning) prompts (MODEL.md §4): a system
// message naming each reference's transcript under its speaker tag, then the
// references' codes as audio rows, then the user's text as in the
// default-voice prompt. The rows of such a prompt are not all tokens: an
// audio row's backbone input is the feedback row of its codes (MODEL.md §3),
// so a prompt is a list of rows, each a token or a frame of codes, which
// every backend can take (the CPU backbone's BackboneRow, a device backend's
// embedding upload). The assembly is an assumption listed in docs/MODEL.md
// ("Reference voices").

// Reference-prompt strings [public strings, S2 layout].
const (
	referenceSystem = "convert the provided text to speech reference to the following:\n\nText:\n"
	referenceSpeech = "\n\nSpeech:\n"
)

// MaxReferences is the most references one prompt takes: one speaker tag
// each (<|speaker:0|> … <|speaker:15|>).
const MaxReferences = SpeakerTokens

// PromptRow is one backbone row of a prompt.
type PromptRow struct {
	// Token is the row's token id; for an audio row, <|semantic:c0|>.
	Token int
	// Codes is nil for a text row. For an audio row it is the frame's codes,
	// codebook 0 first, and the row's input is their feedback row
	// (E_text[<|semantic:c0|>] + Σ_i E_cb_i[c_i]) / sqrt(codebooks + 1)
	// instead of E_text[Token].
	Codes []int
}

// Prompt is a take's prompt as backbone rows.
type Prompt []PromptRow

// TextPrompt wraps token ids (a default-voice prompt) as rows.
func TextPrompt(ids []int) Prompt {
	p := make(Prompt, len(ids))
	for i, id := range ids {
		p[i].Token = id
	}
	return p
}

// Tokens returns every row's token id (audio rows as <|semantic:c0|>).
func (p Prompt) Tokens() []int {
	ids := make([]int, len(p))
	for i, r := range p {
		ids[i] = r.Token
	}
	return ids
}

// AudioRows counts the rows that carry codes.
func (p Prompt) AudioRows() int {
	n := 0
	for _, r := range p {
		if r.Codes != nil {
			n++
		}
	}
	return n
}

// Reference is one recording of a cloned voice: the transcript of what it
// says (typed by the user) and its codes from the codec encoder, one
// []int of every codebook's code per frame, codebook 0 first.
type Reference struct {
	Transcript string
	Codes      [][]int
}

// ReferenceVoice returns the rows of the reference-voice prompt for text:
//
//	<|im_start|>system\nconvert the provided text to speech reference to the following:\n\nText:\n
//	<|speaker:0|>{transcript 0}\n<|speaker:1|>{transcript 1}…\n\nSpeech:\n
//	{the references' frames, concatenated along time, one audio row each}
//	<|im_end|>\n<|im_start|>user\n{text}<|im_end|>\n<|im_start|>assistant\n<|voice|>
//
// entries bounds each codebook's codes (the backend's CodebookEntries,
// codebook 0 first). Transcripts are checked like user text and may not hold
// speaker tags (the prompt adds them); every reference needs at least one
// frame. With no references it is DefaultVoice.
func (p *PromptBuilder) ReferenceVoice(text string, refs []Reference, entries []int) (Prompt, error) {
	if len(refs) == 0 {
		ids, err := p.DefaultVoice(text)
		if err != nil {
			return nil, err
		}
		return TextPrompt(ids), nil
	}
	if len(refs) > MaxReferences {
		return nil, fmt.Errorf("%d references, at most %d (one speaker tag each)", len(refs), MaxReferences)
	}
	if len(entries) < 1 {
		return nil, fmt.Errorf("reference prompt: the backend reports no codebooks")
	}
	body, err := p.CheckText(text)
	if err != nil {
		return nil, err
	}
	var sys strings.Builder
	sys.WriteString(imStart + "system\n" + referenceSystem)
	frames := 0
	for i, r := range refs {
		tr, err := p.CheckText(r.Transcript)
		if err != nil {
			return nil, fmt.Errorf("reference %d transcript: %w", i, err)
		}
		if strings.Contains(tr, "<|speaker:") {
			return nil, fmt.Errorf("reference %d transcript: speaker tags are not allowed there (the prompt adds <|speaker:%d|>)", i, i)
		}
		if len(r.Codes) == 0 {
			return nil, fmt.Errorf("reference %d has no frames of codes", i)
		}
		if i > 0 {
			sys.WriteString("\n")
		}
		sys.WriteString(speakerTag(i) + tr)
		frames += len(r.Codes)
	}
	sys.WriteString(referenceSpeech)
	head, err := p.tok.Encode(sys.String())
	if err != nil {
		return nil, &TextError{Offset: -1, Reason: err.Error()}
	}
	tail, err := p.tok.Encode(imEnd + "\n" + imStart + "user\n" + body + imEnd + "\n" + imStart + "assistant\n" + voiceToken)
	if err != nil {
		return nil, &TextError{Offset: -1, Reason: err.Error()}
	}
	if n := len(head) + frames + len(tail); n > p.limits.MaxPromptTokens {
		return nil, &TextError{Offset: -1, Reason: fmt.Sprintf("the prompt is %d rows (%d of them reference audio), more than the limit of %d", n, frames, p.limits.MaxPromptTokens)}
	}
	prompt := TextPrompt(head)
	for i, r := range refs {
		for f, codes := range r.Codes {
			if len(codes) != len(entries) {
				return nil, fmt.Errorf("reference %d frame %d: %d codes, the model has %d codebooks", i, f, len(codes), len(entries))
			}
			for c, v := range codes {
				if v < 0 || v >= entries[c] {
					return nil, fmt.Errorf("reference %d frame %d: code %d of codebook %d outside [0, %d)", i, f, v, c, entries[c])
				}
			}
			id, ok := p.tok.TokenID(fmt.Sprintf("<|semantic:%d|>", codes[0]))
			if !ok {
				return nil, fmt.Errorf("reference %d frame %d: the tokenizer has no <|semantic:%d|>", i, f, codes[0])
			}
			prompt = append(prompt, PromptRow{Token: id, Codes: append([]int(nil), codes...)})
		}
	}
	return append(prompt, TextPrompt(tail)...), nil
}
