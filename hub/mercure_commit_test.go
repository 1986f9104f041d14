package hub_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/internal/hubtest"
)

// A Mercure text update that passed its checks while the channel had no
// ResourceSync history, and whose commit comes after the channel's first
// change notification (two publishes racing), is refused at its commit:
// the channel's history, serialised there, decides. Text committed
// before any notification is stored.
func TestMercure_TextRacingAFirstChangeNotificationIsRefusedAtCommit(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ch := f.Channel(hub.Channel{Topic: openTopic, Trust: hub.TrustOpen})
	early, err := f.Hub.PrepareMercure(ctx, ch, []byte("text before"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := early(); err != nil {
		t.Fatalf("text on a channel without ResourceSync history: %v", err)
	}
	late, err := f.Hub.PrepareMercure(ctx, ch, []byte("text racing"))
	if err != nil {
		t.Fatalf("text checked before the first notification: %v", err)
	}
	if s, r := f.PostXML(hubtest.Notif("change-notification", t0, t1), hubtest.Links(ch.Topic, f.URL)); s != 200 {
		t.Fatalf("the first change notification: %d %q", s, r)
	}
	last := f.LastSeq()
	res, err := late()
	var pe *hub.PublishError
	if !errors.As(err, &pe) || pe.Code != string(hub.ReasonInvalid) || !strings.Contains(pe.Msg, "history holds change notifications") {
		t.Fatalf("text committed after the channel's first change notification: %+v, %v; want refused (invalid, naming the history)", res, err)
	}
	if got := f.LastSeq(); got != last {
		t.Fatalf("the refused text was stored: the log's last sequence %d, was %d", got, last)
	}
}
