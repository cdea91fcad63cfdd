// Package speechapi is the OpenAI-compatible speech endpoint of
// `proscenium serve`: POST /v1/audio/speech (WAV or raw PCM, whole or streamed
// as frames are decoded), GET /v1/models and GET /healthz. It validates
// requests strictly (unknown fields, unsupported formats and speeds are
// refused by name), queues them in front of the one engine, and maps engine
// events to HTTP. It owns no model: the caller supplies the engine.
package speechapi
