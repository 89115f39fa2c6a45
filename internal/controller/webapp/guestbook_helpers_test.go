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

package webapp

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// newG returns a Gomega for an envtest test, with timeouts fit for a loaded
// two-core machine.
func newG(t *testing.T) *WithT {
	g := NewWithT(t)
	g.SetDefaultEventuallyTimeout(30 * time.Second)
	g.SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	g.SetDefaultConsistentlyDuration(2 * time.Second)
	g.SetDefaultConsistentlyPollingInterval(100 * time.Millisecond)
	return g
}

func newGuestbook(name, namespace string, size int32, configMap string) *webappv1.Guestbook {
	return &webappv1.Guestbook{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: webappv1.GuestbookSpec{
			Size:          size,
			ConfigMapName: configMap,
			Type:          webappv1.AliasPhone,
			Namespace:     namespace,
		},
	}
}

// createGuestbook creates gb and deletes it when the test ends (envtest
// runs no garbage collector: its children stay, which harms no other test).
func createGuestbook(t *testing.T, g *WithT, gb *webappv1.Guestbook) {
	t.Helper()
	g.Expect(k8sClient.Create(context.Background(), gb)).To(Succeed())
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), gb) })
}

func getGuestbook(g Gomega, name string) *webappv1.Guestbook {
	gb := &webappv1.Guestbook{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Name: name}, gb)).To(Succeed())
	return gb
}

// condition returns the condition of the Guestbook name, or an empty one.
func condition(g Gomega, name, conditionType string) metav1.Condition {
	gb := getGuestbook(g, name)
	if c := meta.FindStatusCondition(gb.Status.Conditions, conditionType); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// waitForStatefulSet waits for the Guestbook's StatefulSet and then reports
// it rolled out in its status, as the StatefulSet controller (which envtest
// does not run) would once every instance runs the current template.
func waitForStatefulSet(g *WithT, namespace, name string) *appsv1.StatefulSet {
	sts := waitForStatefulSetRollingOut(g, namespace, name)
	markRolledOut(g, sts)
	return sts
}

// waitForStatefulSetRollingOut waits for the Guestbook's StatefulSet and
// leaves its status as the API server made it: nothing rolled out.
func waitForStatefulSetRollingOut(g *WithT, namespace, name string) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{}
	g.Eventually(func() error {
		return k8sClient.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, sts)
	}).Should(Succeed())
	return sts
}

// markRolledOut writes the status the StatefulSet controller writes once
// every instance runs sts's current template.
func markRolledOut(g *WithT, sts *appsv1.StatefulSet) {
	g.Eventually(func() error {
		live := &appsv1.StatefulSet{}
		if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(sts), live); err != nil {
			return err
		}
		replicas := *live.Spec.Replicas
		live.Status = appsv1.StatefulSetStatus{
			ObservedGeneration: live.Generation,
			Replicas:           replicas,
			CurrentReplicas:    replicas,
			UpdatedReplicas:    replicas,
			CurrentRevision:    fmt.Sprintf("%s-%d", live.Name, live.Generation),
			UpdateRevision:     fmt.Sprintf("%s-%d", live.Name, live.Generation),
		}
		return k8sClient.Status().Update(context.Background(), live)
	}).Should(Succeed())
}

// createPods creates the Pods of sts with the given ordinals, as the
// StatefulSet controller (which envtest does not run) would: named
// <sts>-<ordinal>, with the template's labels and spec, controlled by sts.
func createPods(g *WithT, sts *appsv1.StatefulSet, ordinals ...int) {
	for _, ordinal := range ordinals {
		labels := maps.Clone(sts.Spec.Template.Labels)
		labels["statefulset.kubernetes.io/pod-name"] = fmt.Sprintf("%s-%d", sts.Name, ordinal)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name:            fmt.Sprintf("%s-%d", sts.Name, ordinal),
				Namespace:       sts.Namespace,
				Labels:          labels,
				Annotations:     sts.Spec.Template.Annotations,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))},
			},
			Spec: *sts.Spec.Template.Spec.DeepCopy(),
		}
		g.Expect(k8sClient.Create(context.Background(), pod)).To(Succeed())
	}
}

// setReady sets the Ready condition of a Pod through its status, as the
// kubelet would.
func setReady(g *WithT, namespace, name string, ready bool) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	g.Eventually(func() error {
		pod := &corev1.Pod{}
		if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, pod); err != nil {
			return err
		}
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
		return k8sClient.Status().Update(context.Background(), pod)
	}).Should(Succeed())
}

// podRoles returns the role label of every Pod of the Guestbook name.
func podRoles(g Gomega, namespace, name string) map[string]string {
	pods := &corev1.PodList{}
	g.Expect(k8sClient.List(context.Background(), pods, client.InNamespace(namespace), client.MatchingLabels{LabelGuestbook: name})).To(Succeed())
	out := map[string]string{}
	for _, p := range pods.Items {
		out[p.Name] = p.Labels[LabelRole]
	}
	return out
}

// expectRoles waits until the Pods carry the given roles and the status
// names the same active and standby instances.
func expectRoles(g *WithT, namespace, name, active string, standby ...string) {
	want := map[string]string{}
	if active != "" {
		want[active] = RoleActive
	}
	for _, s := range standby {
		want[s] = RoleStandby
	}
	g.Eventually(func(g Gomega) {
		g.Expect(podRoles(g, namespace, name)).To(Equal(want))
		gb := getGuestbook(g, name)
		g.Expect(gb.Status.Active).To(Equal(active))
		if len(standby) == 0 {
			g.Expect(gb.Status.Standby).To(BeEmpty())
		} else {
			g.Expect(gb.Status.Standby).To(Equal(standby))
		}
	}).Should(Succeed())
}

// watchMostActives watches the Pods of the Guestbook name and returns a
// function giving the largest number of them ever labelled active at once.
func watchMostActives(t *testing.T, g *WithT, namespace, name string) func() int {
	wc, err := client.NewWithWatch(suite.Config, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(context.Background(), &corev1.PodList{}, client.InNamespace(namespace), client.MatchingLabels{LabelGuestbook: name})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(w.Stop)
	var mu sync.Mutex
	most := 0
	current := map[string]string{}
	go func() {
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			mu.Lock()
			if ev.Type == watch.Deleted {
				delete(current, pod.Name)
			} else {
				current[pod.Name] = pod.Labels[LabelRole]
			}
			n := 0
			for _, role := range current {
				if role == RoleActive {
					n++
				}
			}
			most = max(most, n)
			mu.Unlock()
		}
	}()
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return most
	}
}

// eventsFor returns the events.k8s.io Events about the Guestbook name (the
// one that exists now, not an earlier one of that name: -count=N) with the
// given reason (a cluster-scoped object's events live in "default").
func eventsFor(g Gomega, name, reason string) []eventsv1.Event {
	uid := getGuestbook(g, name).UID
	list := &eventsv1.EventList{}
	g.Expect(k8sClient.List(context.Background(), list, client.InNamespace(metav1.NamespaceDefault))).To(Succeed())
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == "Guestbook" && e.Regarding.UID == uid && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// expectEmittedOnce expects the Guestbook name to have had one Event of
// reason, emitted once (testutil.ExpectEmissions).
func expectEmittedOnce(g Gomega, name, reason string) {
	testutil.ExpectEmissions(g, suite.Writes, func(g Gomega) []eventsv1.Event { return eventsFor(g, name, reason) },
		testutil.ByReason, map[string]int32{reason: 1})
}
