package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/rshub/rshub/client/atom"
)

// checkAtom checks the settings of Atom mode (--atom).
func (s settings) checkAtom() error {
	switch {
	case s.Mirror == "":
		return fmt.Errorf("--atom needs --mirror")
	case s.Dataset != "" || s.Source != "" || s.Hub != "" || s.Topic != "":
		return fmt.Errorf("--atom harvests a feed by itself: not with --dataset, --source, --hub or --topic")
	case s.AtomInterval < 0:
		return fmt.Errorf("--atom-interval must not be negative")
	}
	return nil
}

// atomStatePath is where Atom mode keeps its harvester state.
func (s settings) atomStatePath() string {
	if s.State != "" {
		return s.State
	}
	return filepath.Clean(s.Mirror) + ".atom-state.json"
}

// runAtom harvests the Atom-PMH feed s.Atom into the mirror directory:
// once, then every s.AtomInterval until ctx ends (once only when it is 0),
// saving the harvester's state after each harvest so a restart resumes.
func runAtom(ctx context.Context, s settings, client *http.Client, logger *slog.Logger, stdout io.Writer) error {
	st, err := loadAtomState(s.atomStatePath())
	if err != nil {
		return err
	}
	h, err := atom.New(atom.Config{Feed: s.Atom, Client: client, Logger: logger}, st)
	if err != nil {
		return err
	}
	store := &atom.DirStore{Dir: s.Mirror, Base: s.BaseURL, Client: client}
	for {
		stats, err := h.Harvest(ctx, store)
		if serr := saveAtomState(s.atomStatePath(), h.State()); serr != nil {
			return serr
		}
		switch {
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil && s.AtomInterval == 0:
			return err
		case err != nil:
			logger.Warn("harvest failed; retrying at the next interval", "feed", s.Atom, "err", err)
		default:
			fmt.Fprintf(stdout, "%s harvested %s: %d documents, %d put, %d deleted, %d failed\n",
				time.Now().UTC().Format(time.RFC3339), s.Atom, stats.Documents, stats.Put, stats.Deleted, stats.Failed)
			if stats.Failed > 0 {
				logger.Warn("resources not stored; they are retried at the next harvest", "feed", s.Atom, "failed", stats.Failed)
			}
		}
		if s.AtomInterval == 0 {
			if err == nil && stats.Failed > 0 {
				return fmt.Errorf("atom: %d resources not stored (kept pending in %s; the next run retries them)", stats.Failed, s.atomStatePath())
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.AtomInterval):
		}
	}
}

func loadAtomState(path string) (atom.State, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return atom.State{}, nil
	}
	if err != nil {
		return atom.State{}, fmt.Errorf("atom state: %w", err)
	}
	var st atom.State
	if err := json.Unmarshal(b, &st); err != nil {
		return atom.State{}, fmt.Errorf("atom state %s: %w", path, err)
	}
	return st, nil
}

func saveAtomState(path string, st atom.State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("atom state: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("atom state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("atom state: %w", err)
	}
	return nil
}
