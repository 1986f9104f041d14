package rldiff

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// Item is one resource of a Resource List: what tells its versions apart.
type Item struct {
	Loc     string
	LastMod time.Time // zero when the list gives none
	Hash    string    // the rs:md hash attribute as given; "" when none
	Length  int64     // -1 when the list gives none
}

// same reports whether a and b describe the same version of a resource:
// every attribute the list gives agrees. A Source that gives none of them
// never reports an update, only creations and deletions.
func same(a, b Item) bool {
	return a.LastMod.Equal(b.LastMod) && a.Hash == b.Hash && a.Length == b.Length
}

// maxField bounds one string of a snapshot record, so that a damaged file
// cannot make a reader allocate without limit.
const maxField = 1 << 20

// writeItem appends it to w: loc, lastmod (Unix seconds and nanoseconds,
// so that any year a list can write survives; a flag 0 when there is
// none), hash and length, as varints and length-prefixed strings.
func writeItem(w *bufio.Writer, it Item, scratch []byte) ([]byte, error) {
	b := scratch[:0]
	b = binary.AppendUvarint(b, uint64(len(it.Loc)))
	b = append(b, it.Loc...)
	if it.LastMod.IsZero() {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = binary.AppendVarint(b, it.LastMod.Unix())
		b = binary.AppendUvarint(b, uint64(it.LastMod.Nanosecond()))
	}
	b = binary.AppendUvarint(b, uint64(len(it.Hash)))
	b = append(b, it.Hash...)
	b = binary.AppendVarint(b, it.Length)
	_, err := w.Write(b)
	return b, err
}

// reader reads the items of a snapshot or a run in order.
type reader struct {
	r    *bufio.Reader
	name string // for errors
}

func newReader(r io.Reader, name string) *reader {
	return &reader{r: bufio.NewReaderSize(r, 64<<10), name: name}
}

// next returns the next item, or io.EOF after the last one.
func (r *reader) next() (Item, error) {
	loc, err := r.str()
	switch {
	case err == io.EOF:
		return Item{}, err // at a record boundary: the end
	case err != nil:
		return Item{}, r.damaged(err)
	}
	var mod time.Time
	switch flag, err := r.r.ReadByte(); {
	case err != nil:
		return Item{}, r.damaged(err)
	case flag == 1:
		sec, err := binary.ReadVarint(r.r)
		if err != nil {
			return Item{}, r.damaged(err)
		}
		nsec, err := binary.ReadUvarint(r.r)
		if err != nil || nsec >= 1e9 {
			return Item{}, r.damaged(fmt.Errorf("lastmod nanoseconds %d: %v", nsec, err))
		}
		mod = time.Unix(sec, int64(nsec)).UTC()
	case flag != 0:
		return Item{}, r.damaged(fmt.Errorf("lastmod flag %d", flag))
	}
	hash, err := r.str()
	if err != nil {
		return Item{}, r.damaged(err)
	}
	n, err := binary.ReadVarint(r.r)
	if err != nil {
		return Item{}, r.damaged(err)
	}
	return Item{Loc: loc, LastMod: mod, Hash: hash, Length: n}, nil
}

func (r *reader) str() (string, error) {
	n, err := binary.ReadUvarint(r.r)
	if err != nil {
		return "", err
	}
	if n > maxField {
		return "", r.damaged(fmt.Errorf("a field of %d bytes", n))
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r.r, b); err != nil {
		return "", r.damaged(err)
	}
	return string(b), nil
}

// ErrDamaged is returned when a snapshot file cannot be read to its end.
var ErrDamaged = errors.New("rldiff: snapshot damaged")

func (r *reader) damaged(err error) error {
	if errors.Is(err, ErrDamaged) {
		return err
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: %s: %w", ErrDamaged, r.name, err)
}
