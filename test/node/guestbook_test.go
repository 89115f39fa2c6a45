//go:build node

package node

import (
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
)

// A Guestbook on real Pods: its instances run the test image on the real
// node (their namespace is labelled for it: hack/real-node/placement.yaml),
// the active instance's container is killed with crictl, a standby is
// promoted and the Service's endpoints follow it. The failover time, from
// the kill to the first answer through the Service from the new active
// instance, is printed.
func TestGuestbookFailsOverWhenItsActiveContainerIsKilled(t *testing.T) {
	g := NewWithT(t)
	// The instances' image, for every Guestbook (it applies at once), put
	// back afterwards.
	var cfg configv1alpha1.OperatorConfiguration
	g.Expect(admin.Get(ctx(), client.ObjectKey{Name: "default"}, &cfg)).To(Succeed())
	before := cfg.Spec.GuestbookImage
	cfg.Spec.GuestbookImage = imageV1
	g.Expect(admin.Update(ctx(), &cfg)).To(Succeed())
	t.Cleanup(func() {
		var cfg configv1alpha1.OperatorConfiguration
		if admin.Get(ctx(), client.ObjectKey{Name: "default"}, &cfg) == nil {
			cfg.Spec.GuestbookImage = before
			_ = admin.Update(ctx(), &cfg)
		}
	})

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "guestbook-",
		Labels: map[string]string{realKey: "true"}}}
	g.Expect(admin.Create(ctx(), ns)).To(Succeed())
	t.Cleanup(func() { _ = admin.Delete(ctx(), ns) })
	dumpOnFailure(t, ns.Name)
	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Name: ns.Name},
		Spec: webappv1.GuestbookSpec{Size: 2, ConfigMapName: "guestbook-conf", Namespace: ns.Name}}
	g.Expect(admin.Create(ctx(), gb)).To(Succeed())
	t.Cleanup(func() { _ = admin.Delete(ctx(), gb) })

	// active is the Guestbook's active instance once both run for real and
	// the Service's one ready endpoint is that instance.
	active := func(g Gomega) corev1.Pod {
		var pods corev1.PodList
		g.Expect(admin.List(ctx(), &pods, client.InNamespace(ns.Name),
			client.MatchingLabels{"webapp.my.domain/guestbook": gb.Name})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(2))
		var act []corev1.Pod
		for _, p := range pods.Items {
			g.Expect(p.Spec.NodeName).To(Equal(realNode))
			g.Expect(p.Status.ContainerStatuses).To(HaveLen(1))
			g.Expect(p.Status.ContainerStatuses[0].Ready).To(BeTrue(), "instance %s ready", p.Name)
			if p.Labels["webapp.my.domain/role"] == "active" {
				act = append(act, p)
			}
		}
		g.Expect(act).To(HaveLen(1))
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(gb), gb)).To(Succeed())
		g.Expect(gb.Status.Active).To(Equal(act[0].Name))
		g.Expect(readyEndpoints(g, ns.Name, gb.Name)).To(ConsistOf(act[0].Status.PodIP))
		return act[0]
	}
	var first corev1.Pod
	g.Eventually(func(g Gomega) { first = active(g) }, 120*time.Second, 250*time.Millisecond).Should(Succeed())
	var svc corev1.Service
	g.Expect(admin.Get(ctx(), client.ObjectKey{Namespace: ns.Name, Name: gb.Name}, &svc)).To(Succeed())
	url := fmt.Sprintf("http://%s:80/", svc.Spec.ClusterIP)
	g.Eventually(func() (string, error) { return get(url) }, 10*time.Second, 200*time.Millisecond).Should(Equal("v1"))

	// The active instance's container, killed on the node.
	id := strings.TrimPrefix(first.Status.ContainerStatuses[0].ContainerID, "containerd://")
	g.Expect(id).NotTo(BeEmpty())
	killed := time.Now()
	out, err := crictl("stop", "--timeout", "0", id)
	g.Expect(err).NotTo(HaveOccurred(), "crictl stop: %s", out)

	var second corev1.Pod
	g.Eventually(func(g Gomega) {
		second = active(g)
		g.Expect(second.Name).NotTo(Equal(first.Name), "a standby is promoted")
	}, 60*time.Second, 100*time.Millisecond).Should(Succeed())
	promoted := time.Since(killed)
	g.Eventually(func() (string, error) { return get(url) }, 10*time.Second, 50*time.Millisecond).Should(Equal("v1"))
	answered := time.Since(killed)
	t.Logf("Guestbook failover: active %s killed; %s promoted, the Service's endpoint on it after %s; "+
		"first answer through the Service after %s",
		first.Name, second.Name, promoted.Round(10*time.Millisecond), answered.Round(10*time.Millisecond))
	// The killed container was really restarted by the kubelet.
	g.Eventually(func(g Gomega) {
		var p corev1.Pod
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(&first), &p)).To(Succeed())
		g.Expect(p.Status.ContainerStatuses[0].RestartCount).To(BeNumerically(">=", 1))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())
}

// readyEndpoints are the addresses of the Service's ready endpoints.
func readyEndpoints(g Gomega, ns, service string) []string {
	var slices discoveryv1.EndpointSliceList
	g.Expect(admin.List(ctx(), &slices, client.InNamespace(ns),
		client.MatchingLabels{discoveryv1.LabelServiceName: service})).To(Succeed())
	var out []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				out = append(out, e.Addresses...)
			}
		}
	}
	return out
}
