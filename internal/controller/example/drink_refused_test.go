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

package example

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	examplev1 "sunstrider.cn/operator/api/example/v1"
	controllers "sunstrider.cn/operator/internal/controller"
	"sunstrider.cn/operator/internal/testutil"
)

// frozenMessage is the API server's answer to a write of a frozen ConfigMap.
const frozenMessage = "ConfigMaps of this namespace are frozen for the audit"

// freezeConfigMap makes the API server refuse (Forbidden) every update of
// the ConfigMap namespace/name, with a ValidatingAdmissionPolicy and its
// binding, and waits until it does. The returned function lifts the
// refusal, and waits until the API server accepts updates again.
func freezeConfigMap(t *testing.T, g *WithT, namespace, name string) (thaw func()) {
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
						Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
							Resources: []string{"configmaps"}},
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
	// update of the ConfigMap is refused (or accepted, to thaw).
	dryRunUpdate := func() error {
		cm := &corev1.ConfigMap{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm); err != nil {
			return err
		}
		metav1.SetMetaDataAnnotation(&cm.ObjectMeta, "test.sunstrider.cn/probe", "1")
		return k8sClient.Update(ctx, cm, client.DryRunAll)
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

// A write of the ConfigMap the API server refuses (Forbidden, by an
// admission policy) makes the Drink Ready=False ApplyFailed and Stalled,
// with the API server's message and one Warning event; the ConfigMap
// already there is kept and still reported. The refusal is retried with
// backoff: once it is lifted the ConfigMap is written with no change of
// the Drink.
func TestDrinkRefusedConfigMapIsStalledThenRetried(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	ns := testutil.Namespace(t, k8sClient)
	drink := newDrink(ns, testDrink, "morning", "coffee")
	key := client.ObjectKeyFromObject(drink)
	g.Expect(k8sClient.Create(ctx, drink)).To(Succeed())
	expectReady(g, key, metav1.ConditionTrue, examplev1.ReasonSynced)
	before := expectConfigMap(g, drink, "morning", "coffee")

	thaw := freezeConfigMap(t, g, ns, drink.Name)
	patch := client.MergeFrom(drink.DeepCopy())
	drink.Spec.Drink = "tea"
	g.Expect(k8sClient.Patch(ctx, drink, patch)).To(Succeed())

	got := expectReady(g, key, metav1.ConditionFalse, examplev1.ReasonApplyFailed)
	g.Expect(got.Status.ConfigMapName).To(Equal(testDrink), "the running ConfigMap is still reported")
	stalled := meta.FindStatusCondition(got.Status.Conditions, examplev1.ConditionStalled)
	g.Expect(stalled).NotTo(BeNil())
	g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(stalled.Reason).To(Equal(examplev1.ReasonApplyFailed))
	g.Expect(stalled.Message).To(ContainSubstring("The API server refused the ConfigMap"))
	g.Expect(stalled.Message).To(ContainSubstring(frozenMessage))
	g.Expect(meta.FindStatusCondition(got.Status.Conditions, examplev1.ConditionReconciling)).To(BeNil())
	expectEvent(g, ns, drink.Name, examplev1.ReasonApplyFailed)
	var live corev1.ConfigMap
	g.Expect(k8sClient.Get(ctx, key, &live)).To(Succeed())
	g.Expect(live.ResourceVersion).To(Equal(before.ResourceVersion), "the refused write changed nothing")

	// Lifted: the retry writes the new spec.
	thaw()
	expectConfigMap(g, drink, "morning", "tea")
	got = expectReady(g, key, metav1.ConditionTrue, examplev1.ReasonSynced)
	g.Expect(meta.FindStatusCondition(got.Status.Conditions, examplev1.ConditionStalled)).To(BeNil())
	g.Expect(got.Generation).To(Equal(int64(2)), "the Drink was not changed again")
	// One Warning for the refusal, not one per retry, and the shared Normal
	// event for the update made at last, once each (a retry's repeat on an
	// unchanged Drink would be a series, not a second Event).
	expectEmitted(g, ns, drink.Name, map[string]int32{examplev1.ReasonApplyFailed: 1, controllers.ReasonUpdated: 1})
}
