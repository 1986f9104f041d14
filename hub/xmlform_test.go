package hub_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
)

// A fat ping sent without Content-Type: application/xml (curl's
// --data-binary sends application/x-www-form-urlencoded) is refused with
// 415 naming the content type the hub wants, never as a form that does not
// parse ("invalid semicolon separator in query"), and nothing is stored.
func TestFatPing_XMLSentAsFormNamesApplicationXML(t *testing.T) {
	f := newFixture(t)
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	spec, err := os.ReadFile("../changefeed/testdata/spec/notif_1_3_payload.xml")
	if err != nil {
		t.Fatal(err)
	}
	before := f.LastSeq()
	for name, body := range map[string]string{
		"the specification's sample":  string(spec),
		"after white space and a BOM": "\r\n \xef\xbb\xbf\n" + hubtest.Notif("change-notification", t0, t1),
	} {
		req, _ := http.NewRequest(http.MethodPost, f.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for _, l := range hubtest.Links(ch.Topic, f.URL) {
			req.Header.Add("Link", l)
		}
		status, answer := hubtest.Do(t, req)
		if status != http.StatusUnsupportedMediaType || !strings.Contains(answer, "Content-Type: application/xml") || strings.Contains(answer, "semicolon") {
			t.Errorf("%s sent as a form: %d %q, want 415 naming Content-Type: application/xml", name, status, answer)
		}
	}
	if got := f.LastSeq(); got != before {
		t.Fatalf("the log moved from %d to %d on refused publishes", before, got)
	}
	// a form is still a form
	if status, answer := f.PostForm(hubtest.SubscribeForm(ch.Topic, "http://127.0.0.1:1/cb")); status == http.StatusUnsupportedMediaType {
		t.Fatalf("a subscribe form: %d %q", status, answer)
	}
}
