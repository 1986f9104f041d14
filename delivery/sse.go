package delivery

import "net/http"

// Events returns the handler of Server-Sent Events sessions (wire.PathEvents):
// the same sessions as WebSockets, written as a text/event-stream.
func (ws *WebSockets) Events() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not implemented yet", http.StatusNotImplemented)
	})
}
