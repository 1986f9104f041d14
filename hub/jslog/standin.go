package jslog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A mirror's server creates the mirror's consumer on the origin's stream
// with a JetStream API request in the origin's domain. While the leaf link
// is down nobody answers it, and the server waits 30 s for an answer
// (nats-server's srcConsumerWaitTime); a link that returns meanwhile does
// not restart the mirror (the server restarts, when a leaf link connects,
// only the mirrors with no request in flight), which then resumes after
// that wait and a retry backoff that grows with every failure, up to 2
// minutes: tens of seconds after the origin is back. The stand-in answers
// those requests for an origin that cannot (its JetStream API has no
// responders on this side of the link) with an error, after
// standInDelay, so that the mirror's server has no request in flight when
// the link returns and restarts the mirror at once.

// standInDelay is how long the stand-in waits before it looks whether the
// origin answers: a leaf link that has just connected carries the
// origin's interest a moment after the mirror's first request.
const standInDelay = time.Second

// standInAnswer is the consumer create response the stand-in gives: an
// error, which the mirror's server retries later (or at once, when the
// leaf link connects).
const standInAnswer = `{"type":"io.nats.jetstream.api.v1.consumer_create_response","error":{"code":503,"err_code":10008,"description":"rshub: the origin's JetStream (domain %s) is unreachable over the leaf link"}}`

// standIn answers, until ctx ends, the requests of this server's mirrors
// to create their consumers in the origin's domain while the origin's
// JetStream does not answer; on every connection of l.conn in turn.
func (l *Log) standIn(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	subject := APIPrefix(l.cfg.Upstream) + ".CONSUMER.CREATE.>"
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		changed := l.conn.Changed()
		var sub *nats.Subscription
		if nc, _ := l.conn.Current(); nc != nil && !nc.IsClosed() {
			var err error
			sub, err = nc.Subscribe(subject, func(m *nats.Msg) {
				wg.Go(func() { l.answerForOrigin(ctx, nc, m) })
			})
			if err != nil {
				l.log.Warn("jslog: the mirror's stand-in for an unreachable origin did not subscribe; the mirror may resume late after an outage", "err", err)
			}
		}
		select {
		case <-ctx.Done():
		case <-changed:
		}
		if sub != nil {
			_ = sub.Unsubscribe()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// standInHeader marks a request the stand-in sent again, which it lets
// pass.
const standInHeader = "Rshub-Standin"

// answerForOrigin sees m, a consumer create request in the origin's
// domain, answered: by the origin when an answer comes within
// standInDelay; with an error when the origin's JetStream has no
// responders then (the link is down); when the origin answers other
// requests but not this one within standInDelay more (it reached the
// origin's server before its JetStream was up), by sending it again.
func (l *Log) answerForOrigin(ctx context.Context, nc *nats.Conn, m *nats.Msg) {
	if m.Reply == "" || m.Header.Get(standInHeader) != "" {
		return
	}
	answers, err := nc.SubscribeSync(m.Reply)
	if err != nil {
		return
	}
	defer func() { _ = answers.Unsubscribe() }()
	actx, cancel := context.WithTimeout(ctx, standInDelay)
	_, err = answers.NextMsgWithContext(actx)
	cancel()
	if err == nil || ctx.Err() != nil {
		return
	}
	js, err := jetstream.NewWithDomain(nc, l.cfg.Upstream)
	if err != nil {
		return
	}
	// asked what the leaf link may ask (embednats.LeafPermissions): the
	// info of the stream the consumer is for; "not found" is an answer too
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, err = js.Stream(pctx, consumerStream(m.Subject, APIPrefix(l.cfg.Upstream)))
	cancel()
	if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) {
		_ = m.Respond(fmt.Appendf(nil, standInAnswer, l.cfg.Upstream))
		return
	}
	if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return // slow, not absent: the mirror's server waits for its answer
	}
	actx, cancel = context.WithTimeout(ctx, standInDelay)
	defer cancel()
	if _, err := answers.NextMsgWithContext(actx); err == nil || ctx.Err() != nil {
		return
	}
	again := nats.NewMsg(m.Subject)
	again.Reply, again.Data = m.Reply, m.Data
	for k, v := range m.Header {
		again.Header[k] = v
	}
	again.Header.Set(standInHeader, "again")
	// an answer that came before the watch began is not seen: the origin
	// then creates a second consumer, which it deletes once inactive
	l.log.Info("jslog: the origin did not answer the mirror's consumer request, though it answers others: sent again", "subject", m.Subject)
	_ = nc.PublishMsg(again)
}

// consumerStream returns the stream of a consumer create request's
// subject, api.CONSUMER.CREATE.<stream>[.<consumer>[.<filter>]].
func consumerStream(subject, api string) string {
	rest := strings.TrimPrefix(subject, api+".CONSUMER.CREATE.")
	stream, _, _ := strings.Cut(rest, ".")
	return stream
}
