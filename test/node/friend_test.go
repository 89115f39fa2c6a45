//go:build node

package node

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pocv1 "sunstrider.cn/operator/api/poc/v1"
)

// A MyCustomResource's friend Pod, real: Ready (Healthy) follows the
// container's readiness probe, then the Pod's deletion.
func TestFriendPodOnTheRealNode(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	dumpOnFailure(t, ns)
	mcr := &pocv1.MyCustomResource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "friendly"},
		Spec: pocv1.MyCustomResourceSpec{Name: "real-joe"}}
	g.Expect(admin.Create(ctx(), mcr)).To(Succeed())
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "real-joe"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{appContainer("-not-ready")}}}
	onRealNode(&pod.Spec)
	g.Expect(admin.Create(ctx(), pod)).To(Succeed())

	ready := func(g Gomega) *metav1.Condition {
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(mcr), mcr)).To(Succeed())
		c := meta.FindStatusCondition(mcr.Status.Conditions, "Ready")
		g.Expect(c).NotTo(BeNil())
		return c
	}
	// The container runs, its probe fails: PodNotReady.
	g.Eventually(func(g Gomega) {
		g.Expect(admin.Get(ctx(), client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
		g.Expect(pod.Status.ContainerStatuses[0].Started).To(HaveValue(BeTrue()))
		c := ready(g)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal("PodNotReady"))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())

	g.Expect(post("http://" + pod.Status.PodIP + ":8080/ready/on")).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := ready(g)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Reason).To(Equal("PodReady"))
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())

	// Deleted, the container stops (the app drains, then exits on SIGTERM)
	// and the friend is gone.
	g.Expect(admin.Delete(ctx(), pod)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := ready(g)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal("PodNotFound"))
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())
}
