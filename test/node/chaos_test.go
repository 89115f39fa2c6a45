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
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// runtimeOutage is how long the chaos test keeps the CRI runtime stopped,
// at least.
const runtimeOutage = 30 * time.Second

// notReadyWindow is how long, at least, the runtime stays stopped once the
// node reports NotReady (the kubelet notices after about 30 s).
const notReadyWindow = 10 * time.Second

// The CRI runtime (containerd) stopped for 30 s, then started. The
// containers keep running under their shims; the kubelet cannot reach the
// runtime and reports its node NotReady, but Kubernetes keeps its Pods
// Ready (the node lifecycle controller marks Pods not ready only once a
// kubelet stops reporting). No Application may claim Ready on Pods the
// node cannot vouch for: each says NodeNotReady (Reconciling, InProgress)
// until the runtime is back, then every one is Ready and answers again.
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
	// Every Application stops claiming Ready, though its Pod still is.
	notReady := func(g Gomega) {
		for _, app := range apps {
			g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(app), app)).To(Succeed())
			ready := condition(app, sunappsv1.ConditionReady)
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse), app.Name)
			g.Expect(ready.Reason).To(Equal(sunappsv1.ReasonNodeNotReady), app.Name)
			g.Expect(ready.Message).To(ContainSubstring("its node "+realNode+" is not"), app.Name)
			g.Expect(testutil.KStatus(g, app)).To(Equal(kstatus.InProgressStatus))
		}
	}
	g.Eventually(notReady, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	appsNotReady := time.Since(stopped)
	podsStillReady := 0
	for _, app := range apps {
		for _, p := range appPods(g, ns, app.Name) {
			if podReady(&p) {
				podsStillReady++
			}
		}
	}
	// And none claims it again while the runtime is down.
	g.Consistently(notReady, max(runtimeOutage-time.Since(stopped), notReadyWindow), 250*time.Millisecond).
		Should(Succeed())

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
	t.Logf("CRI runtime stopped for %s: node NotReady after %s, every Application NodeNotReady after %s "+
		"(%d of their Pods still Ready by Kubernetes); node Ready, every Application Ready and answering %s "+
		"after the restart", outage.Round(100*time.Millisecond), nodeNotReady.Round(100*time.Millisecond),
		appsNotReady.Round(100*time.Millisecond), podsStillReady, time.Since(started).Round(100*time.Millisecond))
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
