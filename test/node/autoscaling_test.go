//go:build node

package node

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// spec.autoscaling for real: metrics-server (built from the module proxy,
// run by kwokctl beside the real node) reads the test app's containers'
// CPU from the node's kubelet; kube-controller-manager's autoscaler, aimed
// at the Application's scale subresource, scales it up under load (the
// test app burns CPU on /burn) and, once the load stops, back down; the
// Deployment follows the Application each time.
func TestAutoscalingScalesUpUnderLoadAndBackDown(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	dumpOnFailure(t, ns)
	c := appContainer()
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}
	app := application(ns, "scaled", 1, c)
	app.Spec.Autoscaling = &sunappsv1.Autoscaling{
		MinReplicas: new(int32(1)), MaxReplicas: 3,
		Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType,
					AverageUtilization: new(int32(50))}}}},
		// Down at once when the load stops (the default waits 5 minutes).
		Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{
			StabilizationWindowSeconds: new(int32(0))}},
	}
	g.Expect(admin.Create(ctx(), app)).To(Succeed())
	waitReady(g, app)

	// The autoscaler has read the app's CPU: what can act, acts.
	g.Eventually(func(g Gomega) {
		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), hpa)).To(Succeed())
		g.Expect(hpa.Status.CurrentMetrics).To(ContainElement(HaveField("Resource.Current.AverageUtilization",
			Not(BeNil()))), "no CPU read yet: %v", hpa.Status.Conditions)
	}, 3*time.Minute, time.Second).Should(Succeed())

	load, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	url := fmt.Sprintf("http://%s:80/burn?ms=500", app.Status.ClusterIP)
	for range 4 {
		wg.Go(func() {
			hc := &http.Client{Timeout: 5 * time.Second}
			for load.Err() == nil {
				if resp, err := hc.Get(url); err == nil {
					_ = resp.Body.Close()
				}
			}
		})
	}
	replicas := func(g Gomega) (int32, int32) {
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), app)).To(Succeed())
		return *app.Spec.Deployment.Replicas, app.Status.Workflow.ReadyReplicas
	}
	g.Eventually(func(g Gomega) {
		want, ready := replicas(g)
		g.Expect(want).To(BeNumerically(">", 1), "scaled up")
		g.Expect(ready).To(Equal(want), "the Deployment followed")
	}, 4*time.Minute, time.Second).Should(Succeed())
	up, _ := replicas(g)
	t.Logf("scaled up to %d replicas under load", up)
	stop()
	wg.Wait()

	g.Eventually(func(g Gomega) {
		want, ready := replicas(g)
		g.Expect(want).To(Equal(int32(1)), "scaled back down")
		g.Expect(ready).To(Equal(int32(1)))
	}, 4*time.Minute, time.Second).Should(Succeed())
	waitReady(g, app)
}
