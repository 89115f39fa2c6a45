/*
Copyright 2026 The sunstrider operator authors.

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

package poc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pocv1 "sunstrider.cn/operator/api/poc/v1"
	"sunstrider.cn/operator/internal/testutil"
)

const testFinalizer = "test.sunstrider.cn/hold"

func newFriendSeeker(ns, name, friend string) *pocv1.MyCustomResource {
	return &pocv1.MyCustomResource{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       pocv1.MyCustomResourceSpec{Name: friend},
	}
}

func newPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "ubuntu", Image: "ubuntu:latest", Command: []string{"sleep"}, Args: []string{"infinity"},
		}}},
	}
}

// current returns the MyCustomResource at key as the API server has it.
func current(g *WithT, key types.NamespacedName) *pocv1.MyCustomResource {
	var obj pocv1.MyCustomResource
	g.Expect(k8sClient.Get(context.Background(), key, &obj)).To(Succeed())
	return &obj
}

// expectFriend waits until the MyCustomResource at key reports healthy and
// the given FriendFound, FriendReady and Ready statuses, for its current
// generation.
func expectFriend(g *WithT, key types.NamespacedName, healthy bool, found, ready, summary metav1.ConditionStatus) {
	g.Eventually(func(g Gomega) {
		var obj pocv1.MyCustomResource
		g.Expect(k8sClient.Get(context.Background(), key, &obj)).To(Succeed())
		g.Expect(obj.Status.ObservedGeneration).To(Equal(obj.Generation))
		g.Expect(obj.Status.Healthy).To(Equal(healthy))
		g.Expect(conditionStatus(&obj, pocv1.ConditionFriendFound)).To(Equal(found))
		g.Expect(conditionStatus(&obj, pocv1.ConditionFriendReady)).To(Equal(ready))
		g.Expect(conditionStatus(&obj, pocv1.ConditionReady)).To(Equal(summary))
	}).Should(Succeed())
}

func conditionStatus(obj *pocv1.MyCustomResource, condType string) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(obj.Status.Conditions, condType); c != nil {
		return c.Status
	}
	return ""
}

// expectReason waits until the condition of the given type has the reason.
func expectReason(g *WithT, key types.NamespacedName, condType, reason string) {
	g.Eventually(func() string { return conditionReason(current(g, key), condType) }).Should(Equal(reason))
}

func conditionReason(obj *pocv1.MyCustomResource, condType string) string {
	if c := meta.FindStatusCondition(obj.Status.Conditions, condType); c != nil {
		return c.Reason
	}
	return ""
}

func deletePodNow(g *WithT, pod *corev1.Pod) {
	g.Expect(k8sClient.Delete(context.Background(), pod, client.GracePeriodSeconds(0))).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(pod), &corev1.Pod{}))
	}).Should(BeTrue())
}

func setPodReady(g *WithT, pod *corev1.Pod, status corev1.ConditionStatus, reason, message string) {
	ctx := context.Background()
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
	pod.Status.Conditions = []corev1.PodCondition{{
		Type: corev1.PodReady, Status: status, Reason: reason, Message: message,
		LastTransitionTime: metav1.Now(),
	}}
	g.Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
}

// expectEvent waits for an event of the given reason about the named object.
func expectEvent(g *WithT, ns, regarding, reason string) {
	g.Eventually(func(g Gomega) []string {
		var list eventsv1.EventList
		g.Expect(k8sClient.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
		reasons := []string{}
		for _, e := range list.Items {
			if e.Regarding.Name == regarding {
				reasons = append(reasons, e.Reason)
			}
		}
		return reasons
	}).Should(ContainElement(reason))
}

func TestFriendPodCreatedAndDeleted(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	cr := newFriendSeeker(ns, "seeker", "funny-joe")
	key := client.ObjectKeyFromObject(cr)
	g.Expect(k8sClient.Create(ctx, cr)).To(Succeed())

	expectFriend(g, key, false, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse)
	expectReason(g, key, pocv1.ConditionReady, pocv1.ReasonPodNotFound)

	pod := newPod(ns, "funny-joe")
	g.Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	// No kubelet: the Pod reports no readiness.
	expectFriend(g, key, true, metav1.ConditionTrue, metav1.ConditionUnknown, metav1.ConditionUnknown)
	expectReason(g, key, pocv1.ConditionReady, pocv1.ReasonPodReadinessUnknown)

	deletePodNow(g, pod)
	expectFriend(g, key, false, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse)
	expectReason(g, key, pocv1.ConditionFriendFound, pocv1.ReasonPodNotFound)

	// Found and lost are both reported as events, once each (a repeat is
	// a second Event, or a series of the first on an unchanged object).
	testutil.ExpectEmissions(g, suite.Writes, func(g Gomega) []eventsv1.Event {
		var list eventsv1.EventList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		var about []eventsv1.Event
		for _, e := range list.Items {
			if e.Regarding.Name == cr.Name {
				about = append(about, e)
			}
		}
		return about
	}, testutil.ByReason, map[string]int32{eventFriendFound: 1, eventFriendLost: 1})
}

func TestFriendPodBeingDeletedIsNotHealthy(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	pod := newPod(ns, "lingering")
	pod.Finalizers = []string{testFinalizer}
	g.Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	cr := newFriendSeeker(ns, "seeker", "lingering")
	key := client.ObjectKeyFromObject(cr)
	g.Expect(k8sClient.Create(ctx, cr)).To(Succeed())
	expectFriend(g, key, true, metav1.ConditionTrue, metav1.ConditionUnknown, metav1.ConditionUnknown)

	// The finalizer keeps the Pod, with a deletionTimestamp.
	g.Expect(k8sClient.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	expectFriend(g, key, false, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse)
	expectReason(g, key, pocv1.ConditionFriendFound, pocv1.ReasonPodDeleting)
	expectReason(g, key, pocv1.ConditionReady, pocv1.ReasonPodDeleting)

	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
	g.Expect(pod.DeletionTimestamp).NotTo(BeNil())
	pod.Finalizers = nil
	g.Expect(k8sClient.Update(ctx, pod)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}))
	}).Should(BeTrue())
	expectFriend(g, key, false, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse)
	expectReason(g, key, pocv1.ConditionFriendFound, pocv1.ReasonPodNotFound)
}

func TestFriendPodInAnotherNamespaceDoesNotCount(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	nsA := testutil.Namespace(t, k8sClient)
	nsB := testutil.Namespace(t, k8sClient)
	lonely := newFriendSeeker(nsA, "lonely", "shared-name")
	g.Expect(k8sClient.Create(ctx, lonely)).To(Succeed())
	expectFriend(g, client.ObjectKeyFromObject(lonely), false, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse)

	// A witness in the Pod's namespace proves the Pod event was handled.
	witness := newFriendSeeker(nsB, "witness", "shared-name")
	g.Expect(k8sClient.Create(ctx, witness)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, newPod(nsB, "shared-name"))).To(Succeed())
	expectFriend(g, client.ObjectKeyFromObject(witness), true, metav1.ConditionTrue, metav1.ConditionUnknown, metav1.ConditionUnknown)

	// Reconciled after the Pod exists, lonely stays unhealthy.
	mark := suite.Reconciles.Mark()
	g.Expect(testutil.Nudge(ctx, k8sClient, lonely)).To(Succeed())
	suite.ExpectReconciled(g, mark, myCustomResourceController, client.ObjectKeyFromObject(lonely))
	g.Consistently(func() bool {
		return current(g, client.ObjectKeyFromObject(lonely)).Status.Healthy
	}).Should(BeFalse())
	expectReason(g, client.ObjectKeyFromObject(lonely), pocv1.ConditionFriendFound, pocv1.ReasonPodNotFound)
}

func TestManyResourcesShareOneFriend(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	keys := make([]types.NamespacedName, 0, 3)
	for _, name := range []string{"first", "second", "third"} {
		cr := newFriendSeeker(ns, name, "popular")
		g.Expect(k8sClient.Create(ctx, cr)).To(Succeed())
		keys = append(keys, client.ObjectKeyFromObject(cr))
	}
	// Another resource with another friend stays out of it.
	other := newFriendSeeker(ns, "other", "unpopular")
	g.Expect(k8sClient.Create(ctx, other)).To(Succeed())

	pod := newPod(ns, "popular")
	g.Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	for _, key := range keys {
		expectFriend(g, key, true, metav1.ConditionTrue, metav1.ConditionUnknown, metav1.ConditionUnknown)
	}
	setPodReady(g, pod, corev1.ConditionTrue, "", "")
	for _, key := range keys {
		expectFriend(g, key, true, metav1.ConditionTrue, metav1.ConditionTrue, metav1.ConditionTrue)
	}
	deletePodNow(g, pod)
	for _, key := range keys {
		expectFriend(g, key, false, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse)
	}
	expectFriend(g, client.ObjectKeyFromObject(other), false, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse)
}

func TestResourceCreatedAfterItsFriend(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	pod := newPod(ns, "early-bird")
	g.Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	setPodReady(g, pod, corev1.ConditionTrue, "", "")

	cr := newFriendSeeker(ns, "late", "early-bird")
	g.Expect(k8sClient.Create(ctx, cr)).To(Succeed())
	expectFriend(g, client.ObjectKeyFromObject(cr), true, metav1.ConditionTrue, metav1.ConditionTrue, metav1.ConditionTrue)
}

func TestFriendReadyFollowsPodReadyCondition(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	pod := newPod(ns, "moody")
	g.Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	cr := newFriendSeeker(ns, "seeker", "moody")
	key := client.ObjectKeyFromObject(cr)
	g.Expect(k8sClient.Create(ctx, cr)).To(Succeed())
	expectFriend(g, key, true, metav1.ConditionTrue, metav1.ConditionUnknown, metav1.ConditionUnknown)

	setPodReady(g, pod, corev1.ConditionTrue, "", "")
	expectFriend(g, key, true, metav1.ConditionTrue, metav1.ConditionTrue, metav1.ConditionTrue)
	expectReason(g, key, pocv1.ConditionReady, pocv1.ReasonPodReady)

	setPodReady(g, pod, corev1.ConditionFalse, "ContainersNotReady", "containers with unready status: [ubuntu]")
	expectFriend(g, key, true, metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionFalse)
	obj := current(g, key)
	g.Expect(conditionReason(obj, pocv1.ConditionFriendReady)).To(Equal(pocv1.ReasonPodNotReady))
	g.Expect(meta.FindStatusCondition(obj.Status.Conditions, pocv1.ConditionFriendReady).Message).
		To(ContainSubstring("ContainersNotReady"))

	setPodReady(g, pod, corev1.ConditionTrue, "", "")
	expectFriend(g, key, true, metav1.ConditionTrue, metav1.ConditionTrue, metav1.ConditionTrue)
}

func TestSpecNameValidation(t *testing.T) {
	ns := testutil.Namespace(t, k8sClient)
	for name, friend := range map[string]string{
		"empty":        "",
		"upper case":   "Funny-Joe",
		"underscore":   "funny_joe",
		"leading dash": "-funny",
		"too long":     strings.Repeat("a", 254),
	} {
		t.Run(name, func(t *testing.T) {
			g := newG(t)
			err := k8sClient.Create(context.Background(), newFriendSeeker(ns, "invalid", friend))
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		})
	}
	g := newG(t)
	g.Expect(k8sClient.Create(context.Background(),
		newFriendSeeker(ns, "longest", strings.Repeat("a", 63)+"."+strings.Repeat("b", 63)))).To(Succeed())
}

func TestSamplesApply(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	root, err := testutil.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	f, err := os.Open(filepath.Join(root, "config", "samples", "poc_v1_mycustomresource.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()

	friends := map[string]string{}
	decoder := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var obj pocv1.MyCustomResource
		if err := decoder.Decode(&obj); err != nil {
			g.Expect(err.Error()).To(Equal("EOF"))
			break
		}
		obj.Namespace = ns
		g.Expect(k8sClient.Create(ctx, &obj)).To(Succeed())
		friends[obj.Name] = obj.Spec.Name
	}
	g.Expect(friends).To(HaveKeyWithValue("my-custom-resource-01", "funny-joe"))
	g.Expect(friends).To(HaveKey("my-custom-resource-02"))

	g.Expect(k8sClient.Create(ctx, newPod(ns, "funny-joe"))).To(Succeed())
	expectFriend(g, types.NamespacedName{Namespace: ns, Name: "my-custom-resource-01"},
		true, metav1.ConditionTrue, metav1.ConditionUnknown, metav1.ConditionUnknown)
	expectFriend(g, types.NamespacedName{Namespace: ns, Name: "my-custom-resource-02"},
		false, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse)
}

// myCustomResourceController is the controller's name in logs and metrics.
const myCustomResourceController = "poc-mycustomresource"

// TestZeroWritesAtSteadyState checks the controller reconciles every
// MyCustomResource of this test again (after a change it ignores) without
// an API write, and a restarted manager reconciles them without a write
// either. Only this test's namespace is counted.
func TestZeroWritesAtSteadyState(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	pod := newPod(ns, "steady")
	g.Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	setPodReady(g, pod, corev1.ConditionTrue, "", "")
	present := newFriendSeeker(ns, "present", "steady")
	absent := newFriendSeeker(ns, "absent", "nobody")
	g.Expect(k8sClient.Create(ctx, present)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, absent)).To(Succeed())
	expectFriend(g, client.ObjectKeyFromObject(present), true, metav1.ConditionTrue, metav1.ConditionTrue, metav1.ConditionTrue)
	expectFriend(g, client.ObjectKeyFromObject(absent), false, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse)

	// Events are sent asynchronously: wait for the last one before counting.
	expectEvent(g, ns, present.Name, eventFriendFound)
	keys := testutil.Keys(present, absent)

	mine := writes.In(testutil.InNamespace(ns))
	g.Expect(mine.Total()).NotTo(BeZero(), "the counter sees the manager's writes in %s", ns)
	g.Eventually(mine.Drain).WithPolling(time.Second).Should(BeZero(), "the manager settles")
	mark := suite.Reconciles.Mark()
	g.Expect(testutil.Nudge(ctx, k8sClient, present)).To(Succeed())
	g.Expect(testutil.Nudge(ctx, k8sClient, absent)).To(Succeed())
	suite.ExpectQuiet(g, mine, mark, myCustomResourceController, keys...)

	// A fresh manager reconciles every object of every test once: still no
	// write for this test's.
	stopManager()
	g.Expect(startManager()).To(Succeed())
	suite.ExpectQuiet(g, writes.In(testutil.InNamespace(ns)), nil, myCustomResourceController, keys...)
	t.Logf("restarted manager: %d reconciles of any MyCustomResource, this test's %d included",
		suite.Reconciles.Total(myCustomResourceController), len(keys))

	// The fresh manager is alive: it sees the friend go.
	deletePodNow(g, pod)
	expectFriend(g, client.ObjectKeyFromObject(present), false, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse)
}

// TestPodWatchStartsWithTheFirstResource: a manager with no
// MyCustomResource to serve opens no Pod watch (every Pod event of the
// cluster would cost it decoding and the API server a watcher); the first
// reconcile opens one, once, and a friend Pod created afterwards is seen
// through it. The manager sees only this test's namespace, so the other
// tests' objects start nothing.
func TestPodWatchStartsWithTheFirstResource(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	informers := &testutil.InformerLog{}
	stopManager()
	g.Expect(startManager(func(o *ctrl.Options) {
		o.Cache.DefaultNamespaces = map[string]cache.Config{ns: {}}
		o.Cache.NewInformer = informers.NewInformer
	})).To(Succeed())
	t.Cleanup(func() {
		stopManager()
		if err := startManager(); err != nil {
			t.Fatalf("restarting the default manager: %v", err)
		}
	})

	// Its workers run once every watch it was built with has synced: a Pod
	// watch started with the manager would have its informer by then.
	g.Eventually(func() bool { return suite.Reconciles.WorkersStarted(myCustomResourceController) }).Should(BeTrue())
	g.Expect(informers.Kinds()).To(ContainElement("MyCustomResource"))
	g.Expect(informers.Kinds()).NotTo(ContainElement("Pod"))

	cr := newFriendSeeker(ns, "first", "late")
	key := client.ObjectKeyFromObject(cr)
	g.Expect(k8sClient.Create(ctx, cr)).To(Succeed())
	expectFriend(g, key, false, metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse)
	g.Expect(informers.Kinds()).To(ContainElement("Pod"), "the first reconcile starts the Pod watch")

	// Only this manager runs, and nothing else changes the resource: the
	// Pod's event is what reconciles it again.
	g.Expect(k8sClient.Create(ctx, newPod(ns, "late"))).To(Succeed())
	expectFriend(g, key, true, metav1.ConditionTrue, metav1.ConditionUnknown, metav1.ConditionUnknown)

	second := newFriendSeeker(ns, "second", "late")
	g.Expect(k8sClient.Create(ctx, second)).To(Succeed())
	expectFriend(g, client.ObjectKeyFromObject(second), true, metav1.ConditionTrue, metav1.ConditionUnknown, metav1.ConditionUnknown)
	pods := 0
	for _, kind := range informers.Kinds() {
		if kind == "Pod" {
			pods++
		}
	}
	g.Expect(pods).To(Equal(1), "one Pod informer, whatever reads or watches Pods: %v", informers.Kinds())
}
