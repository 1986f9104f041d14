package admin

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/hub/follow"
	"github.com/rshub/rshub/wire"
)

// maxChannelBody bounds the JSON body of a new channel.
const maxChannelBody = 64 << 10

// ChannelView is a channel with its progress, as the admin API shows it;
// a followed channel has the follower's status (Follow), as the store has
// it.
type ChannelView struct {
	hub.Channel
	State  hub.ChannelState `json:"state"`
	Follow *follow.Status   `json:"followStatus,omitempty"`
}

// MarshalJSON writes the view with the state's gaps and resets as [] when
// there are none, and the channel's topic as its state's before any
// notification made one.
func (v ChannelView) MarshalJSON() ([]byte, error) {
	if v.State.Topic == "" {
		v.State.Topic = v.Channel.Topic
	}
	type state struct {
		hub.ChannelState
		Gaps   []hub.Gap             `json:"gaps"`
		Resets []hub.ContinuityReset `json:"resets"`
	}
	return json.Marshal(struct {
		hub.Channel
		State  state          `json:"state"`
		Follow *follow.Status `json:"followStatus,omitempty"`
	}{v.Channel, state{v.State, nonNil(v.State.Gaps), nonNil(v.State.Resets)}, v.Follow})
}

// redactChannel hides the publisher token.
func redactChannel(c hub.Channel) hub.Channel {
	if c.Token != "" {
		c.Token = "(set)"
	}
	return c
}

// pathChannel returns the channel named by the {name} path value: 400 for
// a name no channel can have, 404 for one no channel has.
func (a *API) pathChannel(r *http.Request) (hub.Channel, error) {
	name := r.PathValue("name")
	if !hub.ValidChannelName(name) {
		return hub.Channel{}, badRequest("channel name %q: names are 1-%d characters of A-Z a-z 0-9 - _", wire.Clip(name), hub.MaxChannelNameLen)
	}
	c, err := a.cfg.Hub.ChannelByName(r.Context(), name)
	if errors.Is(err, hub.ErrNotFound) {
		return hub.Channel{}, &apiError{http.StatusNotFound, "no channel named " + name}
	}
	return c, err
}

// view returns c with its state, as the admin API shows it.
func (a *API) view(r *http.Request, c hub.Channel) (ChannelView, error) {
	st, err := a.cfg.Hub.ChannelState(r.Context(), c.Topic)
	if err != nil && !errors.Is(err, hub.ErrNotFound) {
		return ChannelView{}, err
	}
	v := ChannelView{Channel: redactChannel(c), State: st}
	if a.cfg.Follows != nil && c.Follow != "" {
		fs, err := a.cfg.Follows.Status(r.Context(), c)
		if err != nil {
			return ChannelView{}, err
		}
		v.Follow = &fs
	}
	return v, nil
}

// follows lists the follower's status of every followed channel.
func (a *API) follows(r *http.Request) (any, error) {
	if a.cfg.Follows == nil {
		return []follow.Status{}, nil
	}
	return a.cfg.Follows.Statuses(r.Context())
}

// pollNow makes a followed channel's follower poll at once: 202, or 409
// when this hub does not follow the channel.
func (a *API) pollNow(r *http.Request) (any, error) {
	c, err := a.pathChannel(r)
	if err != nil {
		return nil, err
	}
	if a.cfg.Follows == nil || c.Follow == "" || !a.cfg.Follows.PollNow(c.Name) {
		return nil, &apiError{http.StatusConflict, "this hub does not follow channel " + c.Name}
	}
	return ok{map[string]string{"channel": c.Name, "poll": "requested"}}, nil
}

// listChannels answers a page of channels, ordered by topic; q keeps the
// channels whose name or topic holds it (case-insensitive). The store's
// list is read whole, the state only of the page's channels.
func (a *API) listChannels(r *http.Request) (any, error) {
	v := r.URL.Query()
	limit, err := parseLimit(v.Get("limit"))
	if err != nil {
		return nil, err
	}
	c, err := parseCursor(v.Get("cursor"), kindChannel)
	if err != nil {
		return nil, err
	}
	q := strings.ToLower(v.Get("q"))
	if len(q) > hub.MaxTopicLen {
		return nil, badRequest("q is %d bytes; the limit is %d bytes", len(q), hub.MaxTopicLen)
	}
	chs, err := a.cfg.Store.Channels(r.Context())
	if err != nil {
		return nil, err
	}
	topic := func(c hub.Channel) string { return c.Topic }
	if !slices.IsSortedFunc(chs, func(x, y hub.Channel) int { return strings.Compare(x.Topic, y.Topic) }) {
		slices.SortFunc(chs, func(x, y hub.Channel) int { return strings.Compare(x.Topic, y.Topic) })
	}
	chs = chs[afterID(chs, c.after, topic):]
	if q != "" {
		chs = slices.DeleteFunc(chs, func(c hub.Channel) bool {
			return !strings.Contains(strings.ToLower(c.Name), q) && !strings.Contains(strings.ToLower(c.Topic), q)
		})
	}
	p := takePage(chs, limit, func(c hub.Channel) cursor { return cursor{kind: kindChannel, after: c.Topic} })
	out := page[ChannelView]{items: make([]ChannelView, 0, len(p.items)), next: p.next}
	for _, c := range p.items {
		v, err := a.view(r, c)
		if err != nil {
			return nil, err
		}
		out.items = append(out.items, v)
	}
	return out, nil
}

