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
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "sunstrider.cn/operator/api/webapp/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// frozenMessage is the message of the admission policy that refuses the
// Guestbook's writes.
const frozenMessage = "Writes in this namespace are frozen for the audit"

// refuseWrites makes the API server refuse (Forbidden) the operation op of
// the object name of resource (group/v1) in namespace, with a
// ValidatingAdmissionPolicy and its binding, and waits until probe, a
// dry-run of that write, is refused. The returned function lifts the
// refusal, and waits until probe is accepted.
func refuseWrites(t *testing.T, g *WithT, namespace, group, resource string, op admissionregistrationv1.OperationType,
	name string, probe func() error) (lift func()) {
	t.Helper()
	ctx := context.Background()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "freeze-" + resource + "-" + namespace},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: new(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{op},
						Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"},
							Resources: []string{resource}},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "object.metadata.name != '" + name + "'",
				Message:    frozenMessage,
				Reason:     new(metav1.StatusReasonForbidden),
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	g.Expect(k8sClient.Create(ctx, policy)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, binding)).To(Succeed())
	deleteBoth := func() {
		_ = k8sClient.Delete(ctx, binding)
		_ = k8sClient.Delete(ctx, policy)
	}
	t.Cleanup(deleteBoth)

	// The API server loads policies asynchronously.
	g.Eventually(func(g Gomega) {
		err := probe()
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
		g.Expect(err.Error()).To(ContainSubstring(frozenMessage))
	}).Should(Succeed())
	return func() {
		deleteBoth()
		g.Eventually(probe).Should(Succeed())
	}
}

// freezeStatefulSet makes the API server refuse every update of the
// StatefulSet namespace/name (refuseWrites).
func freezeStatefulSet(t *testing.T, g *WithT, namespace, name string) (thaw func()) {
	t.Helper()
	return refuseWrites(t, g, namespace, "apps", "statefulsets", admissionregistrationv1.Update, name, func() error {
		sts := &appsv1.StatefulSet{}
		if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, sts); err != nil {
			return err
		}
		metav1.SetMetaDataAnnotation(&sts.ObjectMeta, "test.sunstrider.cn/probe", "1")
		return k8sClient.Update(context.Background(), sts, client.DryRunAll)
	})
}

// A refused write of the StatefulSet leaves the running instances served:
// the election still runs on the live StatefulSet's Pods (a failover
// happens), the status reports the refusal (Ready=False ApplyFailed,
// Stalled) beside an Available Guestbook and its current active and
// standby instances. Once the refusal is lifted, the write is made.
func TestGuestbookFailsOverWhileItsStatefulSetWriteIsRefused(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	gb := newGuestbook("gb-refused", ns, 2, "refused-conf")
	createGuestbook(t, g, gb)
	sts := waitForStatefulSet(g, ns, gb.Name)
	createPods(g, sts, 0, 1)
	setReady(g, ns, "gb-refused-0", true)
	setReady(g, ns, "gb-refused-1", true)
	expectRoles(g, ns, gb.Name, "gb-refused-0", "gb-refused-1")
	g.Eventually(func(g Gomega) {
		g.Expect(condition(g, gb.Name, webappv1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())

	thaw := freezeStatefulSet(t, g, ns, gb.Name)
	// A new alias: the operator must update the StatefulSet's instances.
	patch := client.MergeFrom(gb.DeepCopy())
	gb.Spec.Type = webappv1.AliasAddress
	g.Expect(k8sClient.Patch(ctx, gb, patch)).To(Succeed())

	expectRefusedButServing := func(active string, readyReplicas int32, standby ...string) {
		t.Helper()
		expectRoles(g, ns, gb.Name, active, standby...)
		g.Eventually(func(g Gomega) {
			got := getGuestbook(g, gb.Name)
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
			g.Expect(got.Status.ReadyReplicas).To(Equal(readyReplicas))
			ready := meta.FindStatusCondition(got.Status.Conditions, webappv1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Reason).To(Equal(webappv1.ReasonApplyFailed))
			g.Expect(ready.Message).To(ContainSubstring(frozenMessage))
			g.Expect(ready.ObservedGeneration).To(Equal(got.Generation))
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, webappv1.ConditionStalled)).To(BeTrue())
			available := meta.FindStatusCondition(got.Status.Conditions, webappv1.ConditionAvailable)
			g.Expect(available).NotTo(BeNil())
			g.Expect(available.Status).To(Equal(metav1.ConditionTrue), "an active instance serves: %s", available.Message)
			g.Expect(available.Reason).To(Equal(webappv1.ReasonActiveInstanceServing))
			g.Expect(available.Message).To(ContainSubstring(active))
		}).Should(Succeed())
	}
	expectRefusedButServing("gb-refused-0", 2, "gb-refused-1")
	// The refusal is real: the StatefulSet still runs the old alias.
	live := &appsv1.StatefulSet{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(sts), live)).To(Succeed())
	g.Expect(live.Spec.Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: EnvAlias, Value: "Phone"}))

	// The active instance stops being ready while the refusal lasts: the
	// standby takes over.
	setReady(g, ns, "gb-refused-0", false)
	expectRefusedButServing("gb-refused-1", 1, "gb-refused-0")

	// The refusal is lifted: the next reconcile (here the Guestbook's
	// event) writes the StatefulSet, and the refusal is no longer reported.
	thaw()
	g.Expect(testutil.Nudge(ctx, k8sClient, gb)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(sts), live)).To(Succeed())
		g.Expect(live.Spec.Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: EnvAlias, Value: "Address"}))
		g.Expect(condition(g, gb.Name, webappv1.ConditionReady).Reason).NotTo(Equal(webappv1.ReasonApplyFailed))
	}).Should(Succeed())
	// One Warning for the refusal, not one per retry: one Event, no series
	// (a retry's repeat on an unchanged Guestbook would be one).
	expectEmittedOnce(g, gb.Name, webappv1.ReasonApplyFailed)
	g.Expect(eventsFor(g, gb.Name, webappv1.ReasonApplyFailed)[0].Type).To(Equal(corev1.EventTypeWarning))
}

