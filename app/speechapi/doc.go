// Package speechapi is the OpenAI-compatible speech endpoint of
// `proscenium serve`: POST /v1/audio/speech (every OpenAI response_format,
// any offered sample_rate and speed, whole or streamed as raw audio or
// server-sent events as frames are decoded), GET /v1/models (the model under
// each accepted name), GET /v1/audio/voices (the user's named voices) and
// GET /healthz. It validates requests strictly (unknown fields, names and
// out-of-range values are refused naming the field), resolves the voice
// (app/voice), queues requests in front of the one engine, and turns the
// engine's chunks into the reply through engine/audio's stretch, resample
// and encode. It owns no model: the caller supplies the engine.
package speechapi
