//go:build tools

// Package metricsserver pins metrics-server, which the local cluster's real
// node runs (kwokctl --enable metrics-server) so that HorizontalPodAutoscalers
// read real containers' CPU. It lives in its own module so the operator's
// go.mod never depends on it.
package metricsserver

import (
	_ "sigs.k8s.io/metrics-server/cmd/metrics-server"
)