// A refused creation of the default ConfigMap is reported (Ready=False
// ApplyFailed naming the ConfigMap), and no StatefulSet is made without
// it: its instances would not start. Once the refusal is lifted, both are
// made.
func TestGuestbookMakesNoStatefulSetWhileItsConfigMapIsRefused(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	lift := refuseWrites(t, g, ns, "", "configmaps", admissionregistrationv1.Create, "refused-cm", func() error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "refused-cm"}}
		if err := k8sClient.Create(ctx, cm, client.DryRunAll); !apierrors.IsAlreadyExists(err) {
			return err
		}
		// Made already: the operator's retry came first once lifted.
		return nil
	})
	gb := newGuestbook("gb-no-conf", ns, 1, "refused-cm")
	createGuestbook(t, g, gb)

	g.Eventually(func(g Gomega) {
		got := getGuestbook(g, gb.Name)
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		ready := condition(g, gb.Name, webappv1.ConditionReady)
		g.Expect(ready.Reason).To(Equal(webappv1.ReasonApplyFailed))
		g.Expect(ready.Message).To(HavePrefix("The API server refused the ConfigMap"))
		g.Expect(ready.Message).To(ContainSubstring(frozenMessage))
		g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, webappv1.ConditionStalled)).To(BeTrue())
		g.Expect(condition(g, gb.Name, webappv1.ConditionAvailable).Reason).To(Equal(webappv1.ReasonNoReadyInstance))
	}).Should(Succeed())
	// The reconcile that reported the refusal (observed just above) made no
	// StatefulSet. Its backoff retries are not proven inside this window:
	// by now they come tens of seconds apart.
	g.Consistently(func(g Gomega) {
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: gb.Name}, &appsv1.StatefulSet{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
	}).Should(Succeed())

	lift()
	g.Expect(testutil.Nudge(ctx, k8sClient, gb)).To(Succeed())
	waitForStatefulSetRollingOut(g, ns, gb.Name)
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "refused-cm"}, &corev1.ConfigMap{})).To(Succeed())
}

// A refused relabelling of a Pod (the role label, a patch the operator
// makes on a Pod it does not own) goes through the one outcome policy:
// Ready=False ApplyFailed naming the Pod, Stalled, and no instance is
// promoted while a demotion is refused. Once lifted, the failover
// completes.
func TestGuestbookReportsARefusedRelabelling(t *testing.T) {
	g := newG(t)
	ns := testutil.Namespace(t, k8sClient)
	gb := newGuestbook("gb-relabel", ns, 2, "relabel-conf")
	createGuestbook(t, g, gb)
	sts := waitForStatefulSet(g, ns, gb.Name)
	createPods(g, sts, 0, 1)
	setReady(g, ns, "gb-relabel-0", true)
	setReady(g, ns, "gb-relabel-1", true)
	expectRoles(g, ns, gb.Name, "gb-relabel-0", "gb-relabel-1")

	lift := refuseWrites(t, g, ns, "", "pods", admissionregistrationv1.Update, "gb-relabel-0", func() error {
		pod := &corev1.Pod{}
		if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "gb-relabel-0"}, pod); err != nil {
			return err
		}
		metav1.SetMetaDataAnnotation(&pod.ObjectMeta, "test.sunstrider.cn/probe", "1")
		return k8sClient.Update(context.Background(), pod, client.DryRunAll)
	})
	// The active instance stops being ready: demoting it is refused.
	setReady(g, ns, "gb-relabel-0", false)
	g.Eventually(func(g Gomega) {
		got := getGuestbook(g, gb.Name)
		ready := meta.FindStatusCondition(got.Status.Conditions, webappv1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Reason).To(Equal(webappv1.ReasonApplyFailed))
		g.Expect(ready.Message).To(ContainSubstring("Pod"))
		g.Expect(ready.Message).To(ContainSubstring(frozenMessage))
		g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, webappv1.ConditionStalled)).To(BeTrue())
	}).Should(Succeed())
	g.Expect(podRoles(g, ns, gb.Name)).To(HaveKeyWithValue("gb-relabel-1", RoleStandby),
		"nothing is promoted while a demotion is refused: never two active")

	lift()
	expectRoles(g, ns, gb.Name, "gb-relabel-1", "gb-relabel-0")
	g.Eventually(func(g Gomega) {
		g.Expect(condition(g, gb.Name, webappv1.ConditionReady).Reason).NotTo(Equal(webappv1.ReasonApplyFailed))
	}).Should(Succeed())
}
