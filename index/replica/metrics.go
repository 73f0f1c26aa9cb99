package replica

import "github.com/prometheus/client_golang/prometheus"

// metrics are a follower's Prometheus series. The lag gauges are set by
// Status (every /readyz, /v1/status and the follower's own poll); the apply
// rate is rate(kernelrank_replica_applied_entries_total[1m]).
type metrics struct {
	applied                prometheus.Counter
	lagEntries, lagSeconds prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		applied: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kernelrank_replica_applied_entries_total",
			Help: "Corpus log entries applied to this process's replica.",
		}),
		lagEntries: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kernelrank_replica_lag_entries",
			Help: "Corpus log entries appended and not yet applied here.",
		}),
		lagSeconds: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kernelrank_replica_lag_seconds",
			Help: "Age of the oldest corpus log entry not yet applied here (0 when caught up).",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.applied, m.lagEntries, m.lagSeconds)
	}
	return m
}
