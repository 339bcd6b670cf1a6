package console

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ssgen/ssgen/internal/protocol"
	"github.com/ssgen/ssgen/server"
)

// Metric label values. Verbs outside the protocol's are "other", requests
// that were never decoded "none", so that no client can grow a label set.
var (
	metricVerbs   = [len(protocol.Verbs) + 2]string(append(protocol.Verbs[:], "other", "none"))
	metricResults = [...]string{"ok", "error", "refused", "dropped"}
)

const (
	resultOK = iota
	resultError
	resultRefused
	resultDropped
)

// metrics are the console's Prometheus collectors, in a registry of their
// own. The request path touches only pre-resolved counters and
// histograms (atomic adds); everything read from the store is read when
// /metrics is scraped.
type metrics struct {
	reg      *prometheus.Registry
	requests [len(metricVerbs)][len(metricResults)]prometheus.Counter
	latency  [len(metricVerbs)]prometheus.Observer
	errors   *prometheus.CounterVec
	schema   *prometheus.CounterVec
	commits  prometheus.Histogram
	failed   prometheus.Counter
	changes  prometheus.Counter
}

func newMetrics(srv *server.Server, sse func() int) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ssgen_requests_total",
		Help: "State store requests by verb and result: ok (answered without -ERR), error (answered -ERR), refused (answered 400 or 505 by an envelope rule), dropped (not answered).",
	}, []string{"verb", "result"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "ssgen_request_duration_seconds",
		Help:    "Time from the service receiving a request to its answer being handed to the broker, by verb.",
		Buckets: []float64{25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1},
	}, []string{"verb"})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ssgen_request_errors_total",
		Help: "Requests answered -ERR, by verb and error (not_authorized, fencing_token_lower, quota_exceeded, ...; other for any other text).",
	}, []string{"verb", "error"})
	m.schema = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ssgen_schema_violations_total",
		Help: "SETs whose value does not fit its key's declaration (serve --enforce warn|refuse), by declaration, reason (decode, immutable, monotonic, busy) and action (warned: applied; refused: answered -ERR schema violation).",
	}, []string{"declaration", "reason", "action"})
	for v, verb := range metricVerbs {
		for r, res := range metricResults {
			m.requests[v][r] = requests.WithLabelValues(verb, res)
		}
		m.latency[v] = latency.WithLabelValues(verb)
	}
	m.commits = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ssgen_persist_commit_duration_seconds",
		Help:    "Duration of one commit of the durable store (--data-dir): a write-ahead log record and its fdatasync (with --direct-commits a bbolt transaction and its fsyncs), however many changes it carries.",
		Buckets: []float64{100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1, 2.5},
	})
	m.changes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ssgen_persist_committed_changes_total",
		Help: "Key changes made durable by the durable store's commits.",
	})
	m.failed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ssgen_persist_commit_failures_total",
		Help: "Commits of the durable store that failed (their requests were answered with the persistence error).",
	})
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	counter := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f)
	}
	eng := srv.Engine()
	m.reg.MustRegister(
		requests, latency, m.errors, m.schema, m.commits, m.changes, m.failed,
		gauge("ssgen_keys", "Live keys in the store.", func() float64 { return float64(eng.Len()) }),
		gauge("ssgen_key_bytes", "Sum of key and value bytes over live keys (the quota's measure).", func() float64 { return float64(eng.Bytes()) }),
		gauge("ssgen_watches", "KEYNOTIFY registrations, all clients together.", func() float64 { return float64(eng.WatchCount()) }),
		gauge("ssgen_watch_bytes", "Sum of the lengths of the keys of all KEYNOTIFY registrations (what --max-watch-bytes-total bounds).", func() float64 { return float64(eng.WatchBytes()) }),
		counter("ssgen_notifications_sent_total", "KEYNOTIFY notifications handed to the broker.", func() float64 { return float64(srv.Stats().NotificationsSent) }),
		counter("ssgen_notifications_dropped_total", "KEYNOTIFY notifications the embedded broker could not queue for their client.", func() float64 { return float64(srv.Stats().NotificationsDropped) }),
		counter("ssgen_messages_dropped_total", "Responses and notifications the embedded broker could not queue (full outbound queue or in-flight table).", func() float64 { return float64(srv.Stats().Dropped) }),
		gauge("ssgen_connected_clients", "Open client connections of the embedded broker.", func() float64 { return float64(srv.Stats().Connections) }),
		gauge("ssgen_kept_sessions", "Sessions the embedded broker keeps for disconnected clients.", func() float64 { return float64(srv.Stats().KeptSessions) }),
		counter("ssgen_connections_refused_total", "Connections refused for the connection limits.", func() float64 { return float64(srv.Stats().ConnectionsRefused) }),
		counter("ssgen_output_disconnects_total", "Clients disconnected for holding too many unacknowledged bytes.", func() float64 { return float64(srv.Stats().OutputDisconnects) }),
		gauge("ssgen_console_streams", "Open live streams (Server-Sent Events) of the web console.", func() float64 { return float64(sse()) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// request counts one request.
func (m *metrics) request(ev *server.RequestEvent) {
	v := verbIndex(ev.Verb)
	r := resultOK
	switch {
	case ev.Dropped:
		r = resultDropped
	case ev.Status != 200:
		r = resultRefused
	case ev.Error != "":
		r = resultError
		slug := protocol.OtherErrorMetric
		if info, ok := protocol.LookupError(ev.Error); ok {
			slug = info.Metric
		}
		m.errors.WithLabelValues(metricVerbs[v], slug).Inc()
	}
	if ev.SchemaDeclaration != "" {
		action := "warned"
		if r == resultError {
			action = "refused"
		}
		m.schema.WithLabelValues(ev.SchemaDeclaration, ev.SchemaReason, action).Inc()
	}
	m.requests[v][r].Inc()
	m.latency[v].Observe(ev.Latency.Seconds())
}

// verbIndex is verb's index in metricVerbs.
func verbIndex(verb string) int {
	if verb == "" {
		return len(metricVerbs) - 1 // none
	}
	for i, v := range protocol.Verbs {
		if verb == v {
			return i
		}
	}
	return len(metricVerbs) - 2 // other
}

// commit records one commit of the durable store.
func (m *metrics) commit(c server.CommitEvent) {
	m.commits.Observe(c.Duration.Seconds())
	if c.Err != nil {
		m.failed.Inc()
		return
	}
	m.changes.Add(float64(c.Changes))
}
