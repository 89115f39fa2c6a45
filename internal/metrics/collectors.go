/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	examplev1 "sunstrider.cn/operator/api/example/v1"
	pocv1 "sunstrider.cn/operator/api/poc/v1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
)

// scrapeTimeout bounds each read of the cache during a scrape: a kind
// whose informer has not synced yet is left out rather than holding the
// scrape.
const scrapeTimeout = 5 * time.Second

var log = logf.Log.WithName("metrics")

// Kind is one kind of parent the Objects gauge counts.
type Kind struct {
	// Name is the kind label: "Application".
	Name string
	// NewList returns an empty list of the kind.
	NewList func() client.ObjectList
	// Conditions returns the status conditions of one object of the kind.
	Conditions func(runtime.Object) []metav1.Condition
}

// The kinds the operator reconciles.
var (
	Application = Kind{Name: "Application",
		NewList:    func() client.ObjectList { return &sunappsv1.ApplicationList{} },
		Conditions: func(o runtime.Object) []metav1.Condition { return o.(*sunappsv1.Application).Status.Conditions }}
	MyCustomResource = Kind{Name: "MyCustomResource",
		NewList:    func() client.ObjectList { return &pocv1.MyCustomResourceList{} },
		Conditions: func(o runtime.Object) []metav1.Condition { return o.(*pocv1.MyCustomResource).Status.Conditions }}
	Guestbook = Kind{Name: "Guestbook",
		NewList:    func() client.ObjectList { return &webappv1.GuestbookList{} },
		Conditions: func(o runtime.Object) []metav1.Condition { return o.(*webappv1.Guestbook).Status.Conditions }}
	Drink = Kind{Name: "Drink",
		NewList:    func() client.ObjectList { return &examplev1.DrinkList{} },
		Conditions: func(o runtime.Object) []metav1.Condition { return o.(*examplev1.Drink).Status.Conditions }}
)

// Options say what the collectors of Register read.
type Options struct {
	// Cache is the manager's cache (mgr.GetCache()).
	Cache client.Reader
	// Kinds are the kinds whose controllers run: listing another kind
	// would start an informer for it.
	Kinds []Kind
	// WebhookCertificate, when set, returns the NotAfter of the certificate
	// the webhook server serves (certs.NotAfter of its file); an error
	// leaves the gauge out.
	WebhookCertificate func() (time.Time, error)
	// Configuration reports the OperatorConfiguration's generation in
	// effect; false when its CRD is not installed.
	Configuration bool
	// Elected, when set, is closed once this replica leads (mgr.Elected()):
	// only then are objects counted. Listing the cache starts an informer
	// for the kind; on a standby such informers would go through an API
	// server outage and back off, and the replica would take over with
	// caches that lag by the backoff (it used to start them fresh on
	// election). The leader's count is the one that matters anyway.
	Elected <-chan struct{}
}

// Register registers the collectors that read the running operator at
// scrape time on reg (metrics.Registry in the manager).
func Register(reg prometheus.Registerer, o Options) error {
	objects := &objectsCollector{reader: o.Cache, kinds: o.Kinds, elected: o.Elected}
	collectors := []prometheus.Collector{objects}
	if o.WebhookCertificate != nil {
		collectors = append(collectors, NewCertificateExpiryCollector(o.WebhookCertificate))
	}
	if o.Configuration {
		collectors = append(collectors, NewConfigurationCollector(o.Cache))
	}
	for _, c := range collectors {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

var objectsDesc = prometheus.NewDesc(Objects,
	"Objects of each kind in the operator's cache, by the status and reason of their Ready condition.",
	[]string{"kind", "status", "reason"}, nil)

type objectsCollector struct {
	reader client.Reader
	kinds  []Kind
	// elected: see Options.Elected; nil collects always.
	elected <-chan struct{}
}

func (c *objectsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- objectsDesc }

func (c *objectsCollector) Collect(ch chan<- prometheus.Metric) {
	if c.elected != nil {
		select {
		case <-c.elected:
		default:
			return
		}
	}
	type series struct{ status, reason string }
	for _, kind := range c.kinds {
		ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
		list := kind.NewList()
		// Only read: the cache's own objects, not a copy of each at
		// every scrape.
		err := c.reader.List(ctx, list, client.UnsafeDisableDeepCopy)
		cancel()
		if err != nil {
			// An invalid metric would fail the whole scrape (the metrics
			// server answers 500 on any error): leave the kind out.
			log.Error(err, "Listing objects for the metrics failed", "kind", kind.Name)
			continue
		}
		counts := map[series]int{}
		_ = meta.EachListItem(list, func(o runtime.Object) error {
			s := series{status: string(metav1.ConditionUnknown)}
			if ready := meta.FindStatusCondition(kind.Conditions(o), "Ready"); ready != nil {
				s = series{status: string(ready.Status), reason: ready.Reason}
			}
			counts[s]++
			return nil
		})
		for s, n := range counts {
			ch <- prometheus.MustNewConstMetric(objectsDesc, prometheus.GaugeValue, float64(n), kind.Name, s.status, s.reason)
		}
	}
}

var certificateDesc = prometheus.NewDesc(WebhookCertificateExpiry,
	"When the certificate the webhook server serves expires (its NotAfter), in Unix seconds.", nil, nil)

// NewCertificateExpiryCollector returns the WebhookCertificateExpiry gauge
// of the certificate whose NotAfter notAfter returns at each scrape.
func NewCertificateExpiryCollector(notAfter func() (time.Time, error)) prometheus.Collector {
	return certificateCollector(notAfter)
}

type certificateCollector func() (time.Time, error)

func (c certificateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- certificateDesc }

func (c certificateCollector) Collect(ch chan<- prometheus.Metric) {
	// No certificate yet (or unreadable): no series, rather than a
	// misleading value; the webhook readiness check reports it.
	if t, err := c(); err == nil {
		ch <- prometheus.MustNewConstMetric(certificateDesc, prometheus.GaugeValue, float64(t.Unix()))
	}
}

var configurationDesc = prometheus.NewDesc(ConfigurationGeneration,
	"The generation of the OperatorConfiguration in effect (its status.observedGeneration).", nil, nil)

var accessChecksDesc = prometheus.NewDesc(AccessChecksEnforced,
	"1 when the admission webhooks that check a requester's rights run (served and registered), 0 when they do not "+
		"(the OperatorConfiguration's status.effective.childAccess says Unenforced).", nil, nil)

// NewConfigurationCollector returns the ConfigurationGeneration and
// AccessChecksEnforced gauges, read from reader at each scrape: the
// status the configuration controller wrote, so that the metric and the
// status cannot disagree.
func NewConfigurationCollector(reader client.Reader) prometheus.Collector {
	return &configurationCollector{reader: reader}
}

type configurationCollector struct{ reader client.Reader }

func (c *configurationCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- configurationDesc
	ch <- accessChecksDesc
}

func (c *configurationCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	cfg := &configv1alpha1.OperatorConfiguration{}
	if err := c.reader.Get(ctx, client.ObjectKey{Name: configv1alpha1.ConfigurationName}, cfg); err != nil {
		return
	}
	if cfg.Status.ObservedGeneration > 0 {
		ch <- prometheus.MustNewConstMetric(configurationDesc, prometheus.GaugeValue, float64(cfg.Status.ObservedGeneration))
		enforced := 1.0
		if cfg.Status.Effective.ChildAccess == configv1alpha1.ChildAccessUnenforced {
			enforced = 0
		}
		ch <- prometheus.MustNewConstMetric(accessChecksDesc, prometheus.GaugeValue, enforced)
	}
}
