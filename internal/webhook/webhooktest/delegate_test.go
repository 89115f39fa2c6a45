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

package webhooktest

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
	"sunstrider.cn/operator/internal/access"
)

// operatorConfiguration returns the OperatorConfiguration as stored,
// creating it (as the suite's administrator) with an empty spec when
// absent, and deletes it when the test ends.
func operatorConfiguration(t *testing.T, g Gomega) *configv1alpha1.OperatorConfiguration {
	t.Helper()
	cfg := &configv1alpha1.OperatorConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configv1alpha1.ConfigurationName}}
	if err := k8sClient.Create(context.Background(), cfg); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating the OperatorConfiguration: %v", err)
	}
	t.Cleanup(func() {
		_ = k8sClient.Delete(context.Background(), &configv1alpha1.OperatorConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: configv1alpha1.ConfigurationName}})
	})
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(cfg), cfg)).To(Succeed())
	return cfg
}

// A user with the kind's editor role (what OLM folds into the built-in
// edit role) may change the OperatorConfiguration, but not its
// childAccess: that needs delegate, which the refusal names with the
// field and who may grant it. Other fields stay editable, and delegate
// alone lets the change through.
func TestChildAccessChangeNeedsDelegate(t *testing.T) {
	g := NewWithT(t)
	bind(t, "dave", "", clusterRoleFromFile(t, "config_operatorconfiguration_editor_role.yaml"))
	dave := clientAs(t, "dave")
	cfg := operatorConfiguration(t, g)

	g.Eventually(func(g Gomega) {
		changed := cfg.DeepCopy()
		changed.Spec.ChildAccess = configv1alpha1.ChildAccessDelegated
		err := dave.Update(context.Background(), changed)
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want Forbidden, got %v", err)
		g.Expect(err.Error()).To(ContainSubstring(`user "dave" may not change spec.childAccess from Requester to Delegated: ` +
			"that needs the verb delegate on operatorconfigurations.config.sunstrider.cn"))
		g.Expect(err.Error()).To(ContainSubstring("a cluster administrator may change it"))
	}).WithTimeout(10 * time.Second).Should(Succeed())
	stored := &configv1alpha1.OperatorConfiguration{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(cfg), stored)).To(Succeed())
	g.Expect(stored.Spec.ChildAccess).To(BeEmpty(), "not stored")

	// Another field: the webhook is not even called (matchConditions).
	other := stored.DeepCopy()
	other.Spec.LogLevel = configv1alpha1.LogLevelDebug
	g.Expect(dave.Update(context.Background(), other)).To(Succeed())
	// Spelling the default out changes nothing.
	other.Spec.ChildAccess = configv1alpha1.ChildAccessRequester
	g.Expect(dave.Update(context.Background(), other)).To(Succeed())

	bind(t, "dave", "", clusterRole(t, "delegate", rbacv1.PolicyRule{
		APIGroups: []string{configv1alpha1.GroupVersion.Group}, Resources: []string{"operatorconfigurations"},
		Verbs: []string{access.DelegateVerb},
	}))
	g.Eventually(func() error {
		current := &configv1alpha1.OperatorConfiguration{}
		if err := dave.Get(context.Background(), client.ObjectKeyFromObject(cfg), current); err != nil {
			return err
		}
		current.Spec.ChildAccess = configv1alpha1.ChildAccessDelegated
		return dave.Update(context.Background(), current)
	}).WithTimeout(10 * time.Second).Should(Succeed())
}

// Creating the configuration with Delegated is a change from the default:
// refused without delegate, as an update is.
func TestCreateWithDelegatedNeedsDelegate(t *testing.T) {
	g := NewWithT(t)
	bind(t, "erin", "", clusterRoleFromFile(t, "config_operatorconfiguration_editor_role.yaml"))
	erin := clientAs(t, "erin")
	t.Cleanup(func() {
		_ = k8sClient.Delete(context.Background(), &configv1alpha1.OperatorConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: configv1alpha1.ConfigurationName}})
	})
	g.Eventually(func(g Gomega) {
		err := k8sClient.Delete(context.Background(), &configv1alpha1.OperatorConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: configv1alpha1.ConfigurationName}})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		cfg := &configv1alpha1.OperatorConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configv1alpha1.ConfigurationName},
			Spec: configv1alpha1.OperatorConfigurationSpec{ChildAccess: configv1alpha1.ChildAccessDelegated}}
		expectForbidden(g, erin.Create(context.Background(), cfg), cfg,
			`user "erin" may not change spec.childAccess from Requester to Delegated`)
	}).WithTimeout(10 * time.Second).Should(Succeed())
}

// Unenforced is the status' word: the API server refuses it in the spec.
func TestUnenforcedIsRefusedInTheSpec(t *testing.T) {
	g := NewWithT(t)
	cfg := &configv1alpha1.OperatorConfiguration{ObjectMeta: metav1.ObjectMeta{Name: configv1alpha1.ConfigurationName},
		Spec: configv1alpha1.OperatorConfigurationSpec{ChildAccess: configv1alpha1.ChildAccessUnenforced}}
	err := k8sClient.Create(context.Background(), cfg)
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), cfg) })
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.childAccess must be Requester or Delegated"))
}
