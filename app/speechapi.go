package app

import (
	"errors"

	"proscenium/app/speechapi"
	"proscenium/app/studio"
	"proscenium/app/voice"
	"proscenium/app/voicelib"
	"proscenium/engine/api"
)

// SpeechAPI is the speech API over the service, as `proscenium serve` and
// the studio's speech server answer it: takes through APIEngine (recorded as
// API takes), the user's voices, the token counter, per-request reference
// recordings and the voice library, within lim (speechapi.DefaultLimits,
// or `proscenium serve`'s). As many requests run at once as the settings'
// batch lets the engine run together, unless lim says.
func SpeechAPI(s *Service, modelID string, lim speechapi.Limits) *speechapi.Handler {
	if lim.Batch == 0 {
		lim.Batch, _ = api.BatchOf(s.Settings().Batch) // Validate refused a bad one; 0 then
	}
	return speechapi.New(func() (api.Engine, error) { return APIEngine(s) }, modelID, lim).
		WithVoices(s.Voices).
		WithTokenCounter(func(text string) (int, error) { c, err := s.CountTokens(text); return c.Tokens, err }).
		WithReferences(s.EncodeReference).
		WithVoiceLibrary(speechapi.VoiceLibrary{References: s.VoiceReferences, Create: s.createAPIVoice,
			MaxUploadBytes: voicelib.MaxAudioBytes + 64<<10, MaxRecordingBytes: voicelib.MaxAudioBytes})
}

// createAPIVoice is CreateVoice for POST /v1/audio/voices: a refusal in
// the sentence the API's clients read (studio.Detail).
func (s *Service) createAPIVoice(name, transcript string, recording []byte) ([]voice.Voice, error) {
	vs, err := s.CreateVoice(name, transcript, recording)
	if err != nil {
		err = errors.New(studio.Detail(err))
	}
	return vs, err
}
