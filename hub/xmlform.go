package hub

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
)

// xmlAsForm is the refusal of an XML body sent as a form: curl's --data
// and --data-binary send application/x-www-form-urlencoded unless told
// otherwise, so a Source trying its first fat ping by hand gets this.
const xmlAsForm = "the body is XML but its Content-Type is application/x-www-form-urlencoded (curl's default for --data): " +
	"send a change notification with Content-Type: application/xml (curl -H 'Content-Type: application/xml')"

// xmlBody reports whether r's body starts, after white space and a byte
// order mark, with '<': no form the hub takes does (each starts with a
// hub.* key), every XML document does. The bytes peeked at stay in r.Body.
func xmlBody(r *http.Request) bool {
	br := bufio.NewReaderSize(r.Body, 512)
	r.Body = struct {
		io.Reader
		io.Closer
	}{br, r.Body}
	head, _ := br.Peek(512) // short at the end of a small body; an error shows again when the form is read
	head = bytes.TrimPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("\xef\xbb\xbf"))
	head = bytes.TrimLeft(head, " \t\r\n")
	return len(head) > 0 && head[0] == '<'
}
