//go:build node

package node

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
)

// runtimeOutage is how long the chaos test keeps the CRI runtime stopped,
// at least.
const runtimeOutage = 30 * time.Second

// notReadyWindow is how long, at least, the runtime stays stopped once the
// node reports NotReady (the kubelet notices after about 30 s).
const notReadyWindow = 10 * time.Second

// The CRI runtime (containerd) stopped for 30 s, then started. The
// containers keep running under their shims; the kubelet cannot reach the
// runtime and reports its node NotReady. Kubernetes keeps those Pods Ready
// (the node lifecycle controller marks Pods not ready only when a kubelet
// stops reporting, not when it reports NotReady), and they keep serving:
// the Applications say what their Pods say, never Ready for a Pod that is
// not, and every one answers through its Service throughout. Once the
// runtime is back, the node is Ready and every Application Ready and
// answering.
func TestCRIRuntimeStoppedThenStarted(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	dumpOnFailure(t, ns)
	apps := make([]*sunappsv1.Application, 0, 2)
	for i := range 2 {
		app := application(ns, fmt.Sprintf("outage-%d", i), 1, appContainer())
		g.Expect(admin.Create(ctx(), app)).To(Succeed())
		apps = append(apps, app)
	}
	for _, app := range apps {
		waitReady(g, app)
	}

	node := func(g Gomega) corev1.ConditionStatus {
		var n corev1.Node
		g.Expect(admin.Get(ctx(), client.ObjectKey{Name: realNode}, &n)).To(Succeed())
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status
			}
		}
		return corev1.ConditionUnknown
	}
	script := filepath.Join(root, "hack", "real-node.sh")
	stopped := time.Now()
	out, err := sh(script, "runtime", "stop")
	g.Expect(err).NotTo(HaveOccurred(), "runtime stop:\n%s", out)
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_, _ = sh(script, "runtime", "start")
		}
	})

	// The kubelet reports the node NotReady.
	g.Eventually(node, 60*time.Second, 250*time.Millisecond).ShouldNot(Equal(corev1.ConditionTrue))
	nodeNotReady := time.Since(stopped)
	// Until the outage has lasted its 30 s: each Application's Ready is its
	// Pod's, and the Services answer.
	answered, failed := 0, 0
	g.Consistently(func(g Gomega) {
		for _, app := range apps {
			g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), app)).To(Succeed())
			appReady := condition(app, sunappsv1.ConditionReady).Status == metav1.ConditionTrue
			pods := appPods(g, ns, app.Name)
			g.Expect(pods).To(HaveLen(1))
			if appReady {
				g.Expect(podReady(&pods[0])).To(BeTrue(), "%s Ready while its Pod is not", app.Name)
			}
			if _, err := get(fmt.Sprintf("http://%s:80/", app.Status.ClusterIP)); err != nil {
				failed++
			} else {
				answered++
			}
		}
	}, max(runtimeOutage-time.Since(stopped), notReadyWindow), 500*time.Millisecond).Should(Succeed())

	out, err = sh(script, "runtime", "start")
	g.Expect(err).NotTo(HaveOccurred(), "runtime start:\n%s", out)
	restarted = true
	outage := time.Since(stopped)
	started := time.Now()
	g.Eventually(node, 60*time.Second, 250*time.Millisecond).Should(Equal(corev1.ConditionTrue))
	for _, app := range apps {
		waitReady(g, app)
		g.Eventually(func() (string, error) { return get(fmt.Sprintf("http://%s:80/", app.Status.ClusterIP)) },
			10*time.Second, 200*time.Millisecond).Should(Equal("v1"))
	}
	t.Logf("CRI runtime stopped for %s: node NotReady after %s; during the outage %d requests through the "+
		"Services answered, %d failed; node Ready, every Application Ready and answering %s after the restart",
		outage.Round(100*time.Millisecond), nodeNotReady.Round(100*time.Millisecond), answered, failed,
		time.Since(started).Round(100*time.Millisecond))
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
