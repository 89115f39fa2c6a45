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

package config

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	"sunstrider.cn/operator/internal/access"
	"sunstrider.cn/operator/internal/metrics"
	"sunstrider.cn/operator/internal/metrics/metricstest"
)

// checkingWebhooksName names the suite's ValidatingWebhookConfiguration.
const checkingWebhooksName = "suite-checking-webhooks"

// checkingWebhooks registers webhooks of the names the access checks need
// (access.CheckingWebhooks). Nothing serves them here: they select a
// resource no one writes, and fail open.
func checkingWebhooks() *admissionregistrationv1.ValidatingWebhookConfiguration {
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: checkingWebhooksName}}
	for _, name := range access.CheckingWebhooks {
		vwc.Webhooks = append(vwc.Webhooks, admissionregistrationv1.ValidatingWebhook{
			Name:                    name,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: new("https://127.0.0.1:1/never")},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{"never.sunstrider.test"}, APIVersions: []string{"v1"}, Resources: []string{"nothing"}}}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		})
	}
	return vwc
}

// expectAccessChecks waits until the configuration reports mode in effect
// with AccessChecks of status, and returns that condition.
func expectAccessChecks(g Gomega, mode configv1alpha1.ChildAccess, status metav1.ConditionStatus) *metav1.Condition {
	var c *metav1.Condition
	g.Eventually(func(g Gomega) {
		cfg := getConfig(g)
		g.Expect(cfg.Status.ObservedGeneration).To(Equal(cfg.Generation))
		g.Expect(cfg.Status.Effective.ChildAccess).To(Equal(mode))
		c = meta.FindStatusCondition(cfg.Status.Conditions, configv1alpha1.ConditionAccessChecks)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(status))
		ready := meta.FindStatusCondition(cfg.Status.Conditions, configv1alpha1.ConditionReady)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "running without checks is a choice, not a failure")
	}).Should(Succeed())
	return c
}

// Without its webhooks registered (make install, then make run), nothing
// checks a requester's rights: the configuration says Unenforced rather
// than the Requester the spec asks for, with AccessChecks=False telling
// how to register them, a Warning event and the gauge at 0. Registered
// again, it says Requester. The settings in effect keep the spec's mode,
// for the webhooks to apply once they are called.
func TestUnenforcedWhenTheWebhooksAreNotRegistered(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	resetAtEnd(t)
	collector := metrics.NewConfigurationCollector(k8sClient)
	crmetrics.Registry.MustRegister(collector)
	t.Cleanup(func() { crmetrics.Registry.Unregister(collector) })
	enforced := func(g Gomega) float64 {
		v, err := metricstest.Value(crmetrics.Registry, metrics.AccessChecksEnforced)
		g.Expect(err).NotTo(HaveOccurred())
		return v
	}

	expectReady(g, setSpec(g, configv1alpha1.OperatorConfigurationSpec{}), configv1alpha1.ReasonApplied)
	c := expectAccessChecks(g, configv1alpha1.ChildAccessRequester, metav1.ConditionTrue)
	g.Expect(c.Reason).To(Equal(configv1alpha1.ReasonEnforced))
	g.Eventually(enforced).Should(Equal(1.0))

	g.Expect(k8sClient.Delete(ctx, checkingWebhooks())).To(Succeed())
	t.Cleanup(func() {
		g := newG(t)
		g.Expect(client.IgnoreAlreadyExists(k8sClient.Create(context.Background(), checkingWebhooks()))).To(Succeed())
		expectAccessChecks(g, configv1alpha1.ChildAccessRequester, metav1.ConditionTrue)
	})
	c = expectAccessChecks(g, configv1alpha1.ChildAccessUnenforced, metav1.ConditionFalse)
	g.Expect(c.Reason).To(Equal(configv1alpha1.ReasonUnenforced))
	g.Expect(c.Message).To(ContainSubstring("no ValidatingWebhookConfiguration registers the webhooks vapplication-v1.sunstrider.cn"))
	g.Expect(c.Message).To(ContainSubstring("make deploy, the Helm chart or the OLM bundle registers them"))
	g.Expect(holder.Load().ChildAccess).To(Equal(configv1alpha1.ChildAccessRequester), "the spec's mode, for when they run")
	g.Eventually(enforced).Should(Equal(0.0))
	g.Eventually(func(g Gomega) {
		list := &eventsv1.EventList{}
		g.Expect(k8sClient.List(ctx, list)).To(Succeed())
		var warnings []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "OperatorConfiguration" && e.Type == corev1.EventTypeWarning &&
				e.Reason == configv1alpha1.ReasonUnenforced {
				warnings = append(warnings, e.Note)
			}
		}
		g.Expect(warnings).To(ContainElement(ContainSubstring("vapplication-v1.sunstrider.cn")))
	}).Should(Succeed())

	g.Expect(k8sClient.Create(ctx, checkingWebhooks())).To(Succeed())
	expectAccessChecks(g, configv1alpha1.ChildAccessRequester, metav1.ConditionTrue)
	g.Eventually(enforced).Should(Equal(1.0))
}
