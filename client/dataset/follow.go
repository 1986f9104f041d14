package dataset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/client/mirror"
)

// Transports Follow knows.
const (
	TransportWebhook   = "webhook"
	TransportWebSocket = "websocket"
	TransportSSE       = "sse" // Server-Sent Events: WebSocketConfig's fields
	TransportNATS      = "nats"
)

// FollowConfig says how Follow receives notifications.
type FollowConfig struct {
	Transport string // TransportWebhook (default), TransportWebSocket, TransportSSE or TransportNATS
	Webhook   mirror.WebhookConfig
	WebSocket mirror.WebSocketConfig // Hub and Channel default to the dataset's
	NATS      mirror.NATSConfig      // Channel defaults to the dataset's
	// HubCapabilityList is the hub's pull-mode Capability List of the
	// topic; empty: found in the hub's Source Description.
	HubCapabilityList string
}

// ErrNoChannel is returned by Follow for a dataset whose Capability List
// announces no change-notification channel.
var ErrNoChannel = errors.New("dataset: the dataset announces no change-notification channel (hub and topic)")

// Follow keeps the dataset in step after Import: it consumes the
// dataset's change notifications through the hub (client/mirror does the
// transport, the subscription, gap healing from the hub's Change Lists and
// the length and hash checks, fetching each announced resource into
// PatchDir), and applies each new patch as it arrives; in ModeResourceList
// a new version of the dataset file replaces the store. It returns when
// ctx ends, or with the error that stopped it (a patch that does not
// parse, or that cannot be fetched as announced).
func (im *Importer) Follow(ctx context.Context, fc FollowConfig) error {
	if err := im.Import(ctx); err != nil {
		return err
	}
	ds := im.cfg.Dataset
	if ds.Hub == "" || ds.Topic == "" {
		return ErrNoChannel
	}
	statePath := im.path(FollowStateFile)
	if _, err := os.Stat(statePath); errors.Is(err, fs.ErrNotExist) {
		st := im.State()
		if err := mirror.SaveState(statePath, mirror.State{Topic: ds.Topic, Hub: ds.Hub, Until: st.Until, Baselined: true}); err != nil {
			return fmt.Errorf("dataset: %w", err)
		}
	}
	hubCL, channel := fc.HubCapabilityList, ""
	if fc.Transport != "" && fc.Transport != TransportWebhook || hubCL == "" {
		cl, name, err := mirror.HubChannel(ctx, im.cfg.Client, ds.Hub, ds.Topic)
		if err != nil {
			return err
		}
		hubCL = cmp.Or(hubCL, cl)
		channel = name
	}
	start, err := mirror.LoadState(statePath)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	fctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	pos := &position{until: start.Until, seq: start.Seq}
	m, err := mirror.Open(mirror.Config{
		Dir: im.path(PatchDir), StatePath: statePath, Hub: ds.Hub, Topic: ds.Topic, HubCapabilityList: hubCL,
		Client: im.cfg.Client, Logger: im.cfg.Logger, Now: im.cfg.Now,
		Events: func(e mirror.Event) { im.onMirrorEvent(e, pos, cancel) },
	})
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	switch fc.Transport {
	case TransportWebSocket, TransportSSE:
		wc := fc.WebSocket
		wc.Hub = cmp.Or(wc.Hub, ds.Hub)
		wc.Channel = cmp.Or(wc.Channel, channel)
		if fc.Transport == TransportSSE {
			err = m.RunSSE(fctx, wc)
		} else {
			err = m.RunWebSocket(fctx, wc)
		}
	case TransportNATS:
		nc := fc.NATS
		nc.Channel = cmp.Or(nc.Channel, channel)
		err = m.RunNATS(fctx, nc)
	case "", TransportWebhook:
		if fc.Webhook.Listener == nil {
			return errors.New("dataset: FollowConfig.Webhook.Listener is required for webhooks")
		}
		err = m.RunWebhook(fctx, fc.Webhook)
	default:
		return fmt.Errorf("dataset: unknown transport %q", fc.Transport)
	}
	if pos.failed {
		// The mirror may have moved past the notification holding the
		// patch that failed: put it back, so that the next Follow fetches
		// the patch again instead of leaving it out.
		if rerr := rewind(statePath, pos); rerr != nil {
			return errors.Join(context.Cause(fctx), rerr)
		}
	}
	if cause := context.Cause(fctx); cause != nil && !errors.Is(cause, context.Canceled) && ctx.Err() == nil {
		return cause
	}
	return err
}

// position is where the follower stood after the last notification it
// applied whole, and whether a patch failed since.
type position struct {
	until  time.Time
	seq    uint64
	failed bool
}

// rewind sets the follower's state back to pos.
func rewind(statePath string, pos *position) error {
	st, err := mirror.LoadState(statePath)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	st.Until, st.Seq = pos.until, pos.seq
	if err := mirror.SaveState(statePath, st); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	return nil
}

// onMirrorEvent applies what the mirror fetched and passes its events on.
func (im *Importer) onMirrorEvent(e mirror.Event, pos *position, stop context.CancelCauseFunc) {
	im.emit(e)
	isPatch := MediaType(e.Loc, "") == MediaTypePatch
	fail := func(err error) {
		pos.failed = true
		stop(err)
	}
	switch {
	case pos.failed:
		return
	case e.Kind == mirror.EventNotification || e.Kind == mirror.EventCaughtUp && e.Message == "":
		pos.until = later(pos.until, e.Until)
		pos.seq = max(pos.seq, e.Seq)
	case e.Kind == mirror.EventFile && e.Change != string(changefeed.Deleted) && isPatch:
		im.mu.Lock()
		err := im.applyPatchFile(e.Path, e.Loc)
		im.mu.Unlock()
		if err != nil {
			im.cfg.Logger.Error("patch not applied", "loc", e.Loc, "err", err)
			fail(err)
		}
	case e.Kind == mirror.EventFile && e.Change != string(changefeed.Deleted):
		im.mu.Lock()
		var err error
		if im.st.Mode == ModeResourceList && e.Loc == im.st.DataSetFile {
			err = im.reloadFrom(filepath.Join(im.path(PatchDir), filepath.FromSlash(e.Path)), e.Loc, "")
		}
		im.mu.Unlock()
		if err != nil {
			fail(err)
		}
	case e.Kind == mirror.EventSkipped && isPatch:
		err := fmt.Errorf("dataset: patch %s could not be fetched as announced: %s", e.Loc, e.Message)
		im.cfg.Logger.Error("patch skipped", "loc", e.Loc, "why", e.Message)
		fail(err)
	}
}
