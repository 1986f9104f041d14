package mirror

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/subscriber"
	"github.com/rshub/rshub/wire"
)

// Framework notifications (ResourceSync Framework Notification, RSF-1 …
// RSF-6). With Config.Framework the Mirror also follows the channel's
// framework channel (wire.FrameworkChannel), which the hub advertises in
// its Capability List with capability framework-notification: over
// webhooks a second subscription on the same callback server, over
// WebSocket a second channel of the same session, over NATS a second
// subject of the same consumer. Every entry of a framework notification is
// reported as an EventFramework event, so a destination learns of a closed
// Change List or a new archive page without polling. When one says a
// Change List closed (an updated changelist entry whose datetime is the
// list's until), the Mirror checks that its position P reaches that until
// and, if not (a notification was lost), heals at once from the hub's
// Change Lists up to it, instead of waiting for the next notification or
// the periodic catch-up. A framework notification never moves P otherwise.

// IsFramework reports whether doc is a framework notification.
func IsFramework(doc *changefeed.Document) bool {
	return doc != nil && doc.Kind == changefeed.URLSet && doc.MD.Capability == changefeed.CapFrameworkNotification
}

// ClosedUntil returns the latest until of the Change Lists a framework
// notification says closed (its updated changelist entries' datetime), or
// the zero time when it says none did.
func ClosedUntil(doc *changefeed.Document) time.Time {
	var out time.Time
	if !IsFramework(doc) {
		return out
	}
	for i := range doc.Entries {
		md := doc.Entries[i].MD
		if md != nil && md.Capability == changefeed.CapChangeList && md.Change == changefeed.Updated && md.DateTime.Time.After(out) {
			out = md.DateTime.Time
		}
	}
	return out
}

// applyFrameworkLocked handles a framework notification: it reports its
// entries and heals from the hub's Change Lists when a closed list ends
// after P. The caller holds mu.
func (m *Mirror) applyFrameworkLocked(ctx context.Context, u Update) error {
	for i := range u.Doc.Entries {
		e := &u.Doc.Entries[i]
		ev := Event{Kind: EventFramework, Seq: u.Seq, Loc: e.Loc, Message: u.Via}
		if e.MD != nil {
			ev.Change, ev.Until = string(e.MD.Change), e.MD.DateTime.Time
			ev.Message = string(e.MD.Capability) + " " + u.Via
		}
		m.emit(ev)
	}
	// the state's Seq stays the last change notification applied: a
	// framework record replayed after a resume is handled again, harmlessly
	closed := ClosedUntil(u.Doc)
	if m.st.Baselined && closed.After(m.st.Until) {
		m.emit(Event{Kind: EventGap, Seq: u.Seq, From: m.st.Until, Until: closed,
			Message: "a Change List closed beyond the mirror's position: healing from the hub's Change Lists"})
		if err := m.catchUp(ctx, closed, true); err != nil {
			return err
		}
	}
	return m.save()
}

// hubCapabilityList returns the hub's Capability List of the topic,
// finding it when the Config did not give it.
func (m *Mirror) hubCapabilityList(ctx context.Context) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cfg.HubCapabilityList == "" {
		cl, _, err := HubChannel(ctx, m.cfg.Client, m.cfg.Hub, m.cfg.Topic)
		if err != nil {
			return "", err
		}
		m.cfg.HubCapabilityList = cl
	}
	return m.cfg.HubCapabilityList, nil
}

// FrameworkTopic returns the topic URI of the framework channel the hub
// advertises in its Capability List of the Mirror's topic (RSF-1), or ""
// when it advertises none.
func (m *Mirror) FrameworkTopic(ctx context.Context) (string, error) {
	cl, err := m.hubCapabilityList(ctx)
	if err != nil {
		return "", err
	}
	var topic string
	if _, err := getDoc(ctx, m.cfg.Client, cl, func(e *changefeed.Entry) error {
		if e.MD != nil && e.MD.Capability == changefeed.CapFrameworkNotification {
			topic = e.Loc
		}
		return nil
	}); err != nil {
		return "", fmt.Errorf("mirror: hub Capability List: %w", err)
	}
	return topic, nil
}

// frameworkChannel returns the name of the framework channel of channel
// when Config.Framework is on and the hub advertises it, else "" (with an
// event saying why not).
func (m *Mirror) frameworkChannel(ctx context.Context, channel string, filtered bool) string {
	if !m.cfg.Framework {
		return ""
	}
	fw, ok := wire.FrameworkChannel(channel)
	if !ok {
		return ""
	}
	if filtered {
		m.emit(Event{Kind: EventInfo, Message: "not following the framework channel: the session's filter would drop its entries"})
		return ""
	}
	topic, err := m.FrameworkTopic(ctx)
	if err != nil || topic == "" {
		m.emit(Event{Kind: EventInfo, Message: fmt.Sprintf("the hub advertises no framework channel (%v)", err)})
		return ""
	}
	return fw
}

// subscribeFramework subscribes h to the framework channel when
// Config.Framework is on and the hub advertises one, reusing the
// subscription kept in the state file, and keeps it alive until ctx ends.
// It returns a function that unsubscribes (nil when nothing was
// subscribed). A failure is reported as a warning: the change channel
// works without it.
func (m *Mirror) subscribeFramework(ctx context.Context, h *subscriber.Handler, lease time.Duration) func(context.Context) {
	if !m.cfg.Framework {
		return nil
	}
	topic, err := m.FrameworkTopic(ctx)
	if err != nil || topic == "" {
		m.emit(Event{Kind: EventInfo, Message: fmt.Sprintf("the hub advertises no framework channel (%v)", err)})
		return nil
	}
	opt := subscriber.SubscribeOptions{Lease: lease}
	if prev := m.State().Framework; prev != nil && prev.Hub == m.cfg.Hub && prev.Topic == topic {
		h.Restore(*prev)
		opt.ID, opt.Secret = prev.ID, prev.Secret
	}
	sub, err := h.Subscribe(ctx, m.cfg.Hub, topic, opt)
	if err != nil {
		m.emit(Event{Kind: EventWarning, Message: "framework channel not subscribed: " + err.Error()})
		return nil
	}
	if err := m.setFramework(&sub); err != nil {
		m.emit(Event{Kind: EventWarning, Message: "state not saved: " + err.Error()})
	}
	m.emit(Event{Kind: EventInfo, Message: fmt.Sprintf("subscribed to the framework channel %s (lease %s)", topic, sub.Lease)})
	go func() {
		err := h.KeepAlive(ctx, sub.ID, lease, func(ns subscriber.Subscription) { _ = m.setFramework(&ns) })
		if err != nil && ctx.Err() == nil {
			m.emit(Event{Kind: EventWarning, Message: "framework subscription not renewed: " + err.Error()})
		}
	}()
	return func(uctx context.Context) {
		if err := h.Unsubscribe(uctx, sub.ID, 10*time.Second); err != nil && !errors.Is(err, context.Canceled) {
			m.emit(Event{Kind: EventWarning, Message: "framework unsubscribe failed: " + err.Error()})
			return
		}
		_ = m.setFramework(nil)
	}
}

// setFramework records the framework subscription (nil: none) in the
// state file.
func (m *Mirror) setFramework(s *subscriber.Subscription) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.st.Framework = s
	return m.save()
}
