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
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	webappv1 "sunstrider.cn/operator/api/webapp/v1"
)

// TestGuestbookSystemNamespacesApplyLive: a Guestbook stored in a kube-*
// namespace (no webhook runs here) is Stalled with nothing made there until
// spec.guestbookSystemNamespaces lists the namespace; then, without
// touching the Guestbook, its workload is made.
func TestGuestbookSystemNamespacesApplyLive(t *testing.T) {
	g := newG(t)
	ctx := context.Background()
	resetAtEnd(t)
	expectReady(g, setSpec(g, configv1alpha1.OperatorConfigurationSpec{}), configv1alpha1.ReasonApplied)

	gb := &webappv1.Guestbook{
		ObjectMeta: metav1.ObjectMeta{Name: "gb-kube-public"},
		Spec:       webappv1.GuestbookSpec{Size: 1, ConfigMapName: "public-conf", Namespace: metav1.NamespacePublic},
	}
	g.Expect(k8sClient.Create(ctx, gb)).To(Succeed())
	t.Cleanup(func() { _ = k8sClient.Delete(ctx, gb) })
	ready := func(g Gomega) *metav1.Condition {
		got := &webappv1.Guestbook{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(gb), got)).To(Succeed())
		c := meta.FindStatusCondition(got.Status.Conditions, webappv1.ConditionReady)
		g.Expect(c).NotTo(BeNil())
		return c
	}
	key := client.ObjectKey{Namespace: metav1.NamespacePublic, Name: gb.Name}

	g.Eventually(func(g Gomega) {
		c := ready(g)
		g.Expect(c.Reason).To(Equal(webappv1.ReasonSystemNamespaceNotListed))
		g.Expect(c.Message).To(ContainSubstring("spec.guestbookSystemNamespaces"))
	}).Should(Succeed())
	g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, key, &appsv1.StatefulSet{}))).To(BeTrue(), "nothing made")

	generation := setSpec(g, configv1alpha1.OperatorConfigurationSpec{
		GuestbookSystemNamespaces: []string{metav1.NamespacePublic},
	})
	cfg := expectReady(g, generation, configv1alpha1.ReasonApplied)
	g.Expect(cfg.Status.Effective.GuestbookSystemNamespaces).To(Equal([]string{metav1.NamespacePublic}))
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, key, &appsv1.StatefulSet{})).To(Succeed())
		g.Expect(ready(g).Reason).NotTo(Equal(webappv1.ReasonSystemNamespaceNotListed))
	}).Should(Succeed())
}

// TestGuestbookSystemNamespacesSchema: the list holds kube-* namespace
// names only, at most 16 of them.
func TestGuestbookSystemNamespacesSchema(t *testing.T) {
	many := make([]string, 17)
	for i := range many {
		many[i] = "kube-" + string(rune('a'+i))
	}
	for _, tc := range []struct {
		name       string
		namespaces []string
		path       string
	}{
		{"not a system namespace", []string{"default"}, "spec.guestbookSystemNamespaces[0]"},
		{"the prefix alone", []string{"kube-"}, "spec.guestbookSystemNamespaces[0]"},
		{"not a label", []string{"kube-System"}, "spec.guestbookSystemNamespaces[0]"},
		{"too many", many, "spec.guestbookSystemNamespaces"},
		{"twice", []string{"kube-system", "kube-system"}, "spec.guestbookSystemNamespaces[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newG(t)
			cfg := &configv1alpha1.OperatorConfiguration{ObjectMeta: metav1.ObjectMeta{Name: ConfigurationKey.Name},
				Spec: configv1alpha1.OperatorConfigurationSpec{GuestbookSystemNamespaces: tc.namespaces}}
			err := k8sClient.Create(context.Background(), cfg, client.DryRunAll)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			g.Expect(err.Error()).To(ContainSubstring(tc.path))
		})
	}
}
