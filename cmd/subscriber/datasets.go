package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rshub/rshub/client/dataset"
	"github.com/rshub/rshub/client/mirror"
)

// runDatasets is dataset mode: discover, list or import, then follow.
func runDatasets(ctx context.Context, s settings, client *http.Client, logger *slog.Logger, p *printer, stdout io.Writer) error {
	all, err := dataset.Discover(ctx, client, s.Source)
	if err != nil {
		return err
	}
	if s.ListDatasets {
		return listDatasets(all, s.JSON, stdout)
	}
	chosen, err := chooseDatasets(all, s.DatasetName, s.AllDatasets)
	if err != nil {
		return err
	}
	if s.AllDatasets && (s.Export != "" || s.CallbackURL != "") {
		return errors.New("--export and --callback-url name one dataset: not with --all")
	}
	importers := make([]*dataset.Importer, len(chosen))
	defer func() {
		for _, im := range importers {
			if im != nil {
				if err := im.Close(); err != nil {
					logger.Error("closing a dataset", "err", err)
				}
			}
		}
	}()
	for i, ds := range chosen {
		dir := s.Dataset
		if s.AllDatasets {
			dir = filepath.Join(s.Dataset, safeName(ds.Name()))
		}
		about := fmt.Sprintf("dataset %q into %s", ds.Name(), dir)
		if ds.Title != "" {
			about = fmt.Sprintf("dataset %q (%s) into %s", ds.Name(), ds.Title, dir)
		}
		p.event(mirror.Event{Time: time.Now(), Kind: mirror.EventInfo, Loc: ds.CapabilityList, Path: dir, Message: about})
		im, err := dataset.Open(dataset.Config{Dir: dir, Dataset: ds, DataSetFile: s.DataSetFile, Client: client, Logger: logger, Events: p.event})
		if err != nil {
			return err
		}
		importers[i] = im
		// Import once; with --no-follow, later runs catch the copy up by
		// pulling (a scheduled sync), since nothing follows in between.
		load := im.Import
		if s.NoFollow {
			load = im.Update
		}
		if err := load(ctx); err != nil {
			return err
		}
	}
	if s.Export != "" {
		if err := export(importers[0], s.Export, stdout); err != nil {
			return err
		}
	}
	if s.NoFollow {
		return nil
	}
	errs := make([]error, len(importers))
	var wg sync.WaitGroup
	for i, im := range importers {
		fc, err := followConfig(s, i)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = im.Follow(ctx, fc)
		}()
	}
	wg.Wait()
	if s.Export != "" {
		if err := export(importers[0], s.Export, stdout); err != nil {
			return err
		}
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return ctx.Err()
}

// followConfig is the transport of the i-th dataset.
func followConfig(s settings, i int) (dataset.FollowConfig, error) {
	fc := dataset.FollowConfig{Transport: s.Transport, HubCapabilityList: s.HubCapabilityList}
	switch s.Transport {
	case "websocket", "sse":
		fc.WebSocket = mirror.WebSocketConfig{Token: s.WSToken, Channel: s.Channel}
	case "nats":
		fc.NATS = mirror.NATSConfig{URL: s.NATSURL, Stream: s.NATSStream, Prefix: s.NATSPrefix, Channel: s.Channel}
	default:
		addr := s.Listen
		if i > 0 {
			host, port, err := net.SplitHostPort(s.Listen)
			n, perr := strconv.Atoi(port)
			if err != nil || perr != nil {
				return fc, fmt.Errorf("--listen %q: %v", s.Listen, errors.Join(err, perr))
			}
			addr = net.JoinHostPort(host, strconv.Itoa(n+i))
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fc, fmt.Errorf("--listen: %w", err)
		}
		fc.Webhook = mirror.WebhookConfig{Listener: ln, CallbackURL: s.CallbackURL, Lease: s.Lease, UnsubscribeOnExit: s.unsubscribeOnExit(), Resync: s.Resync}
	}
	if s.AllDatasets {
		fc.HubCapabilityList, fc.WebSocket.Channel, fc.NATS.Channel = "", "", ""
	}
	return fc, nil
}

// chooseDatasets picks the datasets to import.
func chooseDatasets(all []dataset.Dataset, name string, every bool) ([]dataset.Dataset, error) {
	if every {
		return all, nil
	}
	var names []string
	for _, ds := range all {
		if name == "" && len(all) == 1 || name != "" && (ds.Name() == name || ds.Title == name || ds.CapabilityList == name) {
			return []dataset.Dataset{ds}, nil
		}
		names = append(names, fmt.Sprintf("%s (%q)", ds.Name(), ds.Title))
	}
	if name == "" {
		return nil, fmt.Errorf("the Source has %d datasets: give --dataset-name or --all; datasets: %s", len(all), strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("no dataset %q; datasets: %s", name, strings.Join(names, ", "))
}

// listDatasets prints the datasets, as JSON objects or a table.
func listDatasets(all []dataset.Dataset, asJSON bool, out io.Writer) error {
	for _, ds := range all {
		if asJSON {
			v := struct {
				Name string `json:"name"`
				dataset.Dataset
			}{ds.Name(), ds}
			if err := json.NewEncoder(out).Encode(v); err != nil {
				return err
			}
			continue
		}
		how := "no Change List nor Resource List"
		switch {
		case ds.ChangeList != "":
			how = "patches of " + ds.ChangeList
		case ds.ResourceList != "":
			how = "dataset file of " + ds.ResourceList
		}
		title := ds.Title
		if title == "" {
			title = "(no title"
			if ds.DescriptionError != "" {
				title += ": " + ds.DescriptionError
			}
			title += ")"
		}
		push := "no push channel"
		if ds.Topic != "" {
			push = "topic " + ds.Topic + " on hub " + ds.Hub
		}
		fmt.Fprintf(out, "%s\t%s\n\tcapability list %s\n\timports the %s\n\t%s\n", ds.Name(), title, ds.CapabilityList, how, push)
	}
	return nil
}

// export writes the dataset as sorted N-Quads to path ("-": out).
func export(im *dataset.Importer, path string, out io.Writer) error {
	if path == "-" {
		return im.Export(out)
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("--export: %w", err)
	}
	if err := im.Export(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--export: %w", err)
	}
	return os.Rename(tmp, path)
}

// safeName makes a dataset name usable as a directory name.
func safeName(name string) string {
	r := strings.NewReplacer("/", "_", "\\", "_", ":", "_", "..", "_")
	if name = r.Replace(name); name == "" || name == "." {
		return "dataset"
	}
	return name
}
