package app

import (
	"proscenium/app/speechapi"
	"proscenium/app/voicelib"
	"proscenium/engine"
)

// SpeechAPI is the speech API over the service, as `proscenium serve` and
// the studio's speech server answer it: takes through APIEngine (recorded as
// API takes), the user's voices, the token counter, per-request reference
// recordings and the voice library, within lim (speechapi.DefaultLimits,
// or `proscenium serve`'s).
func SpeechAPI(s *Service, modelID string, lim speechapi.Limits) *speechapi.Handler {
	return speechapi.New(func() (engine.Engine, error) { return APIEngine(s) }, modelID, lim).
		WithVoices(s.Voices).
		WithTokenCounter(func(text string) (int, error) { c, err := s.CountTokens(text); return c.Tokens, err }).
		WithReferences(s.EncodeReference).
		WithVoiceLibrary(speechapi.VoiceLibrary{References: s.VoiceReferences, Create: s.CreateVoice,
			MaxUploadBytes: voicelib.MaxAudioBytes + 64<<10, MaxRecordingBytes: voicelib.MaxAudioBytes})
}
