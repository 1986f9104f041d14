package embednats

import (
	"slices"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// allowed reports whether subject matches one of allow (nats-server's own
// matching).
func allowed(allow []string, subject string) bool {
	return slices.ContainsFunc(allow, func(f string) bool { return server.SubjectMatchesFilter(subject, f) })
}

// An edge's leaf link may send what its mirrors of the log and of the
// channels bucket need (stream info, consumer create and info, flow
// control), in the origin's domain; never a write to the log or a bucket,
// a change of a stream or consumer, or a read of another bucket.
func TestLeafPermissions_MirrorsReadOnly(t *testing.T) {
	p := LeafPermissions("RSHUB", "rshub.notify", "rshub", []string{"KV_rshub_channels"})
	for _, subj := range []string{
		"$JS.rshub.API.STREAM.INFO.RSHUB",
		"$JS.rshub.API.STREAM.INFO.KV_rshub_channels",
		"$JS.rshub.API.CONSUMER.CREATE.RSHUB.abc.rshub.notify.>",
		"$JS.rshub.API.CONSUMER.CREATE.KV_rshub_channels.abc",
		"$JS.rshub.API.CONSUMER.INFO.KV_rshub_channels.abc",
		"$JS.FC.KV_rshub_channels.x.y",
		"$JS.FC.rshub.hash.KV_rshub_channels.x.y",
	} {
		if !allowed(p.Publish.Allow, subj) {
			t.Errorf("the leaf link may not send %s, which a mirror needs", subj)
		}
	}
	for _, subj := range []string{
		"rshub.notify.a",
		"$KV.rshub_channels.evil",
		"$JS.rshub.API.$KV.rshub_channels.evil",
		"$JS.API.$KV.rshub_channels.evil",
		"$JS.rshub.API.STREAM.PURGE.RSHUB",
		"$JS.rshub.API.STREAM.DELETE.KV_rshub_channels",
		"$JS.rshub.API.STREAM.UPDATE.KV_rshub_channels",
		"$JS.rshub.API.STREAM.MSG.DELETE.KV_rshub_channels",
		"$JS.rshub.API.CONSUMER.DELETE.KV_rshub_channels.abc",
		"$JS.rshub.API.STREAM.INFO.KV_rshub_subs",
		"$JS.rshub.API.CONSUMER.CREATE.KV_rshub_subs",
		"$JS.rshub.API.DIRECT.GET.KV_rshub_subs",
		"$JS.rshub.API.INFO",
	} {
		if allowed(p.Publish.Allow, subj) {
			t.Errorf("the leaf link may send %s", subj)
		}
	}
	for _, subj := range []string{"$KV.rshub_subs.x", "_RSHUB_HUB.x"} {
		if allowed(p.Subscribe.Allow, subj) {
			t.Errorf("the leaf link may receive %s", subj)
		}
	}
}
