package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// ChannelLabel is the label that names a channel in the hub's series.
const ChannelLabel = "channel"

// HandlerHiding serves the metrics without the series whose channel label
// names a channel hidden reports true for (a private channel, on a door
// that does not know who asks). hidden is asked once per channel and
// scrape.
func (m *Metrics) HandlerHiding(hidden func(channel string) bool) http.Handler {
	g := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := m.reg.Gather()
		return hideChannels(mfs, hidden), err
	})
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{Registry: m.reg})
}

// hideChannels drops from mfs the series of the channels hidden reports
// true for, and the families left without series.
func hideChannels(mfs []*dto.MetricFamily, hidden func(string) bool) []*dto.MetricFamily {
	seen := map[string]bool{}
	hide := func(ch string) bool {
		h, ok := seen[ch]
		if !ok {
			h = hidden(ch)
			seen[ch] = h
		}
		return h
	}
	out := mfs[:0]
	for _, mf := range mfs {
		kept := mf.Metric[:0]
		for _, s := range mf.Metric {
			if !hidesSeries(s, hide) {
				kept = append(kept, s)
			}
		}
		if len(kept) == 0 && len(mf.Metric) > 0 {
			continue
		}
		mf.Metric = kept
		out = append(out, mf)
	}
	return out
}

func hidesSeries(s *dto.Metric, hide func(string) bool) bool {
	for _, l := range s.Label {
		if l.GetName() == ChannelLabel && hide(l.GetValue()) {
			return true
		}
	}
	return false
}
