package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// The journal holds the patches applied since the last snapshot, each as
// a record of canonical change lines:
//
//	# rshub-patch <name>
//	+<quad> .
//	-<quad> .
//	# rshub-end <name>
//
// written and synced before the patch counts as applied. Replaying the
// whole journal over the snapshot is safe even when the snapshot already
// holds some of it: a patch sets each quad it names to present or absent,
// so applying again any run of patches that ends with the last one
// applied changes nothing.
const (
	journalStart = "# rshub-patch "
	journalEnd   = "# rshub-end "
)

// journal is an append-only file of applied patches.
type journal struct {
	path string
	f    *os.File
	size int64
}

// openJournal replays path's complete records through apply (in order),
// truncates a torn last record, and opens the file for appending.
func openJournal(path string, apply func(name string, changes []Change)) (*journal, error) {
	good, err := replayJournal(path, apply)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("dataset: journal: %w", err)
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("dataset: journal: %w", err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("dataset: journal: %w", err)
	}
	return &journal{path: path, f: f, size: good}, nil
}

// replayJournal applies the complete records and returns the byte length
// they take.
func replayJournal(path string, apply func(name string, changes []Change)) (int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("dataset: journal: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var good, off int64
	name := ""
	var changes []Change
	for {
		line, err := r.ReadString('\n')
		if err != nil { // a line without its newline is torn
			return good, nil
		}
		off += int64(len(line))
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, journalStart):
			name, changes = strings.TrimPrefix(line, journalStart), nil
		case strings.HasPrefix(line, journalEnd):
			if strings.TrimPrefix(line, journalEnd) == name && name != "" {
				apply(name, changes)
				good = off
			}
			name, changes = "", nil
		default:
			op, rest, ok := patchLine(line)
			if !ok || name == "" {
				continue
			}
			q, err := ParseQuad(rest)
			if err != nil {
				return good, nil // a corrupt record ends the journal
			}
			changes = append(changes, Change{Op: op, Quad: q})
		}
	}
}

// append writes one record and syncs it.
func (j *journal) append(name string, changes []Change) error {
	w := bufio.NewWriterSize(j.f, 256<<10)
	n := 0
	write := func(s string) {
		k, _ := w.WriteString(s)
		n += k
	}
	write(journalStart + name + "\n")
	for _, c := range changes {
		if c.Op == Add {
			write("+")
		} else {
			write("-")
		}
		write(c.Quad.String())
		write("\n")
	}
	write(journalEnd + name + "\n")
	if err := w.Flush(); err != nil {
		return fmt.Errorf("dataset: journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("dataset: journal: %w", err)
	}
	j.size += int64(n)
	return nil
}

// reset empties the journal (after a snapshot holds everything in it).
func (j *journal) reset() error {
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("dataset: journal: %w", err)
	}
	if _, err := j.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("dataset: journal: %w", err)
	}
	j.size = 0
	return j.f.Sync()
}

func (j *journal) close() error { return j.f.Close() }
