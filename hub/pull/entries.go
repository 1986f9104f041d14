package pull

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rshub/rshub/changefeed"
	"github.com/rshub/rshub/hub"
	"github.com/rshub/rshub/wire"
)

// errGone says the log no longer holds the first record of a list.
var errGone = errors.New("pull: the log no longer holds this list")

// errLog marks a failure of the log itself (not of the document being
// written): the request is answered 503 and may be made again.
var errLog = errors.New("pull: the log cannot be read")

// smallRange is the sequence span below which records reads with Next:
// starting a range read costs a few round trips.
const smallRange = 8

// records calls fn for each record of channel with a sequence in [from, to],
// with one range read when the log supports it. An error of the log (not
// of fn) wraps errLog.
func (p *Pull) records(ctx context.Context, channel string, from, to uint64, fn func(wire.Record) error) error {
	fnFailed := false
	call := func(rec wire.Record) error {
		err := fn(rec)
		fnFailed = err != nil
		return err
	}
	var err error
	if rl, ok := p.log.(RangeLog); ok && to-from >= smallRange {
		err = rl.Range(ctx, channel, from, to, call)
	} else {
		err = hub.Walk(ctx, p.log, channel, from, to, call)
	}
	if err != nil && !fnFailed {
		return fmt.Errorf("%w: %w", errLog, err)
	}
	return err
}

// writeList streams the Change List l of channel name to w: hdr, then the
// entries of its notifications in log order. It returns errGone, having
// written nothing, when the log no longer holds l's first record.
func (p *Pull) writeList(ctx context.Context, w io.Writer, name string, l list, hdr *changefeed.Header) error {
	enc := changefeed.NewEncoder(w)
	// a fresh Rotator repeats the acceptance decisions of the channel's one
	// within a list: overlapping notifications were left out of it
	accept := changefeed.NewRotator(changefeed.Rotation{}, true)
	started := false
	ew := entryWriter{enc: enc, pull: p}
	err := p.records(ctx, name, l.FirstSeq, l.LastSeq, func(rec wire.Record) error {
		if !started {
			if rec.Seq != l.FirstSeq {
				return errGone
			}
			started = true
			if err := enc.WriteHeader(hdr); err != nil {
				return err
			}
		}
		if rec.From.IsZero() || rec.Until.IsZero() {
			return nil
		}
		if _, cut := accept.Add(changefeed.Notice{Seq: rec.Seq, From: rec.From, Until: rec.Until}); cut != changefeed.Started && cut != changefeed.Appended {
			return nil
		}
		return ew.record(rec)
	})
	if err == nil && !started {
		err = errGone
	}
	if err != nil {
		return err
	}
	return enc.Close()
}

// entryWriter copies the entries of notifications into a Change List.
type entryWriter struct {
	enc  *changefeed.Encoder
	pull *Pull     // for its logger
	last time.Time // order key of the last entry written
}

// record writes the entries of one notification. Bodies are decoded in
// Strict mode; a body Strict refuses (a thin ping relays what a lenient
// Source published) is read again in Lenient mode from the entry that failed
// and its entries are made strictly valid or left out.
func (ew *entryWriter) record(rec wire.Record) error {
	d := changefeed.NewDecoder(bytes.NewReader(rec.Body), changefeed.Options{})
	n := 0
	if _, err := d.Header(); err == nil {
		for {
			e, err := d.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				break
			}
			if err := ew.write(e, rec, false); err != nil {
				return err
			}
			n++
		}
	}
	d = changefeed.NewDecoder(bytes.NewReader(rec.Body), changefeed.Options{Mode: changefeed.Lenient})
	if _, err := d.Header(); err != nil {
		ew.pull.logger.Warn("notification unreadable, left out of its Change List", "seq", rec.Seq, "channel", rec.Channel, "err", err)
		return nil
	}
	for i := 0; ; i++ {
		e, err := d.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			ew.pull.logger.Warn("notification entry unreadable, rest left out", "seq", rec.Seq, "entry", i, "err", err)
			return nil
		}
		if i < n {
			continue
		}
		if err := ew.write(e, rec, true); err != nil {
			return err
		}
	}
}

// write completes e for a Change List (lastmod is mandatory there: the
// change's datetime, else the notification's until) and writes it. A
// lenient entry is first cleaned of what Strict refuses; one that would
// still break forward chronological order or its notification's window is
// left out.
func (ew *entryWriter) write(e *changefeed.Entry, rec wire.Record, lenient bool) error {
	if e.LastMod.IsZero() {
		if e.MD != nil && !e.MD.DateTime.IsZero() {
			e.LastMod = e.MD.DateTime
		} else {
			e.LastMod = changefeed.NewDateTime(rec.Until)
		}
	}
	key := e.LastMod.Time
	if e.MD != nil && !e.MD.DateTime.IsZero() {
		key = e.MD.DateTime.Time
	}
	if lenient {
		if !strictEntry(e) || key.Before(ew.last) || key.Before(rec.From) || key.After(rec.Until) {
			ew.pull.logger.Warn("notification entry not strictly valid, left out of its Change List", "seq", rec.Seq, "loc", wire.Clip(e.Loc))
			return nil
		}
	}
	ew.last = key
	if err := ew.enc.WriteEntry(e); err != nil {
		return fmt.Errorf("pull: write entry: %w", err)
	}
	return nil
}

// strictEntry drops from e what Strict mode refuses and Lenient keeps
// (extension content outside a namespace of its own, hashes of unknown
// algorithms) and reports whether e still has what a Change List entry needs.
func strictEntry(e *changefeed.Entry) bool {
	if e.Loc == "" || e.MD == nil || e.MD.Change == "" {
		return false
	}
	switch e.MD.Change {
	case changefeed.Created, changefeed.Updated, changefeed.Deleted:
	default:
		return false
	}
	e.Ext.Attrs = ownNS(e.Ext.Attrs)
	e.MD.Ext = ownNS(e.MD.Ext)
	if e.MD.Hash != "" {
		if _, err := changefeed.ParseHash(e.MD.Hash, changefeed.Strict); err != nil {
			e.MD.Hash = ""
		}
	}
	els := e.Ext.Elements[:0]
	for _, el := range e.Ext.Elements {
		if el.Name.Space != "" && el.Name.Space != changefeed.NSRS && el.Name.Space != changefeed.NSSitemap {
			els = append(els, el)
		}
	}
	e.Ext.Elements = els
	links := e.Links[:0]
	for _, l := range e.Links {
		if l.Rel == "" || l.Href == "" || l.Pri < -1 || l.Pri > 999999 || l.Length < -1 {
			continue
		}
		l.Ext = ownNS(l.Ext)
		if l.Hash != "" {
			if _, err := changefeed.ParseHash(l.Hash, changefeed.Strict); err != nil {
				l.Hash = ""
			}
		}
		links = append(links, l)
	}
	e.Links = links
	return true
}

// ownNS keeps the attributes that are in a namespace of their own.
func ownNS(attrs []xml.Attr) []xml.Attr {
	out := attrs[:0]
	for _, a := range attrs {
		if a.Name.Space != "" && a.Name.Space != changefeed.NSRS && a.Name.Space != changefeed.NSSitemap {
			out = append(out, a)
		}
	}
	return out
}
