package gpuworker

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"proscenium/engine/api"
	"proscenium/engine/drama3"
)

// Hello is the worker's first frame: who it is and what it found.
type Hello struct {
	Protocol int    `json:"protocol"`
	PID      int    `json:"pid"`
	Device   Device `json:"device"` // the GPU; zero in a CPU worker
	// Backends are the LoadRequest backends this worker can load ("cpu",
	// "cuda"); a GPU worker without a Drama 3 pipeline lists none.
	Backends []string `json:"backends"`
}

// Device is the GPU the worker opened and the kernels it chose
// (engine/cuda.DeviceInfo, copied field by field by the worker).
type Device struct {
	Name          string `json:"name"`
	Ordinal       int    `json:"ordinal"`
	CCMajor       int    `json:"cc_major"`
	CCMinor       int    `json:"cc_minor"`
	Multiprocs    int    `json:"multiprocessors"`
	L2Bytes       int    `json:"l2_bytes"`
	TotalMem      int64  `json:"total_mem_bytes"`
	FreeMem       int64  `json:"free_mem_bytes"`
	DriverVersion int    `json:"driver_version"`
	Kernels       string `json:"kernels"`
	KernelBuild   string `json:"kernel_build"`
}

func (d Device) String() string {
	return fmt.Sprintf("%s (compute %d.%d, %d SMs, %.1f GiB, %.1f GiB free), CUDA driver %d.%d, kernels %s",
		d.Name, d.CCMajor, d.CCMinor, d.Multiprocs, float64(d.TotalMem)/(1<<30), float64(d.FreeMem)/(1<<30),
		d.DriverVersion/1000, d.DriverVersion%1000/10, d.Kernels)
}

