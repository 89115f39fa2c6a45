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
// StatefulSet's updates.
const frozenMessage = "StatefulSets of this namespace are frozen for the audit"

// freezeStatefulSet makes the API server refuse (Forbidden) every update of
// the StatefulSet namespace/name, with a ValidatingAdmissionPolicy and its
// binding, and waits until it does. The returned function lifts the
// refusal, and waits until the API server accepts updates again.
func freezeStatefulSet(t *testing.T, g *WithT, namespace, name string) (thaw func()) {
	t.Helper()
	ctx := context.Background()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "freeze-" + namespace},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: new(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"},
							Resources: []string{"statefulsets"}},
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

	// The API server loads policies asynchronously: wait until a dry-run
	// update of the StatefulSet is refused (or accepted, to thaw).
	dryRunUpdate := func() error {
		sts := &appsv1.StatefulSet{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, sts); err != nil {
			return err
		}
		metav1.SetMetaDataAnnotation(&sts.ObjectMeta, "test.sunstrider.cn/probe", "1")
		return k8sClient.Update(ctx, sts, client.DryRunAll)
	}
	g.Eventually(func(g Gomega) {
		err := dryRunUpdate()
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
		g.Expect(err.Error()).To(ContainSubstring(frozenMessage))
	}).Should(Succeed())
	return func() {
		deleteBoth()
		g.Eventually(dryRunUpdate).Should(Succeed())
	}
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
	// One Warning for the refusal, not one per retry.
	g.Eventually(func(g Gomega) {
		g.Expect(eventsFor(g, gb.Name, webappv1.ReasonApplyFailed)).To(HaveLen(1))
	}).Should(Succeed())
	g.Expect(eventsFor(g, gb.Name, webappv1.ReasonApplyFailed)[0].Type).To(Equal(corev1.EventTypeWarning))
}
