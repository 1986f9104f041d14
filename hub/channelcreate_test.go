package hub_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rshub/rshub/hub"
)

// A private channel on a hub that verifies no subscriber token could never
// be read by anyone: it is refused, naming the flags that give the hub a
// key, through every door that creates channels (PutChannel and
// CreateChannel); with a key it is taken.
func TestChannel_PrivateRefusedWithoutSubscriberKey(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for name, put := range map[string]func(context.Context, hub.Channel) (hub.Channel, error){
		"PutChannel": f.Hub.PutChannel, "CreateChannel": f.Hub.CreateChannel,
	} {
		_, err := put(ctx, hub.Channel{Name: "secret", Hosted: true, Trust: hub.TrustOpen, Private: true})
		if !errors.Is(err, hub.ErrChannelRefused) || !strings.Contains(err.Error(), "--subscriber-jwt-key") || !strings.Contains(err.Error(), "--subscriber-jwks-url") {
			t.Errorf("%s of a private channel on a hub without a subscriber key: %v, want ErrChannelRefused naming --subscriber-jwt-key and --subscriber-jwks-url", name, err)
		}
	}
	if _, err := f.Hub.ChannelByName(ctx, "secret"); !errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("the refused private channel: %v, want ErrNotFound", err)
	}
	keyed, _ := privateFixture(t)
	if _, err := keyed.Hub.CreateChannel(ctx, hub.Channel{Name: "secret", Hosted: true, Trust: hub.TrustOpen, Private: true}); err != nil {
		t.Fatalf("a private channel on a hub with a subscriber key: %v", err)
	}
}

// CreateChannel never replaces: a channel whose name or topic exists is
// refused with an *ExistsError naming the existing channel, and left as it
// was.
func TestCreateChannel_ExistingNameOrTopicRefused(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	orig := hub.Channel{Name: "notes", Topic: "http://127.0.0.1:1/notes", Trust: hub.TrustToken, Token: "first-token-of-16-chars"}
	if _, err := f.Hub.CreateChannel(ctx, orig); err != nil {
		t.Fatal(err)
	}
	for _, again := range []hub.Channel{
		{Name: "notes", Topic: "http://127.0.0.1:1/notes", Trust: hub.TrustToken, Token: "second-token-of-16-chars"},
		{Name: "notes", Topic: "http://127.0.0.1:1/elsewhere", Trust: hub.TrustOpen},
		{Name: "other", Topic: "http://127.0.0.1:1/notes", Trust: hub.TrustOpen},
	} {
		_, err := f.Hub.CreateChannel(ctx, again)
		var ee *hub.ExistsError
		if !errors.As(err, &ee) || !errors.Is(err, hub.ErrChannelExists) || ee.Channel.Name != "notes" {
			t.Errorf("CreateChannel(%+v): %v, want an *ExistsError naming channel notes", again, err)
		}
	}
	if ch, err := f.Hub.ChannelByName(ctx, "notes"); err != nil || ch.Token != orig.Token {
		t.Fatalf("after the refusals: %+v %v, want the first definition", ch, err)
	}
}
