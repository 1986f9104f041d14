package bench

import (
	"bytes"
	"io"
	"net/http"
	"strings"
)

// bytesReader returns a reader of b that net/http can rewind.
func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// drain reads and closes a response body and returns its start, trimmed,
// for error messages; reading to the end lets the connection be reused.
func drain(resp *http.Response) string {
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, resp.Body)
	return strings.TrimSpace(string(head))
}
