package hubtest

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/rshub/rshub/hub"
)

// The Intake's hub URL and its channel's topic.
const (
	IntakeURL   = "http://hub.test/"
	IntakeTopic = "http://127.0.0.1:1/fuzz/change/"
	// IntakeLinks is the Link header of a correct fat ping to the Intake.
	IntakeLinks = `<` + IntakeTopic + `>; rel="self", <` + IntakeURL + `>; rel="hub"`
)

// Intake is a hub over Backing's log and store, not running, whose
// handler a fuzz target calls directly (so that any header value reaches
// it), with the notifications it acknowledged. It holds the open channel
// "fuzz" on IntakeTopic.
type Intake struct {
	Hub   *hub.Hub
	Log   hub.Log
	Store hub.Store
	Mux   *http.ServeMux
	acked map[uint64][]byte // what a 200 said the log holds, by sequence
}

// NewIntake builds an Intake with a client that may reach public
// addresses only, a 64 KiB body limit and a silent logger; edit (if not
// nil) changes that configuration, and mount (if not nil) adds routes to
// the hub's mux.
func NewIntake(tb testing.TB, edit func(*hub.Config), mount func(*hub.Hub, *http.ServeMux)) *Intake {
	tb.Helper()
	lg, st := Backing(tb)
	cfg := hub.Config{HubURL: IntakeURL, Store: st, Log: lg, Client: Client(tb),
		MaxBody: 64 << 10, Logger: slog.New(slog.DiscardHandler)}
	if edit != nil {
		edit(&cfg)
	}
	h, err := hub.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := h.PutChannel(context.Background(), hub.Channel{Topic: IntakeTopic, Name: "fuzz", Trust: hub.TrustOpen}); err != nil {
		tb.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	if mount != nil {
		mount(h, mux)
	}
	return &Intake{Hub: h, Log: lg, Store: st, Mux: mux, acked: map[uint64][]byte{}}
}

// Post sends a fat ping to the handler and records what it acknowledged.
func (z *Intake) Post(t *testing.T, body []byte, link string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, IntakeURL, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/xml")
	req.Header["Link"] = []string{link}
	rec := httptest.NewRecorder()
	z.Mux.ServeHTTP(rec, req)
	resp := rec.Body.String()
	if rec.Code == http.StatusOK && strings.HasPrefix(resp, "stored seq ") {
		seq, err := strconv.ParseUint(rec.Header().Get("Rshub-Seq"), 10, 64)
		if err != nil {
			t.Fatalf("200 without a sequence: %q", rec.Header().Get("Rshub-Seq"))
		}
		if _, ok := z.acked[seq]; ok {
			t.Fatalf("seq %d acknowledged twice", seq)
		}
		z.acked[seq] = append([]byte(nil), body...)
	}
	return rec.Code, resp
}

// CheckLog fails unless the log holds exactly the acknowledged
// notifications.
func (z *Intake) CheckLog(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	_, last, err := z.Log.Bounds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if last != uint64(len(z.acked)) {
		t.Fatalf("the log holds %d records, %d were acknowledged", last, len(z.acked))
	}
	if last == 0 {
		return
	}
	rec, err := z.Log.Next(ctx, "fuzz", last)
	if err != nil || rec.Seq != last || string(rec.Body) != string(z.acked[last]) {
		t.Fatalf("log record %d (%v) is not the body acknowledged", last, err)
	}
}
