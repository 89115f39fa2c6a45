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
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// forgePod creates, as a user who may create Pods in sts's namespace could,
// a Pod that looks like instance ordinal of sts: its name, the template's
// labels and spec, and a controller owner reference naming the StatefulSet
// by kind and name, but not its UID (the user cannot make the StatefulSet
// controller create it). It is Ready.
func forgePod(g *WithT, sts *appsv1.StatefulSet, ordinal int) *corev1.Pod {
	name := fmt.Sprintf("%s-%d", sts.Name, ordinal)
	labels := maps.Clone(sts.Spec.Template.Labels)
	labels["statefulset.kubernetes.io/pod-name"] = name
	ref := metav1.NewControllerRef(sts, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))
	ref.UID, ref.BlockOwnerDeletion = types.UID("00000000-0000-0000-0000-000000000000"), nil
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: sts.Namespace, Labels: labels, Annotations: sts.Spec.Template.Annotations,
			OwnerReferences: []metav1.OwnerReference{*ref},
		},
		Spec: *sts.Spec.Template.Spec.DeepCopy(),
	}
	g.Expect(k8sClient.Create(context.Background(), pod)).To(Succeed())
	setReady(g, pod.Namespace, pod.Name, true)
	return pod
}

// TestGuestbookNeverElectsAForgedPod: a Ready Pod named as an instance,
// labelled as one and whose owner reference names the StatefulSet, but
// with another UID than the live StatefulSet's, is never elected active,
// never relabelled, and not counted; the real instance is.
func TestGuestbookNeverElectsAForgedPod(t *testing.T) {
	g := newG(t)
	ns := testutil.Namespace(t, k8sClient)
	gb := newGuestbook("gb-forge", ns, 2, "forge-conf")
	createGuestbook(t, g, gb)
	sts := waitForStatefulSet(g, ns, gb.Name)
	mostActives := watchMostActives(t, g, ns, gb.Name)
	createPods(g, sts, 0)
	forged := forgePod(g, sts, 1)

	expectForgedIgnored := func(g Gomega, active string) {
		g.Expect(podRoles(g, ns, gb.Name)).To(HaveKeyWithValue(forged.Name, ""), "the forged Pod is not relabelled")
		got := getGuestbook(g, gb.Name)
		g.Expect(got.Status.Active).To(Equal(active))
		g.Expect(got.Status.Standby).NotTo(ContainElement(forged.Name))
		if active == "" {
			g.Expect(got.Status.ReadyReplicas).To(BeZero(), "the forged Pod is not counted")
		} else {
			g.Expect(got.Status.ReadyReplicas).To(Equal(int32(1)), "the forged Pod is not counted")
		}
	}
	// The only real instance is not ready: none is active, although the
	// forged Pod is Ready. A reconcile that started once the forged Pod
	// (Ready) existed is seen first, so the window below cannot pass on a
	// status computed before it.
	mark := suite.Reconciles.Mark()
	g.Expect(testutil.Nudge(context.Background(), k8sClient, gb)).To(Succeed())
	suite.ExpectReconciled(g, mark, guestbookController, client.ObjectKeyFromObject(gb))
	g.Eventually(func(g Gomega) {
		g.Expect(podRoles(g, ns, gb.Name)).To(HaveKeyWithValue("gb-forge-0", RoleStandby))
		expectForgedIgnored(g, "")
		g.Expect(condition(g, gb.Name, webappv1.ConditionAvailable).Reason).To(Equal(webappv1.ReasonNoReadyInstance))
	}).Should(Succeed())
	g.Consistently(func(g Gomega) { expectForgedIgnored(g, "") }).Should(Succeed())

	// The real instance becomes ready: it is the one elected.
	setReady(g, ns, "gb-forge-0", true)
	g.Eventually(func(g Gomega) {
		g.Expect(podRoles(g, ns, gb.Name)).To(HaveKeyWithValue("gb-forge-0", RoleActive))
		expectForgedIgnored(g, "gb-forge-0")
	}).Should(Succeed())
	g.Consistently(func(g Gomega) { expectForgedIgnored(g, "gb-forge-0") }).Should(Succeed())
	g.Expect(mostActives()).To(Equal(1))
}

// TestGuestbookInASystemNamespaceIsStalled: a Guestbook stored in a kube-*
// namespace the settings do not list (the admission webhook refuses it;
// this suite runs none, as a Guestbook stored before the rule or with the
// webhooks off) gets nothing made there and is Stalled, the reason and
// message saying which field allows it.
func TestGuestbookInASystemNamespaceIsStalled(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	gb := newGuestbook("gb-system", metav1.NamespaceSystem, 1, "system-conf")
	createGuestbook(t, g, gb)

	g.Eventually(func(g Gomega) {
		for _, ct := range []string{webappv1.ConditionReady, webappv1.ConditionAvailable, webappv1.ConditionStalled} {
			c := condition(g, gb.Name, ct)
			g.Expect(c.Reason).To(Equal(webappv1.ReasonSystemNamespaceNotListed), ct)
		}
		g.Expect(condition(g, gb.Name, webappv1.ConditionReady).Status).To(Equal(metav1.ConditionFalse))
		g.Expect(condition(g, gb.Name, webappv1.ConditionStalled).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(condition(g, gb.Name, webappv1.ConditionReady).Message).To(
			ContainSubstring("lists it in spec.guestbookSystemNamespaces of the OperatorConfiguration"))
	}).Should(Succeed())

	key := client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: gb.Name}
	cmKey := client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: gb.Spec.ConfigMapName}
	g.Consistently(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, key, &appsv1.StatefulSet{}))).To(BeTrue(), "no StatefulSet")
		g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, key, &corev1.Service{}))).To(BeTrue(), "no Service")
		g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, cmKey, &corev1.ConfigMap{}))).To(BeTrue(), "no ConfigMap")
	}).Should(Succeed())
}