// readOnlyChannels is the refusal of a channel write on a hub whose
// channels are another's (Config.ChannelsReadOnly), nil elsewhere.
func (a *API) readOnlyChannels() error {
	if a.cfg.ChannelsReadOnly == "" {
		return nil
	}
	return &apiError{http.StatusConflict, a.cfg.ChannelsReadOnly}
}

// createChannel answers POST /admin/channels: a new channel (201), or 409
// naming the channel that has its name or topic already (PUT replaces it).
func (a *API) createChannel(r *http.Request) (any, error) {
	if err := a.readOnlyChannels(); err != nil {
		return nil, err
	}
	c, err := decodeChannel(r)
	if err != nil {
		return nil, err
	}
	c, err = a.cfg.Hub.CreateChannel(r.Context(), c)
	var ee *hub.ExistsError
	if errors.As(err, &ee) {
		return nil, &apiError{http.StatusConflict, wire.Clip(ee.Error() + "; PUT /admin/channels/" + ee.Channel.Name + " replaces it")}
	}
	return channelAnswer(c, err)
}

// putChannel answers PUT /admin/channels/{name}: the channel named so,
// created (201) or replaced (200); a body naming another channel is a 400.
func (a *API) putChannel(r *http.Request) (any, error) {
	if err := a.readOnlyChannels(); err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	if !hub.ValidChannelName(name) {
		return nil, badRequest("channel name %q: names are 1-%d characters of A-Z a-z 0-9 - _", wire.Clip(name), hub.MaxChannelNameLen)
	}
	c, err := decodeChannel(r)
	if err != nil {
		return nil, err
	}
	switch {
	case c.Name == "":
		c.Name = name
	case c.Name != name:
		return nil, badRequest("the body names channel %q, the path %q: PUT /admin/channels/{name} takes the channel of that name", wire.Clip(c.Name), name)
	}
	_, err = a.cfg.Hub.ChannelByName(r.Context(), name)
	existed := err == nil
	if err != nil && !errors.Is(err, hub.ErrNotFound) {
		return nil, err
	}
	v, err := channelAnswer(a.cfg.Hub.PutChannel(r.Context(), c))
	switch {
	case err != nil:
		return nil, err
	case existed:
		return ok{v}, nil
	}
	return created{v}, nil
}

// decodeChannel reads a channel definition, the object of a --channels file.
func decodeChannel(r *http.Request) (hub.Channel, error) {
	var c hub.Channel
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxChannelBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, badRequest("channel JSON: %s", wire.Clip(err.Error()))
	}
	return c, nil
}

// channelAnswer maps what the hub says of a created or replaced channel
// to the answer: the channel without its token, 400 for a definition that
// breaks a rule, 409 for a name another topic has.
func channelAnswer(c hub.Channel, err error) (any, error) {
	switch {
	case errors.Is(err, hub.ErrChannelRefused):
		return nil, badRequest("%s", wire.Clip(err.Error()))
	case errors.Is(err, hub.ErrChannelTaken):
		return nil, &apiError{http.StatusConflict, wire.Clip(err.Error())}
	case err != nil:
		return nil, err // the store did not answer: 503 with Retry-After
	}
	return redactChannel(c), nil
}

func (a *API) getChannel(r *http.Request) (any, error) {
	c, err := a.pathChannel(r)
	if err != nil {
		return nil, err
	}
	return a.view(r, c)
}

func (a *API) deleteChannel(r *http.Request) (any, error) {
	if err := a.readOnlyChannels(); err != nil {
		return nil, err
	}
	c, err := a.pathChannel(r)
	if err != nil {
		return nil, err
	}
	return nil, a.cfg.Hub.DeleteChannel(r.Context(), c)
}
