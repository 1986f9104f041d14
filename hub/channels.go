package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/rshub/rshub/wire"
)

// maxChannelName bounds channel names (they become URL path segments and
// NATS subject tokens).
const maxChannelName = 64

// ValidChannelName reports whether name can be used in paths and NATS
// subjects: 1–64 characters of [A-Za-z0-9_-].
func ValidChannelName(name string) bool {
	if name == "" || len(name) > maxChannelName {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// nameForTopic derives a channel name from a topic URI: a readable slug of
// its host and path followed by a short hash, so distinct topics never share
// a name.
func nameForTopic(topic string) string {
	var b strings.Builder
	dash := false
	src := topic
	if u, err := url.Parse(topic); err == nil && u.Host != "" {
		src = u.Host + u.Path
	}
	for _, r := range strings.ToLower(src) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
		if ok {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	slug := strings.Trim(b.String(), "-")
	sum := sha256.Sum256([]byte(topic))
	if slug == "" {
		return "t-" + hex.EncodeToString(sum[:5])
	}
	return slug + "-" + hex.EncodeToString(sum[:4])
}

// hostedTopic returns the topic URI of a channel the hub hosts itself.
func (h *Hub) hostedTopic(name string) string {
	return h.origin() + wire.TopicPath(name)
}

// origin returns the hub URL without its path, query and fragment, where
// the paths of the wire layout start, normalised as topics are
// (wire.NormalizeURL) so that a topic the hub derives is spelled as one a
// request names.
func (h *Hub) origin() string { return h.originURL }

// checkChannel normalises and validates a channel definition: the one
// rule set of every door that creates a channel (the admin API, the
// --channels file, --open-topics and followed channels). The name must
// pass checkNewChannelName (a channel with a topic and no name gets
// nameForTopic's); the topic and every URL must be absolute
// http(s) URLs within MaxTopicLen, without user info and with a host
// netguard.CheckHost accepts, so a channel that can be created can be
// published to and subscribed to; trust must be given, except that a
// token alone means trust token.
func (h *Hub) checkChannel(ch Channel) (Channel, error) {
	ch, err := checkFollow(ch)
	if err != nil {
		return ch, err
	}
	if ch.Topic != "" {
		n, err := wire.NormalizeURL(ch.Topic)
		if err != nil {
			return ch, fmt.Errorf("topic: %w", err)
		}
		ch.Topic = n
	}
	if ch.Name == "" && !ch.Hosted && ch.Topic != "" {
		ch.Name = nameForTopic(ch.Topic)
	}
	if err := checkNewChannelName(ch.Name); err != nil {
		return ch, err
	}
	if ch.Hosted {
		if ch.Topic == "" {
			ch.Topic = h.hostedTopic(ch.Name)
		}
		if ch.CapabilityList == "" {
			ch.CapabilityList = h.origin() + wire.CapabilityListPath(ch.Name)
		}
	}
	for _, u := range []struct{ what, raw string }{
		{"topic", ch.Topic},
		{"capabilityList", ch.CapabilityList},
		{"describedBy", ch.DescribedBy},
	} {
		if u.raw == "" && u.what != "topic" {
			continue
		}
		if err := checkTopic(u.what, u.raw); err != nil {
			return ch, err
		}
	}
	switch ch.Trust {
	case "":
		if ch.Token == "" {
			return ch, errors.New("trust is required: token (with a token), verified, open or follow")
		}
		ch.Trust = TrustToken
	case TrustToken, TrustVerifiedTopic, TrustOpen:
	case TrustFollow:
		if ch.Follow == "" {
			return ch, errors.New("trust follow needs a Source URL to follow (follow)")
		}
	default:
		return ch, fmt.Errorf("trust %q must be token, verified, open or follow", wire.Clip(string(ch.Trust)))
	}
	if ch.Trust == TrustToken && len(ch.Token) < 16 {
		return ch, errors.New("trust token needs a token of at least 16 characters")
	}
	if ch.Hosted && ch.Trust == TrustVerifiedTopic {
		// the hub itself answers for a hosted topic; verification is moot
		return ch, errors.New("a hosted channel needs trust token or open")
	}
	if err := h.checkPrivate(ch); err != nil {
		return ch, err
	}
	return ch, nil
}

// checkTopic validates a topic URI, or another URL a channel names (what
// says which), by the rule of hub.topic: required, within MaxTopicLen, an
// absolute http(s) URL (checkHTTPURL).
func checkTopic(what, raw string) error {
	if raw == "" {
		return fmt.Errorf("%s is required", what)
	}
	if err := checkLen(what, raw, MaxTopicLen); err != nil {
		return err
	}
	if err := checkHTTPURL(raw); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// PutChannel validates and stores a channel, refusing a name already used by
// another topic.
func (h *Hub) PutChannel(ctx context.Context, ch Channel) (Channel, error) {
	ch, err := h.checkChannel(ch)
	if err != nil {
		return ch, fmt.Errorf("channel: %w: %w", ErrChannelRefused, err)
	}
	if err := h.checkFrameworkName(ctx, ch); err != nil {
		return ch, fmt.Errorf("channel: %w", err)
	}
	switch old, err := h.ChannelByName(ctx, ch.Name); {
	case err == nil && old.Topic != ch.Topic && !sameURL(old.Topic, ch.Topic):
		return ch, fmt.Errorf("channel: %w: name %q is taken by topic %s", ErrChannelTaken, ch.Name, old.Topic)
	case err == nil:
		ch.Topic = old.Topic // a channel stored under another spelling keeps it
	case err != nil && !errors.Is(err, ErrNotFound):
		return ch, fmt.Errorf("channel: %w", err)
	}
	wasPublic := true
	old, err := h.cfg.Store.Channel(ctx, ch.Topic)
	if errors.Is(err, ErrNotFound) {
		if old, err = h.storedChannelByNormalTopic(ctx, ch.Topic); err == nil {
			ch.Topic = old.Topic
		}
	}
	if err == nil {
		ch.Created, wasPublic = old.Created, !old.Private
	} else if !errors.Is(err, ErrNotFound) {
		return ch, fmt.Errorf("channel: %w", err)
	}
	if ch.Created.IsZero() {
		ch.Created = h.cfg.Now().UTC()
	}
	if ch.Trust == TrustOpen {
		h.logger.Warn("channel is OPEN: anyone can publish to it; use trust token or verified in production", "topic", wire.Clip(ch.Topic), "channel", ch.Name)
	}
	if err := h.cfg.Store.PutChannel(ctx, ch); err != nil {
		return ch, fmt.Errorf("channel: store: %w", err)
	}
	h.forgetChannel(ch.Topic)
	h.names.put(ch)
	if ch.Private && wasPublic {
		if err := h.denyUnauthorized(ctx, ch); err != nil {
			return ch, fmt.Errorf("channel: ending the subscriptions without a token: %w", err)
		}
	}
	return ch, nil
}

// PutChannel's refusals, for callers that answer each differently from a
// store that does not answer.
var (
	// ErrChannelRefused: the definition breaks a rule (see checkChannel).
	ErrChannelRefused = errors.New("refused")
	// ErrChannelTaken: the name belongs to another topic's channel.
	ErrChannelTaken = errors.New("taken")
)

// channelFor returns the channel of topic, creating an open one when the
// hub runs with OpenTopics (through OpenElsewhere when set).
// Beyond MaxOpenChannels it refuses with 503 and the reason instead.
func (h *Hub) channelFor(ctx context.Context, topic string) (Channel, error) {
	if err := checkLen("the topic URI", topic, MaxTopicLen); err != nil {
		return Channel{}, refuse(ReasonTooLong, "%v", err)
	}
	ch, err := h.lookupChannel(ctx, topic)
	if err == nil || !errors.Is(err, ErrNotFound) || !h.cfg.OpenTopics {
		return ch, err
	}
	if err := checkTopic("the topic URI", topic); err != nil {
		return Channel{}, refuse(ReasonTopic, "%v", err)
	}
	if h.cfg.OpenElsewhere != nil { // the store's channels are read only
		if err := h.cfg.OpenElsewhere(ctx, topic); err != nil {
			return Channel{}, err
		}
		return h.lookupChannel(ctx, topic)
	}
	h.openMu.Lock()
	defer h.openMu.Unlock()
	if err := h.checkOpenRoom(ctx); err != nil {
		return Channel{}, err
	}
	ch, err = h.PutChannel(ctx, Channel{Topic: topic, Trust: TrustOpen})
	if err == nil {
		h.openCount++
	}
	return ch, err
}

// checkOpenRoom refuses (channel_limit) a channel for a topic the hub does
// not know when it holds MaxOpenChannels channels; the caller holds
// openMu.
func (h *Hub) checkOpenRoom(ctx context.Context) error {
	n, err := h.channelCount(ctx)
	if err != nil {
		return err
	}
	if n >= h.cfg.MaxOpenChannels {
		return refuse(ReasonChannelLimit, "this hub holds %d channels, its limit for topics it does not know (--max-open-channels)", n)
	}
	return nil
}

// phantomRoom is checkOpenRoom for a request answered as one for a topic
// the hub does not know, without creating its channel (see errPhantom):
// it is refused when such a topic would be.
func (h *Hub) phantomRoom(ctx context.Context) error {
	h.openMu.Lock()
	defer h.openMu.Unlock()
	return h.checkOpenRoom(ctx)
}

// openCountTTL is how long the hub trusts its count of channels before
// listing the store again (other hubs create channels too).
const openCountTTL = 5 * time.Second

// channelCount returns how many channels the store holds, listing them at
// most every openCountTTL; the caller holds openMu.
func (h *Hub) channelCount(ctx context.Context) (int, error) {
	now := h.cfg.Now()
	if !h.openCounted.IsZero() && now.Sub(h.openCounted) < openCountTTL {
		return h.openCount, nil
	}
	chs, err := h.cfg.Store.Channels(ctx)
	if err != nil {
		return 0, fmt.Errorf("count channels: %w", err)
	}
	h.openCount, h.openCounted = len(chs), now
	return h.openCount, nil
}
