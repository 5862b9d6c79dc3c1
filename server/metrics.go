package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's Prometheus series, on a registry of its own so that several servers
// in one process (tests) do not collide.
type metrics struct {
	reg          *prometheus.Registry
	runsCreated  prometheus.Counter
	runsActive   prometheus.Gauge
	runsFinished *prometheus.CounterVec
	runSeconds   prometheus.Histogram
	events       prometheus.Counter
	requests     *prometheus.CounterVec
	streams      prometheus.Gauge
}

func newMetrics() *metrics {
	m := &metrics{
		reg:          prometheus.NewRegistry(),
		runsCreated:  prometheus.NewCounter(prometheus.CounterOpts{Name: "trellis_runs_created_total", Help: "Runs created."}),
		runsActive:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "trellis_runs_active", Help: "Runs executing now."}),
		runsFinished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trellis_runs_finished_total", Help: "Runs finished, by status."}, []string{"status"}),
		runSeconds:   prometheus.NewHistogram(prometheus.HistogramOpts{Name: "trellis_run_duration_seconds", Help: "Run execution time.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 16)}),
		events:       prometheus.NewCounter(prometheus.CounterOpts{Name: "trellis_stream_events_total", Help: "Stream events produced by runs."}),
		requests:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trellis_http_requests_total", Help: "HTTP requests, by route and status code."}, []string{"route", "code"}),
		streams:      prometheus.NewGauge(prometheus.GaugeOpts{Name: "trellis_streams_open", Help: "SSE and WebSocket streams open now."}),
	}
	m.reg.MustRegister(m.runsCreated, m.runsActive, m.runsFinished, m.runSeconds, m.events, m.requests, m.streams,
		collectors.NewGoCollector())
	return m
}