// Request asks the worker to do Op with Args (JSON). IDs are the client's,
// unique per connection.
type Request struct {
	ID   uint64          `json:"id"`
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Ops the worker serves (ServeEngine): one per api.Engine method, on
// engines the worker holds by handle.
const (
	OpLoad       = "load"       // LoadRequest → Event{Load} progress → Loaded
	OpSynthesize = "synthesize" // SynthesizeArgs → Event{Frames}, PCM → FinishWire
	OpStats      = "stats"      // HandleArgs → api.Stats
	OpClose      = "close"      // HandleArgs → nothing
	OpCount      = "count"      // TextArgs → int (api.TokenCounter)
	OpCheck      = "check"      // TextArgs → TextCheck (api.TextChecker)
	OpEncode     = "encode"     // EncodeArgs → EncodedReference (api.ReferenceEncoder)
	OpPrime      = "prime"      // PrimeArgs → api.Primed (api.VoicePrimer)
	OpVoiceKey   = "voice_key"  // PrimeArgs → string (api.VoicePrimer.VoiceKey)
)

// LoadRequest opens a model in the worker: the checkpoint directory, the
// backend ("cpu" or "cuda"), the memory cap in bytes (0: none) and why this
// backend was chosen (the engine's Info.BackendReason, so that the UI says
// the same with the engine in a worker).
type LoadRequest struct {
	Model     string `json:"model"`
	Backend   string `json:"backend"`
	MemoryCap int64  `json:"memory_cap_bytes"`
	// Numerics is the GPU backbone's numerics policy, "fast" (also "") or
	// "exact" (drama3.ParseNumerics); the CPU worker computes exactly.
	Numerics string `json:"numerics,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Batch is open.Options.Batch: the most takes the engine runs
	// together (0: api.DefaultBatch).
	Batch int `json:"batch,omitempty"`
	// VoiceCacheBytes is open.Options.VoiceCacheBytes: the voice cache's
	// most (0: the backend's default).
	VoiceCacheBytes int64 `json:"voice_cache_bytes,omitempty"`
}

// Check refuses a request no backend can take: a negative memory cap or
// voice cache, an unknown numerics policy. The worker checks before it
// loads; engine/open checks its Options by the same rule before it starts
// one.
func (r LoadRequest) Check() error {
	if r.MemoryCap < 0 {
		return fmt.Errorf("memory cap %d bytes: want ≥ 0 (0: none)", r.MemoryCap)
	}
	if r.VoiceCacheBytes < 0 {
		return fmt.Errorf("voice cache of %d bytes: want ≥ 0 (0: the default)", r.VoiceCacheBytes)
	}
	_, err := drama3.ParseNumerics(r.Numerics)
	return err
}

// Loaded answers OpLoad: the engine's handle in the worker and its Info.
type Loaded struct {
	Handle uint64   `json:"handle"`
	Info   api.Info `json:"info"`
}

// HandleArgs names an engine the worker holds.
type HandleArgs struct {
	Handle uint64 `json:"handle"`
}

// SynthesizeArgs asks engine Handle for a take.
type SynthesizeArgs struct {
	Handle  uint64            `json:"handle"`
	Request api.SpeechRequest `json:"request"`
}

// TextArgs asks engine Handle about a script (OpCount, OpCheck).
type TextArgs struct {
	Handle uint64 `json:"handle"`
	Text   string `json:"text"`
}

// TextCheck answers OpCheck: the script's first refusal
// (*drama3.TextError, which the client rebuilds), or none.
type TextCheck struct {
	Problem *TextProblem `json:"problem,omitempty"`
}

// TextProblem is a drama3.TextError on the wire.
type TextProblem struct {
	Offset int    `json:"offset"`
	Token  string `json:"token,omitempty"`
	Reason string `json:"reason"`
}

// EncodeArgs asks engine Handle to encode a reference recording: Samples
// are float32 little-endian, mono at the model's sample rate.
type EncodeArgs struct {
	Handle  uint64 `json:"handle"`
	Samples []byte `json:"samples"`
}

// PrimeArgs asks engine Handle to prime its voice cache with References
// (OpPrime), or for the key it would keep them under (OpVoiceKey).
type PrimeArgs struct {
	Handle     uint64          `json:"handle"`
	References []api.Reference `json:"references"`
}

// EncodedReference answers OpEncode: frame-major codes.
type EncodedReference struct {
	Frames int     `json:"frames"`
	Codes  []int32 `json:"codes"`
}

// FinishWire is api.Finish with its codes, which api.Finish leaves out
// of its JSON: a take made in the worker arrives whole.
type FinishWire struct {
	api.Finish
	Codes [][]int `json:"codes"`
}

// Event is progress of a request: the frames a take has made so far
// (api.EventFrames), or the bytes a load has read.
type Event struct {
	ID     uint64        `json:"id"`
	Frames int           `json:"frames,omitempty"`
	Load   *LoadProgress `json:"load,omitempty"`
}

// LoadProgress is how far a load has come, in bytes of the checkpoint.
type LoadProgress struct {
	Done  int64 `json:"done_bytes"`
	Total int64 `json:"total_bytes"`
}

// Reply ends a request: its result (JSON) or its error. Kind names the
// engine's sentinel the error wraps (see errorKinds), so that errors.Is
// finds it on the client's side too.
type Reply struct {
	ID     uint64          `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	Kind   string          `json:"kind,omitempty"`
}

// errorKinds are the sentinel errors that cross the process boundary.
var errorKinds = map[string]error{
	"invalid_request": api.ErrInvalidRequest,
	"no_voice_cache":  api.ErrNoVoiceCache,
	"voice_not_kept":  api.ErrVoiceNotKept,
}

// kindOf names the sentinel err wraps, or "".
func kindOf(err error) string {
	for k, sentinel := range errorKinds {
		if errors.Is(err, sentinel) {
			return k
		}
	}
	return ""
}

// PCM is a chunk of decoded audio for a request.
type PCM struct {
	ID    uint64
	Chunk api.AudioChunk
}

const pcmHeader = 8 + 4 + 4

// EncodePCM lays out a PCM frame: id uint64, from and to frame int32, then
// the float32 samples, all little-endian.
func EncodePCM(p PCM) []byte {
	b := make([]byte, pcmHeader+4*len(p.Chunk.PCM))
	binary.LittleEndian.PutUint64(b, p.ID)
	binary.LittleEndian.PutUint32(b[8:], uint32(int32(p.Chunk.FromFrame)))
	binary.LittleEndian.PutUint32(b[12:], uint32(int32(p.Chunk.ToFrame)))
	for i, v := range p.Chunk.PCM {
		binary.LittleEndian.PutUint32(b[pcmHeader+4*i:], math.Float32bits(v))
	}
	return b
}

// DecodePCM reads a PCM frame's payload.
func DecodePCM(b []byte) (PCM, error) {
	if len(b) < pcmHeader || (len(b)-pcmHeader)%4 != 0 {
		return PCM{}, fmt.Errorf("gpuworker: PCM payload of %d bytes: %w", len(b), ErrFrame)
	}
	p := PCM{ID: binary.LittleEndian.Uint64(b)}
	p.Chunk.FromFrame = int(int32(binary.LittleEndian.Uint32(b[8:])))
	p.Chunk.ToFrame = int(int32(binary.LittleEndian.Uint32(b[12:])))
	if p.Chunk.FromFrame < 0 || p.Chunk.ToFrame < p.Chunk.FromFrame {
		return PCM{}, fmt.Errorf("gpuworker: PCM frames [%d, %d): %w", p.Chunk.FromFrame, p.Chunk.ToFrame, ErrFrame)
	}
	p.Chunk.PCM = make([]float32, (len(b)-pcmHeader)/4)
	for i := range p.Chunk.PCM {
		p.Chunk.PCM[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[pcmHeader+4*i:]))
	}
	return p, nil
}
