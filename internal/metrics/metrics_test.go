package metrics

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// FirstReady observes the first Ready=True of each UID, and only that one.
func TestFirstReadyObservesOncePerObject(t *testing.T) {
	g := NewWithT(t)
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "h", Buckets: []float64{10, 100}})
	f := NewFirstReady(h)
	f.now = func() time.Time { return created.Add(42 * time.Second) }
	app := &sunappsv1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "1",
		CreationTimestamp: metav1.NewTime(created)}}
	notReady := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse}}
	ready := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}

	f.Written(app, nil, notReady)
	g.Expect(testutil.CollectAndCount(h)).To(Equal(1))
	g.Expect(sampleCount(h)).To(BeZero())
	f.Written(app, notReady, ready)
	g.Expect(sampleCount(h)).To(Equal(uint64(1)))
	f.Written(app, ready, ready)    // another status change while Ready
	f.Written(app, notReady, ready) // Ready again
	g.Expect(sampleCount(h)).To(Equal(uint64(1)))

	app.UID = types.UID("2") // deleted and created again under the same name
	f.Written(app, nil, ready)
	g.Expect(sampleCount(h)).To(Equal(uint64(2)))

	f.Forget(types.NamespacedName{Namespace: "ns", Name: "a"})
	g.Expect(f.seen).To(BeEmpty())
}

func sampleCount(h prometheus.Histogram) uint64 {
	m := &dto.Metric{}
	_ = h.Write(m)
	return m.GetHistogram().GetSampleCount()
}
