// Package studio is what every feature package of the studio (app/...)
// shares with the UI: the kinds of error the UI shows (errors.Is finds
// them through any wrapping), the events pushed to the UI and the Hub that
// fans them out, notices for the status line, and byte sizes in messages.
//
// It holds no feature's state and imports no other package of the module:
// every app package may import it.
package studio

import "sync"

// Event is one thing the service pushes to the UI; Name says what Data is.
type Event struct {
	Name string `json:"name"`
	Data any    `json:"data"`
}

// Event names.
const (
	EventModel       = "model"        // Data: ModelStatus, after every change of the model state
	EventTake        = "take"         // Data: Take, as a take starts, progresses and ends, or is renamed
	EventTakeRemoved = "take_removed" // Data: the take id, deleted or evicted
	EventStats       = "stats"        // Data: StatsView, after a take ends or the model changes
	EventAudio       = "audio"        // Data: AudioEvent, the waveform of each chunk
	EventPCM         = "pcm"          // Data: *PCMChunk, binary over the WebSocket; not sent to the window
	EventLoad        = "load"         // Data: LoadProgress, while a model loads
	EventNotice      = "notice"       // Data: Notice, a message for the status line
	EventStudio      = "studio"       // Data: StudioStatus, when the audio device or warnings change
	EventPlayback    = "playback"     // Data: PlaybackStatus, when playback starts, pauses or stops
	EventServer      = "server"       // Data: ServerStatus, when the speech server starts, stops or answers a request
)

// Notice levels.
const (
	NoticeInfo    = "info"
	NoticeWarning = "warning"
	NoticeError   = "error"
)

// Notice is a message for the status line.
type Notice struct {
	Level string `json:"level"`
	Text  string `json:"text"`
}

// BinaryEvent is event data that travels to the browser as one binary
// WebSocket message instead of JSON.
type BinaryEvent interface {
	BinaryMessage() []byte
}

// Hub fans events out to subscribers: the Wails runtime in the desktop
// window, one per WebSocket in the browser. Subscribers run on the
// publishing goroutine; they must not block or call back into the Service.
type Hub struct {
	mu   sync.Mutex
	next int
	subs map[int]func(Event)
}

// NewHub returns a hub with no subscribers.
func NewHub() *Hub { return &Hub{subs: map[int]func(Event){}} }

// Subscribe adds fn and returns the function that removes it.
func (h *Hub) Subscribe(fn func(Event)) (unsubscribe func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id := h.next
	h.next++
	h.subs[id] = fn
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, id)
	}
}

// Subscribers counts the subscribers (the desktop window, the browser's
// event sockets).
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Publish sends e to every subscriber. A nil hub drops it.
func (h *Hub) Publish(e Event) {
	if h == nil {
		return
	}
	h.mu.Lock()
	fns := make([]func(Event), 0, len(h.subs))
	for _, fn := range h.subs {
		fns = append(fns, fn)
	}
	h.mu.Unlock()
	for _, fn := range fns {
		fn(e)
	}
}

// Send publishes an event named name carrying data. A nil hub drops it.
func (h *Hub) Send(name string, data any) { h.Publish(Event{Name: name, Data: data}) }

// Notice publishes a message for the status line (EventNotice).
func (h *Hub) Notice(level, text string) { h.Send(EventNotice, Notice{level, text}) }
