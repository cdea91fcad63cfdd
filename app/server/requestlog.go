package server

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"proscenium/app/studio"
)

// This file is serve's access log: one log/slog line per request, written
// when the response is complete, with the status, the bytes sent and the
// duration, and for a take the frames, the finish reason, the real-time
// factor, the engine's time to first audio and the batch it ran in (read
// from the X-Audio-Frames, X-Finish-Reason, X-Real-Time-Factor,
// X-Time-To-First-Audio-Ms and X-Batch headers or trailers the speech API
// sets). The query
// string and the headers are not logged: they may hold a key.

// AccessLog wraps h so that every request is logged to log (the studio's
// server panel keeps its own list of speech API requests: LogRequests).
func AccessLog(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recordingWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			status, closed := loggedStatus(r, rec)
			attrs := []slog.Attr{
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", status),
				slog.Int64("bytes", rec.bytes),
				slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
				slog.String("remote", r.RemoteAddr),
			}
			if closed {
				// What the server had begun to answer before the client left.
				attrs = append(attrs, slog.Bool("client_closed", true), slog.Int("status_sent", rec.status))
			}
			hdr := w.Header()
			if f, err := strconv.Atoi(hdr.Get("X-Audio-Frames")); err == nil {
				attrs = append(attrs, slog.Int("frames", f), slog.String("finish", hdr.Get("X-Finish-Reason")))
				if rtf, err := strconv.ParseFloat(hdr.Get("X-Real-Time-Factor"), 64); err == nil {
					attrs = append(attrs, slog.Float64("real_time_factor", rtf))
				}
				if ms, err := strconv.ParseFloat(hdr.Get("X-Time-To-First-Audio-Ms"), 64); err == nil {
					// In the engine, from the request's arrival: beside the
					// client's first byte it says where a slow start went.
					attrs = append(attrs, slog.Float64("first_audio_ms", ms))
				}
				if b, err := strconv.Atoi(hdr.Get("X-Batch")); err == nil {
					attrs = append(attrs, slog.Int("batch", b)) // the most takes it ran beside, itself included
				}
			}
			log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
		}()
		h.ServeHTTP(rec, r)
	})
}

// StatusClientClosed is the status logged for a request whose client left
// before its reply was complete (nginx's 499): a take cut by a disconnect
// is not a 200 in the log.
const StatusClientClosed = 499

// loggedStatus is the status to log for r and whether the client closed
// the connection first (its context ended while the handler ran; not for a
// connection handed over to a WebSocket).
func loggedStatus(r *http.Request, rec *recordingWriter) (int, bool) {
	if r.Context().Err() != nil && rec.status != http.StatusSwitchingProtocols {
		return StatusClientClosed, true
	}
	return rec.status, false
}

// Hijack hands the connection over (the WebSocket /api/events): the access
// log then records 101 Switching Protocols.
func (w *recordingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("the connection cannot be taken over")
	}
	w.status, w.wrote = http.StatusSwitchingProtocols, true
	return hj.Hijack()
}

// NewRequestLogger is serve's logger for LogRequests: format "text"
// (key=value) or "json", one line per record on w.
func NewRequestLogger(w io.Writer, format string) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, fmt.Errorf("%w: log format %q: want text or json", studio.ErrInvalid, format)
}
